// OTLP explicit-bucket histogram points as native histograms with custom buckets
// (schema -53, NHCB), as Prometheus' OTLP receiver converts them with
// `convert_histograms_to_nhcb`: the explicit bounds are the custom values (the
// +Inf bucket stays implicit), bucket i of the point is bucket i of the histogram.

import type { HistogramSpan, NativeHistogram } from '@strata/model';
import { FLAG_NO_RECORDED_VALUE, STALE_NAN, type HistogramDataPoint } from './model.ts';

const CUSTOM_BUCKETS_SCHEMA = -53;

/** Longest run of empty buckets kept inside a span; a longer one starts a new span (client_golang's rule). */
const MAX_GAP_IN_SPAN = 2;

/** The point as an NHCB sample; a delta point is a gauge histogram (Prometheus' hint for native deltas). */
export function customBucketsHistogram(p: HistogramDataPoint, delta: boolean): NativeHistogram {
  const { spans, counts } = customBucketSpans(p.bucketCounts);
  const stale = (p.flags & FLAG_NO_RECORDED_VALUE) !== 0;
  return {
    counterResetHint: delta ? 'gauge' : 'unknown',
    schema: CUSTOM_BUCKETS_SCHEMA,
    zeroThreshold: 0,
    zeroCount: 0,
    count: p.count,
    sum: stale ? STALE_NAN : (p.sum ?? 0),
    positiveSpans: spans,
    positiveBuckets: counts,
    negativeSpans: [],
    negativeBuckets: [],
    customValues: p.explicitBounds.slice(),
  };
}

/**
 * Dense bucket counts as spans: every non-empty bucket and the last bucket are kept (Prometheus
 * keeps the last one even when empty, so its samples and ours lay out the same); up to two empty
 * buckets between kept ones stay inside a span, more start a new span. No kept bucket: no spans.
 */
export function customBucketSpans(bucketCounts: readonly number[]): { spans: HistogramSpan[]; counts: number[] } {
  const spans: HistogramSpan[] = [];
  const counts: number[] = [];
  const last = bucketCounts.length - 1;
  let next = 0; // the index after the last kept bucket
  for (let i = 0; i <= last; i++) {
    const c = bucketCounts[i];
    if (c === 0 && (i !== last || counts.length === 0)) continue;
    const gap = i - next;
    if (counts.length > 0 && gap <= MAX_GAP_IN_SPAN) {
      for (let k = 0; k < gap; k++) counts.push(0);
      spans[spans.length - 1].length += gap + 1;
    } else {
      spans.push({ offset: gap, length: 1 });
    }
    counts.push(c);
    next = i + 1;
  }
  return { spans, counts };
}
