// The histogram trim operators (Prometheus' experimental `</` and `>/`):
// `h </ x` keeps the observations below x, `h >/ x` those above. A bucket the
// cut falls into keeps the share histogram_fraction would give it (linear for
// custom buckets and the zero bucket, logarithmic for exponential buckets).
// The count is the sum of what the buckets keep; the sum is estimated from
// each kept part's middle (arithmetic for linear buckets, geometric for
// exponential ones). A trim that removes nothing returns the histogram as is.
//
// Infinite custom buckets cannot be interpolated: the +Inf bucket goes
// entirely for `</` and stays entirely for `>/` (valued at its lower bound or
// the cut, whichever is higher); the -Inf bucket goes entirely for `>/` and,
// for `</`, stays valued at its upper bound or the cut (when that bound is
// not positive). A first bucket with a positive upper bound is taken to start
// at 0 when the cut is not negative, as histogram_fraction does.

import { FloatHistogram } from './float-histogram.ts';

interface Part {
  /** Share of the bucket's count that stays. */
  keep: number;
  /** The value the kept observations are estimated at. */
  at: number;
}

const NONE: Part = { keep: 0, at: 0 };

/** The kept part of a finite bucket [lower, upper] (lower < upper). */
function finite(lower: number, upper: number, cut: number, below: boolean, linear: boolean): Part {
  let a = lower;
  let b = upper;
  if (below) {
    if (upper <= cut) return { keep: 1, at: middle(a, b, linear) };
    if (lower >= cut) return NONE;
    b = cut;
  } else {
    if (lower >= cut) return { keep: 1, at: middle(a, b, linear) };
    if (upper <= cut) return NONE;
    a = cut;
  }
  const keep = linear ? (b - a) / (upper - lower) : Math.log(Math.abs(b) / Math.abs(a)) / Math.log(Math.abs(upper) / Math.abs(lower));
  return { keep: Math.abs(keep), at: middle(a, b, linear) };
}

function middle(a: number, b: number, linear: boolean): number {
  if (linear) return (a + b) / 2;
  const g = Math.sqrt(Math.abs(a) * Math.abs(b));
  return a < 0 ? -g : g;
}

/** A custom bucket's kept part; index k of n buckets with bounds `cv`. */
function customPart(cv: readonly number[], k: number, cut: number, below: boolean): Part {
  const n = cv.length + 1;
  const lower = k === 0 ? -Infinity : cv[k - 1];
  const upper = k === n - 1 ? Infinity : cv[k];
  if (lower === -Infinity && upper === Infinity) return NONE;
  if (lower === -Infinity) {
    if (upper > 0 && cut >= 0) return finite(0, upper, cut, below, true);
    if (!below) return NONE;
    if (cut >= upper) return { keep: 1, at: upper };
    return upper > 0 ? NONE : { keep: 1, at: cut };
  }
  if (upper === Infinity) return below || cut === Infinity ? NONE : { keep: 1, at: Math.max(lower, cut) };
  return finite(lower, upper, cut, below, true);
}

/** `h </ cut` (below) or `h >/ cut`. */
export function trimHistogram(h: FloatHistogram, cut: number, below: boolean): FloatHistogram {
  if (below ? cut === Infinity : cut === -Infinity) return h;
  const out = h.copy();
  let count = 0;
  let sum = 0;
  let removed = false;
  const take = (c: number, p: Part): number => {
    if (p.keep !== 1) removed = true;
    const kept = c * p.keep;
    count += kept;
    if (kept !== 0) sum += kept * p.at;
    return kept;
  };
  if (h.usesCustomBuckets()) {
    const cv = h.customValues ?? [];
    const list = h.positiveBucketList();
    list.forEach((b, k) => {
      out.positiveBuckets[k] = take(b.count, customPart(cv, b.index, cut, below));
    });
  } else {
    // The zero bucket leans to the side the other buckets are on.
    let zl = -h.zeroThreshold;
    let zu = h.zeroThreshold;
    if (h.negativeBuckets.length === 0 && h.positiveBuckets.length > 0) zl = 0;
    else if (h.positiveBuckets.length === 0 && h.negativeBuckets.length > 0) zu = 0;
    // Positive buckets first, then the zero bucket and the negative ones: the order the sum is added up in.
    h.positiveBucketList().forEach((b, k) => {
      out.positiveBuckets[k] = take(b.count, finite(b.lower, b.upper, cut, below, false));
    });
    out.zeroCount = zu > zl ? take(h.zeroCount, finite(zl, zu, cut, below, true)) : take(h.zeroCount, zeroWidthPart(cut, zl, below));
    h.negativeBucketList().forEach((b, k) => {
      out.negativeBuckets[k] = take(b.count, finite(b.lower, b.upper, cut, below, false));
    });
  }
  if (!removed) return h;
  out.count = count;
  out.sum = sum;
  return out.compact(0);
}

/** A zero bucket without width keeps everything on the kept side of the cut. */
function zeroWidthPart(cut: number, at: number, below: boolean): Part {
  return (below ? at <= cut : at >= cut) ? { keep: 1, at } : NONE;
}
