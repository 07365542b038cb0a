// Numeric kernels shared by functions and aggregations, each a port of the
// Prometheus algorithm it is named after so results agree to the last bit
// where Prometheus is careful (Kahan summation, quantile interpolation).

import { goSort, valueLess } from './go-sort.ts';

/** Neumaier-compensated running sum (Prometheus' kahansum.Inc). */
export class KahanSum {
  sum = 0;
  c = 0;

  constructor(initial = 0) {
    this.sum = initial;
  }

  add(inc: number): void {
    const t = this.sum + inc;
    if (t === Infinity || t === -Infinity) this.c = 0;
    else if (Math.abs(this.sum) >= Math.abs(inc)) this.c += this.sum - t + inc;
    else this.c += inc - t + this.sum;
    this.sum = t;
  }
}

/** One step of Prometheus' kahansum.Inc on plain numbers; returns [sum, c]. */
export function kahanInc(inc: number, sum: number, c: number): [number, number] {
  const t = sum + inc;
  if (t === Infinity || t === -Infinity) c = 0;
  else if (Math.abs(sum) >= Math.abs(inc)) c += sum - t + inc;
  else c += inc - t + sum;
  return [t, c];
}

/**
 * The q-quantile of values, interpolating between neighbours (Prometheus'
 * quantile()). NaN for no values or q NaN, -Inf for q < 0, +Inf for q > 1.
 * Sorts values in place, as Prometheus does (sortLikeQuantile).
 */
