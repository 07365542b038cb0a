// Extended range selectors (Prometheus' experimental `anchored` and
// `smoothed` modifiers). Neither extrapolates:
//
// - anchored: the window (start, end] plus the last sample at or before its
//   start (within the lookback delta), so increase() is the exact difference
//   between the value at the start and the last value; for rate, increase,
//   delta, changes and resets.
// - smoothed: the values at both ends are interpolated linearly from the
//   samples around them (the sample after the end within the lookback delta;
//   without one the last value carries forward); for counters an
//   interpolation across a reset assumes the counter restarted from zero. For
//   rate, increase and delta. On an instant selector, the value interpolated
//   at the evaluation time.
//
// Kernels here take the series' samples and the window's indices; the
// evaluator finds those and reports the annotations.

import type { Annotate } from './histogram-functions.ts';
import { changesOrResets, histogramIncrease, mixedExponentialCustom } from './histogram-functions.ts';
import { FloatHistogram, IncompatibleSchemaError } from './histogram/float-histogram.ts';

export type ExtendedFunction = 'rate' | 'increase' | 'delta' | 'changes' | 'resets';

/** Samples of one kind: timestamps and the window's [lo, hi) (lo: first after start, hi: first after end). */
interface Window {
  t: ArrayLike<number>;
  lo: number;
  hi: number;
}

/** The sample at or before `at` within the lookback delta, or -1 (the window's lo - 1 when it qualifies). */
function before(w: Window, at: number, lookbackMs: number): number {
  return w.lo > 0 && w.t[w.lo - 1] > at - lookbackMs ? w.lo - 1 : -1;
}

/** A float counter or gauge's value at `at` between two samples; a counter that dropped restarted from zero. */
function interpolate(t1: number, v1: number, t2: number, v2: number, at: number, isCounter: boolean): number {
  const frac = (at - t1) / (t2 - t1);
  if (isCounter && v2 < v1) return v2 * frac;
  return v1 + (v2 - v1) * frac;
}

// --- Floats ---------------------------------------------------------------------

export function anchoredFloat(
  fn: ExtendedFunction,
  t: Float64Array,
  f: Float64Array,
  lo: number,
  hi: number,
  rangeStart: number,
  lookbackMs: number,
  rangeSeconds: number,
): number | undefined {
  if (hi === lo) return undefined;
  const b = before({ t, lo, hi }, rangeStart, lookbackMs);
  const first = b >= 0 ? b : lo;
  let r = f[hi - 1] - f[first];
  if (fn !== 'delta') for (let i = first + 1; i < hi; i++) if (f[i] < f[i - 1]) r += f[i - 1];
  return fn === 'rate' ? r / rangeSeconds : r;
}

export function smoothedFloat(
  fn: ExtendedFunction,
  t: Float64Array,
  f: Float64Array,
  lo: number,
  hi: number,
  rangeStart: number,
  rangeEnd: number,
  lookbackMs: number,
  rangeSeconds: number,
): number | undefined {
  const isCounter = fn !== 'delta';
  const p = before({ t, lo, hi }, rangeStart, lookbackMs);
  if (lo >= t.length) return undefined; // Nothing after the start.
  let left: number;
  if (p < 0) {
    if (t[lo] > rangeEnd) return undefined; // Nothing up to the end.
    left = f[lo];
  } else left = interpolate(t[p], f[p], t[lo], f[lo], rangeStart, isCounter);
  const q = hi - 1;
  const right = hi < t.length && t[hi] < rangeEnd + lookbackMs ? interpolate(t[q], f[q], t[hi], f[hi], rangeEnd, isCounter) : f[q];
  let r = right - left;
  if (isCounter) {
    let prev = left;
    for (let i = lo; i < hi; i++) {
      if (f[i] < prev) r += prev;
      prev = f[i];
    }
    if (right < prev) r += prev;
  }
  return fn === 'rate' ? r / rangeSeconds : r;
}

/** The value of a smoothed instant selector at `at`: interpolated between the samples around it, or the last one. */
export function smoothedInstantFloat(t: Float64Array, f: Float64Array, at: number, lookbackMs: number): number | undefined {
  let hi = 0;
  while (hi < t.length && t[hi] <= at) hi++;
  const p = hi - 1;
  if (p < 0 || t[p] <= at - lookbackMs) return undefined;
  if (t[p] === at || hi >= t.length || t[hi] >= at + lookbackMs) return f[p];
  return interpolate(t[p], f[p], t[hi], f[hi], at, false);
}

/**
 * changes() / resets() with `anchored`: over floats and histograms merged in
 * time order, from the last sample (of either kind) at or before the start.
 */
export function anchoredChangesOrResets(
  fl: Window & { f: Float64Array; t: Float64Array },
  hl: Window & { h: FloatHistogram[]; t: Float64Array },
  rangeStart: number,
  lookbackMs: number,
  resets: boolean,
): number | undefined {
  if (fl.hi === fl.lo && hl.hi === hl.lo) return undefined;
  const fb = before(fl, rangeStart, lookbackMs);
  const hb = before(hl, rangeStart, lookbackMs);
  let fFirst = fl.lo;
  let hFirst = hl.lo;
  if (fb >= 0 && (hb < 0 || fl.t[fb] > hl.t[hb])) fFirst = fb;
  else if (hb >= 0) hFirst = hb;
  return changesOrResets(fl.t.subarray(fFirst, fl.hi), fl.f.subarray(fFirst, fl.hi), hl.t.subarray(hFirst, hl.hi), hl.h.slice(hFirst, hl.hi), resets);
}

