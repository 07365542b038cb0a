// Numeric kernels shared by functions and aggregations, each a port of the
// Prometheus algorithm it is named after so results agree to the last bit
// where Prometheus is careful (Kahan summation, quantile interpolation).

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

/** Ascending order with NaN first, as Prometheus' vectorByValueHeap sorts. */
export function compareNaNFirst(a: number, b: number): number {
  const an = Number.isNaN(a);
  const bn = Number.isNaN(b);
  if (an || bn) return an && bn ? 0 : an ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders by `cmp` with NaN after every number (how sort(), sort_desc(), topk and bottomk treat NaN). */
export function nanLast(cmp: (a: number, b: number) => number): (a: number, b: number) => number {
  return (a, b) => {
    const an = Number.isNaN(a);
    const bn = Number.isNaN(b);
    if (an || bn) return an === bn ? 0 : an ? 1 : -1;
    return cmp(a, b);
  };
}

/**
 * The q-quantile of values, interpolating between neighbours (Prometheus'
 * quantile()). NaN for no values or q NaN, -Inf for q < 0, +Inf for q > 1.
 * Sorts values in place.
 */
export function quantile(q: number, values: number[]): number {
  if (values.length === 0 || Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  values.sort(compareNaNFirst);
  const n = values.length;
  const rank = q * (n - 1);
  const lower = Math.max(0, Math.floor(rank));
  const upper = Math.min(n - 1, lower + 1);
  const weight = rank - Math.floor(rank);
  return values[lower] * (1 - weight) + values[upper] * weight;
}

export interface Bucket {
  upperBound: number;
  count: number;
}

/**
 * histogram_quantile over classic buckets (Prometheus' BucketQuantile): linear
 * interpolation within the bucket, the second-highest bound when the rank
 * falls into the +Inf bucket, NaN without a +Inf bucket or observations.
 * Sorts and rewrites buckets in place.
 */
export function bucketQuantile(q: number, buckets: Bucket[]): { value: number; forcedMonotonic: boolean } {
  if (Number.isNaN(q)) return { value: NaN, forcedMonotonic: false };
  if (q < 0) return { value: -Infinity, forcedMonotonic: false };
  if (q > 1) return { value: Infinity, forcedMonotonic: false };
  buckets.sort((a, b) => (a.upperBound < b.upperBound ? -1 : a.upperBound > b.upperBound ? 1 : 0));
  if (buckets[buckets.length - 1].upperBound !== Infinity) return { value: NaN, forcedMonotonic: false };
  buckets = coalesceBuckets(buckets);
  correctPrecisionErrors(buckets, 1e-12);
  const forcedMonotonic = ensureMonotonic(buckets);
  if (buckets.length < 2) return { value: NaN, forcedMonotonic: false };
  const observations = buckets[buckets.length - 1].count;
  if (observations === 0) return { value: NaN, forcedMonotonic: false };
  let rank = q * observations;
  // First bucket (excluding +Inf) whose cumulative count reaches the rank.
  let b = buckets.length - 1;
  for (let i = 0; i < buckets.length - 1; i++) {
    if (buckets[i].count >= rank) {
      b = i;
      break;
    }
  }
  if (b === buckets.length - 1) return { value: buckets[buckets.length - 2].upperBound, forcedMonotonic };
  if (b === 0 && buckets[0].upperBound <= 0) return { value: buckets[0].upperBound, forcedMonotonic };
  let bucketStart = 0;
  const bucketEnd = buckets[b].upperBound;
  let count = buckets[b].count;
  if (b > 0) {
    bucketStart = buckets[b - 1].upperBound;
    count -= buckets[b - 1].count;
    rank -= buckets[b - 1].count;
  }
  return { value: bucketStart + (bucketEnd - bucketStart) * (rank / count), forcedMonotonic };
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

function correctPrecisionErrors(buckets: Bucket[], tolerance: number): void {
  let prev = buckets[0].count;
  for (let i = 1; i < buckets.length; i++) {
    const curr = buckets[i].count;
    const delta = Math.abs(curr - prev);
    if (delta === 0) continue;
    if (delta / curr <= tolerance) buckets[i].count = prev;
    else prev = curr;
  }
}

function ensureMonotonic(buckets: Bucket[]): boolean {
  let forced = false;
  let max = buckets[0].count;
  for (let i = 1; i < buckets.length; i++) {
    if (buckets[i].count > max) max = buckets[i].count;
    else if (buckets[i].count < max) {
      buckets[i].count = max;
      forced = true;
    }
  }
  return forced;
}

/**
 * Least-squares fit over (t, f) samples with x = (t - interceptTime) seconds
 * (Prometheus' linearRegression). Constant input gives slope 0 exactly.
 */
export function linearRegression(
  ts: ArrayLike<number>,
  fs: ArrayLike<number>,
  interceptTime: number,
): { slope: number; intercept: number } {
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
