// histogram_quantile, histogram_fraction and histogram_stddev/stdvar over
// native histograms (Prometheus' HistogramQuantile, HistogramFraction and
// histogramVariance): linear interpolation in custom and zero buckets,
// exponential interpolation in exponential buckets.

import { KahanSum } from '../stats.ts';
import type { Bucket, FloatHistogram } from './float-histogram.ts';

/** What went on with NaN observations, for the info annotations Prometheus attaches. */
export type NaNNote = 'quantile-nan-result' | 'quantile-nan-skew' | 'fraction-nans' | undefined;

export function histogramQuantile(q: number, h: FloatHistogram): { value: number; note: NaNNote } {
  if (q < 0) return { value: -Infinity, note: undefined };
  if (q > 1) return { value: Infinity, note: undefined };
  if (h.count === 0 || Number.isNaN(q)) return { value: NaN, note: undefined };

  const all = h.allBuckets();
  const forward = Number.isNaN(h.sum) || q < 0.5;
  const buckets = forward ? all : all.slice().reverse();
  let rank = forward ? q * h.count : (1 - q) * h.count;
  let count = 0;
  let i = 0;
  let bucket: Bucket = { lower: 0, upper: 0, lowerInclusive: false, upperInclusive: false, count: 0, index: 0 };
  for (; i < buckets.length; i++) {
    bucket = { ...buckets[i] };
    if (bucket.count === 0) continue;
    count += bucket.count;
    if (count >= rank) break;
  }
  if (i === buckets.length) i--;

  if (!h.usesCustomBuckets() && bucket.lower < 0 && bucket.upper > 0) {
    if (h.negativeBuckets.length === 0 && h.positiveBuckets.length > 0) bucket.lower = 0;
    else if (h.positiveBuckets.length === 0 && h.negativeBuckets.length > 0) bucket.upper = 0;
  } else if (h.usesCustomBuckets()) {
    if (bucket.lower === -Infinity) {
      if (bucket.upper <= 0) return { value: bucket.upper, note: undefined };
      bucket.lower = 0;
    } else if (bucket.upper === Infinity) {
      return { value: bucket.lower, note: undefined };
    }
  }
  if (count > h.count) count = h.count;
  if (count < rank) {
    if (Number.isNaN(h.sum)) return { value: NaN, note: 'quantile-nan-result' };
    return { value: bucket.upper, note: undefined };
  }
  if (forward) rank -= count - bucket.count;
  else rank = count - rank;

  let note: NaNNote;
  if (Number.isNaN(h.sum)) {
    for (let j = i + 1; j < buckets.length; j++) count += buckets[j].count;
    if (count < h.count) note = 'quantile-nan-skew';
  }
  const fraction = rank / bucket.count;
  if (h.usesCustomBuckets() || (bucket.lower <= 0 && bucket.upper >= 0)) {
    return { value: bucket.lower + (bucket.upper - bucket.lower) * fraction, note };
  }
  const logLower = Math.log2(Math.abs(bucket.lower));
  const logUpper = Math.log2(Math.abs(bucket.upper));
  if (bucket.lower > 0) return { value: 2 ** (logLower + (logUpper - logLower) * fraction), note };
  return { value: -(2 ** (logUpper + (logLower - logUpper) * (1 - fraction))), note };
}

export function histogramFraction(lower: number, upper: number, h: FloatHistogram): { value: number; note: NaNNote } {
  if (h.count === 0 || Number.isNaN(lower) || Number.isNaN(upper)) return { value: NaN, note: undefined };
  if (lower >= upper) return { value: 0, note: undefined };
  const buckets = h.allBuckets();
  let count = 0;
  let rank = 0;
  let lowerRank = 0;
  let upperRank = 0;
  let lowerSet = false;
  let upperSet = false;
  let i = 0;
  for (; i < buckets.length; i++) {
    const b = { ...buckets[i] };
    count += b.count;
    let zeroBucket = false;
    const linear = (v: number) => (b.lower === -Infinity ? b.count : rank + (b.count * (v - b.lower)) / (b.upper - b.lower));
    const exponential = (v: number) => {
      const logLower = Math.log2(Math.abs(b.lower));
      const logUpper = Math.log2(Math.abs(b.upper));
      const logV = Math.log2(Math.abs(v));
      const fraction = v > 0 ? (logV - logLower) / (logUpper - logLower) : 1 - (logV - logUpper) / (logLower - logUpper);
      return rank + b.count * fraction;
    };
    if (b.lower <= 0 && b.upper >= 0) {
      zeroBucket = true;
      if (h.negativeBuckets.length === 0 && h.positiveBuckets.length > 0) b.lower = 0;
      else if (h.positiveBuckets.length === 0 && h.negativeBuckets.length > 0) b.upper = 0;
    }
    const interpolate = h.usesCustomBuckets() || zeroBucket ? linear : exponential;
    if (!lowerSet && b.lower >= lower) {
      lowerRank = rank;
      lowerSet = true;
    }
    if (!upperSet && b.lower >= upper) {
      upperRank = rank;
      upperSet = true;
    }
    if (lowerSet && upperSet) break;
    if (!lowerSet && b.lower < lower && b.upper > lower) {
      lowerRank = interpolate(lower);
      lowerSet = true;
    }
    if (!upperSet && b.lower < upper && b.upper > upper) {
      upperRank = interpolate(upper);
      upperSet = true;
    }
    if (lowerSet && upperSet) break;
    rank += b.count;
  }
  let note: NaNNote;
  if (Number.isNaN(h.sum)) {
    for (let j = i + 1; j < buckets.length; j++) count += buckets[j].count;
    if (count < h.count) note = 'fraction-nans';
  } else count = h.count;
  if (!lowerSet || lowerRank > count) lowerRank = count;
  if (!upperSet || upperRank > count) upperRank = count;
  return { value: (upperRank - lowerRank) / h.count, note };
}

/** The variance of the observations, each bucket's taken at its (geometric) middle. */
export function histogramVariance(h: FloatHistogram): number {
  const mean = h.sum / h.count;
  const variance = new KahanSum();
  for (const b of h.allBuckets()) {
    if (b.count === 0) continue;
    let val: number;
    if (h.usesCustomBuckets()) val = (b.upper + b.lower) / 2;
    else if (b.lower <= 0 && b.upper >= 0) val = 0;
    else {
      val = Math.sqrt(b.upper * b.lower);
      if (b.upper < 0) val = -val;
    }
    const delta = val - mean;
    variance.add(b.count * delta * delta);
  }
  return (variance.sum + variance.c) / h.count;
}