// --- Histograms -------------------------------------------------------------------

const notCounter = (name: string) => `PromQL warning: this native histogram metric is not a counter: "${name}"`;
const notGauge = (name: string) => `PromQL warning: this native histogram metric is not a gauge: "${name}"`;

/** A histogram's value at `at` between two samples; a counter that reset restarted from zero. Throws IncompatibleSchemaError. */
function interpolateHistogram(
  t1: number,
  h1: FloatHistogram,
  t2: number,
  h2: FloatHistogram,
  at: number,
  isCounter: boolean,
): { h: FloatHistogram; reset: boolean } {
  const frac = (at - t1) / (t2 - t1);
  if (h1.usesCustomBuckets() !== h2.usesCustomBuckets()) throw new IncompatibleSchemaError();
  if (isCounter && h2.detectReset(h1)) return { h: h2.copy().mul(frac), reset: true };
  if (frac === 0) return { h: h1.copy(), reset: false };
  const h = h2.copy();
  h.sub(h1);
  h.mul(frac);
  h.add(h1);
  return { h, reset: false };
}

export function anchoredHistogram(
  fn: ExtendedFunction,
  t: Float64Array,
  h: FloatHistogram[],
  lo: number,
  hi: number,
  rangeStart: number,
  lookbackMs: number,
  rangeSeconds: number,
  name: string,
  a: Annotate,
): FloatHistogram | undefined {
  if (hi === lo) return undefined;
  const b = before({ t, lo, hi }, rangeStart, lookbackMs);
  const first = b >= 0 ? b : lo;
  const r = histogramIncrease(h.slice(first, hi), fn !== 'delta', name, a);
  if (!r) return undefined;
  return fn === 'rate' ? r.div(rangeSeconds) : r;
}

export function smoothedHistogram(
  fn: ExtendedFunction,
  t: Float64Array,
  h: FloatHistogram[],
  lo: number,
  hi: number,
  rangeStart: number,
  rangeEnd: number,
  lookbackMs: number,
  rangeSeconds: number,
  name: string,
  a: Annotate,
): FloatHistogram | undefined {
  const isCounter = fn !== 'delta';
  const p = before({ t, lo, hi }, rangeStart, lookbackMs);
  if (lo >= t.length) return undefined;
  const q = hi - 1;
  const next = hi < t.length && t[hi] < rangeEnd + lookbackMs ? hi : -1;
  try {
    let left: FloatHistogram;
    let leftAcrossReset = false;
    if (p < 0) {
      if (t[lo] > rangeEnd) return undefined;
      left = h[lo];
    } else {
      const i = interpolateHistogram(t[p], h[p], t[lo], h[lo], rangeStart, isCounter);
      left = i.h;
      leftAcrossReset = i.reset;
    }
    let right = h[q];
    let rightAcrossReset = false;
    if (next >= 0) {
      const i = interpolateHistogram(t[q], h[q], t[next], h[next], rangeEnd, isCounter);
      right = i.h;
      rightAcrossReset = i.reset;
    }
    // Annotations over the samples that take part.
    const used = [p >= 0 ? p : lo, ...Array.from({ length: hi - lo }, (_, k) => lo + k), next >= 0 ? next : q];
    if (isCounter && used.some((i) => h[i].counterResetHint === 'gauge')) a.warn(notCounter(name));
    if (!isCounter && (h[used[0]].counterResetHint !== 'gauge' || h[used[used.length - 1]].counterResetHint !== 'gauge')) a.warn(notGauge(name));

    const r = right.copy();
    r.sub(left);
    if (isCounter) {
      let prev = left;
      for (let i = lo; i < hi; i++) {
        // A left end interpolated across a reset already starts after it.
        const reset = i === lo && leftAcrossReset ? false : h[i].detectReset(prev);
        if (reset) r.add(prev);
        prev = h[i];
      }
      // A right end interpolated across a reset restarted from zero after the window's last sample.
      if (rightAcrossReset && hi > lo) r.add(prev);
    }
    r.counterResetHint = 'gauge';
    r.compact(0);
    return fn === 'rate' ? r.div(rangeSeconds) : r;
  } catch (err) {
    if (!(err instanceof IncompatibleSchemaError)) throw err;
    a.warn(mixedExponentialCustom(name));
    return undefined;
  }
}

/** A smoothed instant selector over histograms at `at`; undefined (after a warning for mixed schemas) when there is none. */
export function smoothedInstantHistogram(
  t: Float64Array,
  h: FloatHistogram[],
  at: number,
  lookbackMs: number,
  name: string,
  a: Annotate,
): FloatHistogram | undefined {
  let hi = 0;
  while (hi < t.length && t[hi] <= at) hi++;
  const p = hi - 1;
  if (p < 0 || t[p] <= at - lookbackMs) return undefined;
  if (t[p] === at || hi >= t.length || t[hi] >= at + lookbackMs) return h[p];
  try {
    return interpolateHistogram(t[p], h[p], t[hi], h[hi], at, h[hi].counterResetHint !== 'gauge').h.compact(0);
  } catch (err) {
    if (!(err instanceof IncompatibleSchemaError)) throw err;
    a.warn(mixedExponentialCustom(name));
    return undefined;
  }
}
