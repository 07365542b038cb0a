// Created-timestamp zero samples in the head, by Prometheus' rules (tsdb/head_append.go,
// AppendSTZeroSample): a zero at the start time before a sample, only when the start time is
// set, before the sample and in order; an out-of-order or duplicate zero is dropped silently.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Labels, NativeHistogram } from '@strata/model';
import { Head, emptyAppendStats, type AppendStats } from '../index.ts';

const T = 1_700_000_000_000;
const CT = T - 30_000;
const counter: Labels = [
  { name: '__name__', value: 'requests_total' },
  { name: 'job', value: 'api' },
];

function stored(head: Head): [number, number][] {
  const [s] = head.select([], -Infinity, Infinity);
  return [...s.timestamps].map((t, i) => [t, s.values[i]]);
}

function push(head: Head, ts: number[], vs: number[], starts: number[], stats = emptyAppendStats()): AppendStats {
  head.append(counter, Float64Array.from(ts), Float64Array.from(vs), stats, undefined, Float64Array.from(starts));
  return stats;
}

const quiet = (s: AppendStats) => [s.outOfOrder, s.duplicates, s.conflicting, s.outOfBounds];

test('a zero at the start time goes before the first sample; later samples with the same start time add nothing, silently', () => {
  const head = new Head({ chunkRangeMs: 7_200_000 });
  const first = push(head, [T, T + 15_000], [3, 5], [CT, CT]);
  assert.equal(first.appended, 3);
  assert.deepEqual(quiet(first), [0, 0, 0, 0]);
  // The next scrape of a long-lived counter carries the same start time: out of order, dropped without a count.
  const next = push(head, [T + 30_000], [8], [CT]);
  assert.equal(next.appended, 1);
  assert.deepEqual(quiet(next), [0, 0, 0, 0], 'an out-of-order zero is not an out-of-order sample');
  assert.deepEqual(stored(head), [
    [CT, 0],
    [T, 3],
    [T + 15_000, 5],
    [T + 30_000, 8],
  ]);
});

test('a counter reset (a new start time after the last sample) gets its zero; within one push, per sample', () => {
  const head = new Head();
  push(head, [T, T + 15_000], [3, 5], [CT, CT]);
  const reset = T + 20_000;
  push(head, [T + 30_000, T + 45_000], [1, 2], [reset, reset]);
  assert.deepEqual(stored(head), [
    [CT, 0],
    [T, 3],
    [T + 15_000, 5],
    [reset, 0],
    [T + 30_000, 1],
    [T + 45_000, 2],
  ]);
});

test('no zero when the start time is unset, not before the sample, or the sample time is 0; no conflict counted', () => {
  const head = new Head();
  const stats = push(head, [T, T + 15_000, T + 30_000], [3, 5, 7], [0, T + 15_000, T + 40_000]);
  assert.deepEqual(stored(head), [
    [T, 3],
    [T + 15_000, 5],
    [T + 30_000, 7],
  ]);
  assert.equal(stats.appended, 3);
  const zeroTime = new Head();
  push(zeroTime, [0], [4], [-10]);
  assert.deepEqual(stored(zeroTime), [[0, 4]], 'Prometheus skips the start time of a sample at time 0');
  // A start time at a stored sample's time with another value: dropped, not counted as a conflict.
  const conflict = push(head, [T + 45_000], [9], [T + 30_000]);
  assert.deepEqual(quiet(conflict), [0, 0, 0, 0]);
  assert.equal(stored(head).length, 4);
});

test('never out of order, even inside the out-of-order window; never below the head minimum valid time', () => {
  const head = new Head({ outOfOrderTimeWindowMs: () => 3_600_000 });
  push(head, [T + 60_000], [10], [0]);
  const late = push(head, [T + 90_000], [12], [T]);
  assert.deepEqual(quiet(late), [0, 0, 0, 0]);
  assert.deepEqual(stored(head), [
    [T + 60_000, 10],
    [T + 90_000, 12],
  ]);
  const bounded = new Head();
  bounded.setMinValidTime(T);
  push(bounded, [T + 15_000], [1], [T - 1]);
  assert.deepEqual(stored(bounded), [[T + 15_000, 1]]);
});

function hist(count: number): NativeHistogram {
  return {
    counterResetHint: 'unknown',
    schema: 2,
    zeroThreshold: 0.001,
    zeroCount: 1,
    count,
    sum: 2.5 * count,
    positiveSpans: [{ offset: 0, length: 1 }],
    negativeSpans: [],
    positiveBuckets: [count - 1],
    negativeBuckets: [],
  };
}

test('a histogram start time gets an empty histogram of the same layout (stored in the chunk of the samples after it)', () => {
  const head = new Head();
  const stats = emptyAppendStats();
  head.appendHistograms(counter, [{ timestamp: T, startTimestamp: CT, histogram: hist(4), float: false }], stats);
  head.appendHistograms(counter, [{ timestamp: T + 15_000, startTimestamp: CT, histogram: hist(6), float: false }], stats);
  assert.equal(stats.appended, 3);
  assert.deepEqual(quiet(stats), [0, 0, 0, 0]);
  const [s] = head.select([], -Infinity, Infinity);
  assert.deepEqual([...s.histograms!.timestamps], [CT, T, T + 15_000]);
  const zero = s.histograms!.values[0];
  assert.deepEqual([zero.schema, zero.zeroThreshold, zero.count, zero.sum, zero.zeroCount], [2, 0.001, 0, 0, 0]);
  // The chunk widens its layout for the histograms after it: the zero reads back with their buckets, empty.
  assert.ok(zero.positiveBuckets.every((c) => c === 0) && zero.negativeBuckets.length === 0, JSON.stringify(zero));
  assert.equal(s.histograms!.values[1].count, 4);
});