export function quantile(q: number, values: number[] | Float64Array): number {
  if (values.length === 0 || Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  sortLikeQuantile(values);
  const n = values.length;
  const rank = q * (n - 1);
  const lower = Math.max(0, Math.floor(rank));
  const upper = Math.min(n - 1, lower + 1);
  const weight = rank - Math.floor(rank);
  if (weight === 0) return values[lower];
  return values[lower] * (1 - weight) + values[upper] * weight;
}

/**
 * sort.Sort(vectorByValueHeap(values)), Prometheus' order for quantile():
 * only NaN (its Less is inconsistent there) and -0 (equal to 0, printed apart)
 * can tell Go's pdqsort from any other sort, so other input sorts natively.
 */
function sortLikeQuantile(values: number[] | Float64Array): void {
  let plain = true;
  for (let i = 0; i < values.length && plain; i++) plain = !Number.isNaN(values[i]) && !Object.is(values[i], -0);
  if (plain) {
    if (values instanceof Float64Array) values.sort();
    else values.sort((a, b) => a - b);
    return;
  }
  goSort(
    {
      less: (i, j) => valueLess(values[i], values[j]),
      swap: (i, j) => {
        const t = values[i];
        values[i] = values[j];
        values[j] = t;
      },
    },
    values.length,
  );
}

export interface Bucket {
  upperBound: number;
  count: number;
}

/** What ensureMonotonic had to change in a classic histogram's buckets. */
export interface MonotonicityFix {
  forcedMonotonic: boolean;
  fixedPrecision: boolean;
  /** Lowest and highest upper bound whose count was raised, and the largest raise. */
  minBucket: number;
  maxBucket: number;
  maxDiff: number;
}

const NO_FIX: MonotonicityFix = { forcedMonotonic: false, fixedPrecision: false, minBucket: 0, maxBucket: 0, maxDiff: 0 };

/** Relative tolerance below which two bucket counts are taken as equal (float noise). */
const SMALL_DELTA_TOLERANCE = 1e-12;

function sortBuckets(buckets: Bucket[]): void {
  buckets.sort((a, b) => (a.upperBound < b.upperBound ? -1 : a.upperBound > b.upperBound ? 1 : 0));
}

/**
 * histogram_quantile over classic buckets (Prometheus' BucketQuantile): linear
 * interpolation within the bucket, the second-highest bound when the rank
 * falls into the +Inf bucket, NaN without a +Inf bucket or observations.
 * Sorts and rewrites buckets in place.
 */
export function bucketQuantile(q: number, buckets: Bucket[]): { value: number; fix: MonotonicityFix } {
  if (Number.isNaN(q)) return { value: NaN, fix: NO_FIX };
  if (q < 0) return { value: -Infinity, fix: NO_FIX };
  if (q > 1) return { value: Infinity, fix: NO_FIX };
  sortBuckets(buckets);
  if (buckets[buckets.length - 1].upperBound !== Infinity) return { value: NaN, fix: NO_FIX };
  buckets = coalesceBuckets(buckets);
  const fix = ensureMonotonic(buckets, SMALL_DELTA_TOLERANCE);
  if (buckets.length < 2) return { value: NaN, fix };
  const observations = buckets[buckets.length - 1].count;
  if (observations === 0) return { value: NaN, fix };
  let rank = q * observations;
  // First bucket (excluding +Inf) whose cumulative count reaches the rank.
  let b = buckets.length - 1;
  for (let i = 0; i < buckets.length - 1; i++) {
    if (buckets[i].count >= rank) {
      b = i;
      break;
    }
  }
  if (b === buckets.length - 1) return { value: buckets[buckets.length - 2].upperBound, fix };
  if (b === 0 && buckets[0].upperBound <= 0) return { value: buckets[0].upperBound, fix };
  let bucketStart = 0;
  const bucketEnd = buckets[b].upperBound;
  let count = buckets[b].count;
  if (b > 0) {
    bucketStart = buckets[b - 1].upperBound;
    count -= buckets[b - 1].count;
    rank -= buckets[b - 1].count;
  }
  return { value: bucketStart + (bucketEnd - bucketStart) * (rank / count), fix };
}

/**
 * histogram_fraction over classic buckets (Prometheus' BucketFraction): the
 * share of observations in [lower, upper], interpolating linearly inside a
 * bucket (0 is the lowest bound when the first bucket is above 0).
 */
export function bucketFraction(lower: number, upper: number, buckets: Bucket[]): number {
  if (buckets.length === 0) return NaN;
  sortBuckets(buckets);
  if (buckets[buckets.length - 1].upperBound !== Infinity) return NaN;
  buckets = coalesceBuckets(buckets);
  const count = buckets[buckets.length - 1].count;
  if (count === 0 || Number.isNaN(lower) || Number.isNaN(upper)) return NaN;
  if (lower >= upper) return 0;
  let rank = 0;
  let lowerRank = 0;
  let upperRank = 0;
  let lowerSet = false;
  let upperSet = false;
  let lowerBound = buckets[0].upperBound <= 0 ? -Infinity : 0;
  for (let i = 0; i < buckets.length; i++) {
    const b = buckets[i];
    if (i > 0) lowerBound = buckets[i - 1].upperBound;
    const upperBound = b.upperBound;
    const interpolate = (v: number): number => (lowerBound === -Infinity ? b.count : rank + ((b.count - rank) * (v - lowerBound)) / (upperBound - lowerBound));
    if (!lowerSet && lowerBound >= lower) {
      lowerRank = rank;
      lowerSet = true;
    }
    if (!upperSet && lowerBound >= upper) {
      upperRank = rank;
      upperSet = true;
    }
    if (lowerSet && upperSet) break;
    if (!lowerSet && lowerBound < lower && upperBound > lower) {
      lowerRank = interpolate(lower);
      lowerSet = true;
    }
    if (!upperSet && lowerBound < upper && upperBound > upper) {
      upperRank = interpolate(upper);
      upperSet = true;
    }
    if (lowerSet && upperSet) break;
    rank = b.count; // Classic bucket counts are cumulative.
  }
  if (!lowerSet || lowerRank > count) lowerRank = count;
  if (!upperSet || upperRank > count) upperRank = count;
  return (upperRank - lowerRank) / count;
}

function coalesceBuckets(buckets: Bucket[]): Bucket[] {
  const out: Bucket[] = [];
  let last = { ...buckets[0] };
  for (const b of buckets.slice(1)) {
    if (b.upperBound === last.upperBound) last.count += b.count;
    else {
      out.push(last);
      last = { ...b };
    }
  }
  out.push(last);
  return out;
}

/** Prometheus' almost.Equal: equal within a relative epsilon (absolute near zero). */
function almostEqual(a: number, b: number, epsilon: number): boolean {
  const minNormal = 2.2250738585072014e-308;
  if (a === b) return true;
  const absSum = Math.abs(a) + Math.abs(b);
  const diff = Math.abs(a - b);
  if (a === 0 || b === 0 || absSum < minNormal) return diff < epsilon * minNormal;
  return diff / Math.min(absSum, Number.MAX_VALUE) < epsilon;
}

/**
 * Prometheus' ensureMonotonicAndIgnoreSmallDeltas: absorbs differences that
 * are float noise, then raises any count below the last accepted one.
 */
function ensureMonotonic(buckets: Bucket[], tolerance: number): MonotonicityFix {
  const fix: MonotonicityFix = { forcedMonotonic: false, fixedPrecision: false, minBucket: Infinity, maxBucket: -Infinity, maxDiff: 0 };
  let prev = buckets[0].count;
  for (let i = 1; i < buckets.length; i++) {
    const curr = buckets[i].count;
    if (curr === prev) continue;
    if (almostEqual(prev, curr, tolerance)) {
      buckets[i].count = prev;
      fix.fixedPrecision = true;
      continue;
    }
    if (curr < prev) {
      buckets[i].count = prev;
      fix.forcedMonotonic = true;
      fix.minBucket = Math.min(fix.minBucket, buckets[i].upperBound);
      fix.maxBucket = Math.max(fix.maxBucket, buckets[i].upperBound);
      fix.maxDiff = Math.max(fix.maxDiff, prev - curr);
      continue;
    }
    prev = curr;
  }
  return fix;
}

/**
 * Least-squares fit over (t, f) samples with x = (t - interceptTime) seconds
 * (Prometheus' linearRegression). Constant input gives slope 0 exactly.
 */
export function linearRegression(ts: ArrayLike<number>, fs: ArrayLike<number>, interceptTime: number): { slope: number; intercept: number } {
  let n = 0;
  const sumX = new KahanSum();
  const sumY = new KahanSum();
  const sumXY = new KahanSum();
  const sumX2 = new KahanSum();
  const initY = fs[0];
  let constY = true;
  for (let i = 0; i < ts.length; i++) {
    const f = fs[i];
    if (constY && i > 0 && f !== initY) constY = false;
    n += 1;
    const x = (ts[i] - interceptTime) / 1e3;
    sumX.add(x);
    sumY.add(f);
    sumXY.add(x * f);
    sumX2.add(x * x);
  }
  if (constY) {
    if (initY === Infinity || initY === -Infinity) return { slope: NaN, intercept: NaN };
    return { slope: 0, intercept: initY };
  }
  const sx = sumX.sum + sumX.c;
  const sy = sumY.sum + sumY.c;
  const sxy = sumXY.sum + sumXY.c;
  const sx2 = sumX2.sum + sumX2.c;
  const covXY = sxy - (sx * sy) / n;
  const varX = sx2 - (sx * sx) / n;
  const slope = covXY / varX;
  const intercept = sy / n - (slope * sx) / n;
  return { slope, intercept };
}
