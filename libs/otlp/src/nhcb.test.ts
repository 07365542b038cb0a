import { test } from 'node:test';
import assert from 'node:assert/strict';
import { customBucketSpans, customBucketsHistogram } from './nhcb.ts';

test('custom bucket spans: non-empty buckets and the last one, gaps of up to two empty buckets kept inside a span', () => {
  // telemetrygen's first histogram sample: 16 buckets for 15 bounds, the last (+Inf) empty.
  assert.deepEqual(customBucketSpans([0, 0, 1, 0, 0, 0, 3, 4, 1, 1, 0, 0, 0, 0, 0, 0]), {
    spans: [
      { offset: 2, length: 1 },
      { offset: 3, length: 4 },
      { offset: 5, length: 1 },
    ],
    counts: [1, 3, 4, 1, 1, 0],
  });
  assert.deepEqual(customBucketSpans([1, 0, 0, 5]), { spans: [{ offset: 0, length: 4 }], counts: [1, 0, 0, 5] });
  assert.deepEqual(customBucketSpans([1, 0, 0, 0, 5, 7]), {
    spans: [
      { offset: 0, length: 1 },
      { offset: 3, length: 2 },
    ],
    counts: [1, 5, 7],
  });
  assert.deepEqual(customBucketSpans([1, 0]), { spans: [{ offset: 0, length: 2 }], counts: [1, 0] });
  assert.deepEqual(customBucketSpans([0, 0, 0]), { spans: [], counts: [] }, 'no observation: no buckets at all');
  assert.deepEqual(customBucketSpans([]), { spans: [], counts: [] });
});

test('an explicit-bucket point as NHCB: bounds are the custom values, a delta point is a gauge histogram, a missing sum is 0', () => {
  const p = {
    attributes: [],
    startTimeUnixNano: 0n,
    timeUnixNano: 0n,
    count: 6,
    sum: undefined,
    bucketCounts: [2, 0, 4],
    explicitBounds: [0.5, 1],
    exemplars: [],
    flags: 0,
  };
  assert.deepEqual(customBucketsHistogram(p, false), {
    counterResetHint: 'unknown',
    schema: -53,
    zeroThreshold: 0,
    zeroCount: 0,
    count: 6,
    sum: 0,
    positiveSpans: [{ offset: 0, length: 3 }],
    positiveBuckets: [2, 0, 4],
    negativeSpans: [],
    negativeBuckets: [],
    customValues: [0.5, 1],
  });
  assert.equal(customBucketsHistogram(p, true).counterResetHint, 'gauge');
  assert.ok(Number.isNaN(customBucketsHistogram({ ...p, sum: 3, flags: 1 }, false).sum), 'no recorded value: a stale marker');
});
