// The PromQL function table: every Prometheus function's signature (what the
// parser type-checks) and, for the implemented ones, its implementation in one
// of three shapes the engine knows how to drive. Adding a function is adding
// an entry here; the engine never switches on function names except timestamp().

import type { Labels } from '@strata/model';
import { METRIC_NAME, execRegex, expandRegexTemplate } from '@strata/model';
import type { Expr, ValueType } from './ast.ts';
import { unwrapParens } from './ast.ts';
import { PromQLExecutionError } from './errors.ts';
import { formatGoG, isValidLabelName } from './go-compat.ts';
import { dropMetadataLabels, getLabel, setLabel } from './labels.ts';
import { KahanSum, kahanInc, linearRegression, quantile } from './stats.ts';
import { sortByLabel, sortByValue } from './sort-functions.ts';
import type { FloatHistogram } from './histogram/float-histogram.ts';
import { histogramFraction, histogramQuantile, histogramQuantiles, histogramStddev, histogramStdvar, simpleHistogram } from './histogram-instant-functions.ts';
import {
  changesOrResets,
  histogramIncrease,
  histogramInstantValue,
  histogramSumOverTime,
  ignoredHistogramsInMixedRange,
  mixedFloatsHistograms,
} from './histogram-functions.ts';
import type { EvalSample, EvalVector } from './values.ts';
import type {
  FunctionContext,
  FunctionDef,
  FunctionImpl,
  InstantFunction,
  RangeContext,
  RangeFunction,
  RangeWindow,
  SeriesFunction,
} from './function-types.ts';

/** The window's float values as a new array. */
function windowFloats(w: RangeWindow): number[] {
  const out = new Array<number>(w.hi - w.lo);
  for (let i = w.lo; i < w.hi; i++) out[i - w.lo] = w.f[i];
  return out;
}

// --- Helpers -------------------------------------------------------------------

function dropName(s: EvalSample, ctx: { delayedNameRemoval: boolean }, f: number, t: number): EvalSample {
  return { metric: ctx.delayedNameRemoval ? s.metric : dropMetadataLabels(s.metric), t, f, dropName: true };
}

/** A float function of each sample; native histograms are left out. */
function simpleFloat(fn: (v: number) => number): InstantFunction {
  return (args, _exprs, ctx) => floatsOf(args[0]).map((s) => dropName(s, ctx, fn(s.f), ctx.ts));
}

function floatsOf(vec: EvalVector): EvalVector {
  return vec.some((s) => s.h) ? vec.filter((s) => !s.h) : vec;
}

const metricNameOf = (ls: Labels) => getLabel(ls, METRIC_NAME);

/**
 * A range function of the float samples: none without floats; with
 * histograms in the window too, they are ignored with an info annotation.
 * `minFloats` below which there is no result (and no annotation unless some floats exist).
 */
function floatsOnly(fn: RangeFunction, minFloats = 1): RangeFunction {
  return (w, ctx) => {
    const n = w.hi - w.lo;
    if (n < minFloats) {
      if (n > 0 && w.h.length > 0) ctx.info(ignoredHistogramsInMixedRange(metricNameOf(ctx.metric)));
      return undefined;
    }
    const v = fn(w, ctx);
    if (w.h.length > 0) ctx.info(ignoredHistogramsInMixedRange(metricNameOf(ctx.metric)));
    return v;
  };
}

/** Go's math.Max / math.Min: NaN wins. */
const goMax = (a: number, b: number): number => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.max(a, b));
const goMin = (a: number, b: number): number => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.min(a, b));

function scalarSample(f: number, ts: number): EvalVector {
  return [{ metric: [], t: ts, f, dropName: false }];
}

function clamp(vec: EvalVector, min: number, max: number, ctx: FunctionContext): EvalVector {
  if (max < min) return [];
  return floatsOf(vec).map((s) => dropName(s, ctx, Math.max(min, Math.min(max, s.f)), ctx.ts));
}

/** The labels absent() reports: equality matchers of the selector, names repeated or not '=' removed. */
export function absentLabels(expr: Expr): Labels {
  const e = unwrapParens(expr);
  const vs = e.kind === 'matrixSelector' ? unwrapParens(e.vectorSelector) : e;
  if (vs.kind !== 'vectorSelector') return [];
  let ls: Labels = [];
  const has = new Set<string>();
  for (const m of vs.matchers) {
    if (m.name === METRIC_NAME) continue;
    if (m.type === '=' && !has.has(m.name)) {
      ls = setLabel(ls, m.name, m.value);
      has.add(m.name);
    } else {
      ls = ls.filter((l) => l.name !== m.name);
    }
  }
  return ls;
}

function stringArg(exprs: Expr[], i: number): string {
  const e = unwrapParens(exprs[i]);
  if (e.kind !== 'string') throw new PromQLExecutionError(`expected a string literal as argument ${i + 1}`);
  return e.value;
}

/** The string arguments after the first (sort_by_label's label names). */
const labelArgs = (exprs: Expr[]): string[] => exprs.slice(1).map((_, i) => stringArg(exprs, i + 1));

function dateFunction(fn: (d: Date) => number): InstantFunction {
  return (args, _exprs, ctx) => {
    if (args.length === 0) return scalarSample(fn(new Date(Math.trunc(ctx.ts / 1000) * 1000)), ctx.ts);
    return floatsOf(args[0]).map((s) => dropName(s, ctx, fn(new Date(Math.trunc(s.f) * 1000)), ctx.ts));
  };
}

function daysInMonth(d: Date): number {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
}

function dayOfYear(d: Date): number {
  return Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
}

// --- Range-vector kernels --------------------------------------------------------

/**
 * rate, increase and delta: the difference between the first and last sample
 * (corrected for counter resets), extrapolated towards the window's edges as
 * Prometheus' extrapolatedRate does.
 */
function extrapolatedRate(isCounter: boolean, isRate: boolean): RangeFunction {
  return (w, ctx) => {
    const nf = w.hi - w.lo;
    if (nf > 0 && w.h.length > 0) {
      ctx.warn(mixedFloatsHistograms(metricNameOf(ctx.metric)));
      return undefined;
    }
    let firstT: number;
    let lastT: number;
    let n: number;
    let result = 0;
    let histogram: FloatHistogram | undefined;
    if (w.h.length > 1) {
      n = w.h.length;
      firstT = w.ht[0];
      lastT = w.ht[n - 1];
      histogram = histogramIncrease(w.h, isCounter, metricNameOf(ctx.metric), ctx);
      if (!histogram) return undefined;
    } else if (nf > 1) {
      n = nf;
      firstT = w.t[w.lo];
      lastT = w.t[w.hi - 1];
      result = w.f[w.hi - 1] - w.f[w.lo];
      if (isCounter) {
        for (let i = w.lo + 1; i < w.hi; i++) if (w.f[i] < w.f[i - 1]) result += w.f[i - 1];
      }
    } else return undefined;
    let durationToStart = (firstT - ctx.rangeStart) / 1000;
    let durationToEnd = (ctx.rangeEnd - lastT) / 1000;
    const sampledInterval = (lastT - firstT) / 1000;
    const averageDurationBetweenSamples = sampledInterval / (n - 1);
    // Extrapolate to an edge only when a sample is about as close to it as to its neighbours.
    const extrapolationThreshold = averageDurationBetweenSamples * 1.1;
    if (durationToStart >= extrapolationThreshold) durationToStart = averageDurationBetweenSamples / 2;
    if (isCounter) {
      // A counter cannot go below zero: do not extrapolate past the point where it would.
      let durationToZero = durationToStart;
      if (!histogram && result > 0 && w.f[w.lo] >= 0) durationToZero = sampledInterval * (w.f[w.lo] / result);
      else if (histogram && histogram.count > 0 && w.h[0].count >= 0) durationToZero = sampledInterval * (w.h[0].count / histogram.count);
      if (durationToZero < durationToStart) durationToStart = durationToZero;
    }
    if (durationToEnd >= extrapolationThreshold) durationToEnd = averageDurationBetweenSamples / 2;
    let factor = (sampledInterval + durationToStart + durationToEnd) / sampledInterval;
    if (isRate) factor /= ctx.rangeMs / 1000;
    if (histogram) return histogram.mul(factor);
    return result * factor;
  };
}

/** irate and idelta: the last two samples only (floats or histograms, not a mix). */
function instantValue(isRate: boolean): RangeFunction {
  return (w, ctx) => {
    // The last two samples over both kinds.
    let p0: { t: number; f: number; h?: FloatHistogram };
    let p1: { t: number; f: number; h?: FloatHistogram };
    if (w.h.length === 0) {
      if (w.hi - w.lo < 2) return undefined;
      p0 = { t: w.t[w.hi - 2], f: w.f[w.hi - 2] };
      p1 = { t: w.t[w.hi - 1], f: w.f[w.hi - 1] };
    } else {
      // The last two samples over both kinds.
      const pts: { t: number; f: number; h?: FloatHistogram }[] = [];
      for (let i = Math.max(w.lo, w.hi - 2); i < w.hi; i++) pts.push({ t: w.t[i], f: w.f[i] });
      for (let i = Math.max(0, w.h.length - 2); i < w.h.length; i++) pts.push({ t: w.ht[i], f: 0, h: w.h[i] });
      if (pts.length < 2) return undefined;
      pts.sort((a, b) => a.t - b.t);
      [p0, p1] = pts.slice(-2);
    }
    const interval = p1.t - p0.t;
    if (interval === 0) return undefined;
    if (p0.h && p1.h) return histogramInstantValue({ t: p0.t, h: p0.h }, { t: p1.t, h: p1.h }, isRate, metricNameOf(ctx.metric), ctx);
    if (p0.h || p1.h) {
      ctx.warn(mixedFloatsHistograms(metricNameOf(ctx.metric)));
      return undefined;
    }
    let result = p1.f;
    // A counter reset leaves the last value as the increase.
    if (!isRate || !(p1.f < p0.f)) result = p1.f - p0.f;
    if (isRate) result /= interval / 1000;
    return result;
  };
}

/** sum_over_time and avg_over_time: floats, or histograms, never a mix. */
function sumOrAvgOverTime(floatFn: (w: RangeWindow) => number, mean: boolean): RangeFunction {
  return (w, ctx) => {
    const nf = w.hi - w.lo;
    if (nf > 0 && w.h.length > 0) {
      ctx.warn(mixedFloatsHistograms(metricNameOf(ctx.metric)));
      return undefined;
    }
    if (nf === 0) return histogramSumOverTime(w.h, mean, metricNameOf(ctx.metric), ctx);
    return floatFn(w);
  };
}

/** last_over_time / first_over_time: the latest (earliest) sample of either kind. */
function edgeOverTime(last: boolean): RangeFunction {
  return (w) => {
    const nf = w.hi - w.lo;
    const nh = w.h.length;
    if (nh === 0) return last ? w.f[w.hi - 1] : w.f[w.lo];
    if (nf === 0) return (last ? w.h[nh - 1] : w.h[0]).copy();
    if (last) return w.ht[nh - 1] < w.t[w.hi - 1] ? w.f[w.hi - 1] : w.h[nh - 1].copy();
    return w.t[w.lo] < w.ht[0] ? w.f[w.lo] : w.h[0].copy();
  };
}

function sumOverTime(w: RangeWindow): number {
  const k = new KahanSum();
  for (let i = w.lo; i < w.hi; i++) k.add(w.f[i]);
  if (k.sum === Infinity || k.sum === -Infinity) return k.sum;
  return k.sum + k.c;
}

function avgOverTime(w: RangeWindow): number {
  // Direct mean with Kahan summation while the sum does not overflow, then incremental.
  let sum = w.f[w.lo];
  let count = 1;
  let mean = 0;
  let c = 0;
  let incremental = false;
  for (let i = w.lo + 1; i < w.hi; i++) {
    const f = w.f[i];
    count = i - w.lo + 1;
    if (!incremental) {
      const [newSum, newC] = kahanInc(f, sum, c);
      if (newSum !== Infinity && newSum !== -Infinity) {
        sum = newSum;
        c = newC;
        continue;
      }
      incremental = true;
      mean = sum / (count - 1);
      c /= count - 1;
    }
    const q = (count - 1) / count;
    [mean, c] = kahanInc(f / count, q * mean, q * c);
  }
  if (incremental) return mean + c;
  return sum / count + c / count;
}

function varianceOverTime(w: RangeWindow): number {
  let count = 0;
  let mean = 0;
  let cMean = 0;
  let aux = 0;
  let cAux = 0;
  for (let i = w.lo; i < w.hi; i++) {
    const f = w.f[i];
    count++;
    const delta = f - (mean + cMean);
    [mean, cMean] = kahanInc(delta / count, mean, cMean);
    [aux, cAux] = kahanInc(delta * (f - (mean + cMean)), aux, cAux);
  }
  return (aux + cAux) / count;
}

function compareOverTime(better: (cur: number, best: number) => boolean, returnTimestamp: boolean): RangeFunction {
  return (w) => {
    let best = w.f[w.lo];
    let bestT = w.t[w.lo];
    for (let i = w.lo; i < w.hi; i++) {
      if (better(w.f[i], best) || Number.isNaN(best)) {
        best = w.f[i];
        bestT = w.t[i];
      }
    }
    return returnTimestamp ? bestT / 1000 : best;
  };
}

function doubleExponentialSmoothing(w: RangeWindow, ctx: RangeContext): number | undefined {
  const [sf, tf] = ctx.scalarArgs;
  if (!(sf > 0 && sf < 1)) throw new PromQLExecutionError(`invalid smoothing factor. Expected: 0 < sf < 1, got: ${sf.toFixed(6)}`);
  if (!(tf > 0 && tf < 1)) throw new PromQLExecutionError(`invalid trend factor. Expected: 0 < tf < 1, got: ${tf.toFixed(6)}`);
  const f = w.f.subarray(w.lo, w.hi);
  const l = f.length;
  let s0 = 0;
  let s1 = f[0];
  let b = f[1] - f[0];
  for (let i = 1; i < l; i++) {
    const x = sf * f[i];
    if (i - 1 !== 0) b = tf * (s1 - s0) + (1 - tf) * b;
    const y = (1 - sf) * (s1 + b);
    s0 = s1;
    s1 = x + y;
  }
  return s1;
}

// --- label_replace / label_join ---------------------------------------------------

const labelReplace: SeriesFunction = (input, exprs) => {
  const dst = stringArg(exprs, 1);
  const repl = stringArg(exprs, 2);
  const src = stringArg(exprs, 3);
  const regexStr = stringArg(exprs, 4);
  try {
    execRegex(regexStr, '');
  } catch {
    throw new PromQLExecutionError(`invalid regular expression in label_replace(): ${regexStr}`);
  }
  if (!isValidLabelName(dst)) throw new PromQLExecutionError(`invalid destination label name in label_replace(): ${dst}`);
  return input.map((s) => {
    const groups = execRegex(regexStr, getLabel(s.metric, src));
    if (!groups) return s;
    const metric = setLabel(s.metric, dst, expandRegexTemplate(repl, groups));
    return { ...s, metric, dropName: dst === METRIC_NAME ? false : s.dropName };
  });
};

const labelJoin: SeriesFunction = (input, exprs) => {
  const dst = stringArg(exprs, 1);
  const sep = stringArg(exprs, 2);
  const srcs: string[] = [];
  for (let i = 3; i < exprs.length; i++) {
    const src = stringArg(exprs, i);
    if (!isValidLabelName(src)) throw new PromQLExecutionError(`invalid source label name in label_join(): ${src}`);
    srcs.push(src);
  }
  if (!isValidLabelName(dst)) throw new PromQLExecutionError(`invalid destination label name in label_join(): ${dst}`);
  return input.map((s) => {
    const metric = setLabel(s.metric, dst, srcs.map((src) => getLabel(s.metric, src)).join(sep));
    return { ...s, metric, dropName: dst === METRIC_NAME ? false : s.dropName };
  });
};

// --- The table -------------------------------------------------------------------

type Sig = [argTypes: ValueType[], returnType: ValueType, opts?: { variadic?: number; experimental?: boolean }];

function def(name: string, [argTypes, returnType, opts]: Sig, impl?: FunctionImpl): FunctionDef {
  return { name, argTypes, returnType, variadic: opts?.variadic ?? 0, experimental: opts?.experimental, impl };
}

const V: ValueType = 'vector';
const M: ValueType = 'matrix';
const S: ValueType = 'scalar';
const STR: ValueType = 'string';

const instant = (call: InstantFunction): FunctionImpl => ({ kind: 'instant', call });
const range = (call: RangeFunction, extra: { keepName?: boolean; absentOverTime?: boolean } = {}): FunctionImpl => ({
  kind: 'range',
  call,
  ...extra,
});

const list: FunctionDef[] = [
  def('abs', [[V], V], instant(simpleFloat(Math.abs))),
  def(
    'absent',
    [[V], V],
    instant((args, exprs, ctx) => (args[0].length > 0 ? [] : [{ metric: absentLabels(exprs[0]), t: ctx.ts, f: 1, dropName: false }])),
  ),
  def(
    'absent_over_time',
    [[M], V],
    range(() => 1, { absentOverTime: true }),
  ),
  def('acos', [[V], V], instant(simpleFloat(Math.acos))),
  def('acosh', [[V], V], instant(simpleFloat(Math.acosh))),
  def('asin', [[V], V], instant(simpleFloat(Math.asin))),
  def('asinh', [[V], V], instant(simpleFloat(Math.asinh))),
  def('atan', [[V], V], instant(simpleFloat(Math.atan))),
  def('atanh', [[V], V], instant(simpleFloat(Math.atanh))),
  def('avg_over_time', [[M], V], range(sumOrAvgOverTime(avgOverTime, true))),
  def('ceil', [[V], V], instant(simpleFloat(Math.ceil))),
  def(
    'changes',
    [[M], V],
    range((w) => changesOrResets(w.t.subarray(w.lo, w.hi), w.f.subarray(w.lo, w.hi), w.ht, w.h, false)),
  ),
  def(
    'clamp',
    [[V, S, S], V],
    instant((args, _e, ctx) => clamp(args[0], args[1][0].f, args[2][0].f, ctx)),
  ),
  def(
    'clamp_max',
    [[V, S], V],
    instant((args, _e, ctx) => clamp(args[0], -Infinity, args[1][0].f, ctx)),
  ),
  def(
    'clamp_min',
    [[V, S], V],
    instant((args, _e, ctx) => clamp(args[0], args[1][0].f, Infinity, ctx)),
  ),
  def('cos', [[V], V], instant(simpleFloat(Math.cos))),
  def('cosh', [[V], V], instant(simpleFloat(Math.cosh))),
  def(
    'count_over_time',
    [[M], V],
    range((w) => w.hi - w.lo + w.h.length),
  ),
  def('days_in_month', [[V], V, { variadic: 1 }], instant(dateFunction(daysInMonth))),
  def('day_of_month', [[V], V, { variadic: 1 }], instant(dateFunction((d) => d.getUTCDate()))),
  def('day_of_week', [[V], V, { variadic: 1 }], instant(dateFunction((d) => d.getUTCDay()))),
  def('day_of_year', [[V], V, { variadic: 1 }], instant(dateFunction(dayOfYear))),
  def('deg', [[V], V], instant(simpleFloat((v) => (v * 180) / Math.PI))),
  def('delta', [[M], V], range(extrapolatedRate(false, false))),
  def('deriv', [[M], V], range(floatsOnly((w) => linearRegression(w.t.subarray(w.lo, w.hi), w.f.subarray(w.lo, w.hi), w.t[w.lo]).slope, 2))),
  def('double_exponential_smoothing', [[M, S, S], V, { experimental: true }], range(floatsOnly(doubleExponentialSmoothing, 2))),
  def(
    'end',
    [[], S, { experimental: true }],
    instant((_a, _e, ctx) => scalarSample(ctx.query.end / 1000, ctx.ts)),
  ),
  def('exp', [[V], V], instant(simpleFloat(Math.exp))),
  def('first_over_time', [[M], V, { experimental: true }], range(edgeOverTime(false), { keepName: true })),
  def('floor', [[V], V], instant(simpleFloat(Math.floor))),
  def('histogram_avg', [[V], V], instant(simpleHistogram((h) => h.sum / h.count))),
  def('histogram_count', [[V], V], instant(simpleHistogram((h) => h.count))),
  def('histogram_fraction', [[S, S, V], V], instant(histogramFraction)),
  def('histogram_quantile', [[S, V], V], instant(histogramQuantile)),
  def('histogram_quantiles', [[V, STR, S, S], V, { variadic: 9, experimental: true }], instant(histogramQuantiles)),
  def('histogram_stddev', [[V], V], instant(histogramStddev)),
  def('histogram_stdvar', [[V], V], instant(histogramStdvar)),
  def('histogram_sum', [[V], V], instant(simpleHistogram((h) => h.sum))),
  def('hour', [[V], V, { variadic: 1 }], instant(dateFunction((d) => d.getUTCHours()))),
  def('idelta', [[M], V], range(instantValue(false))),
  def('increase', [[M], V], range(extrapolatedRate(true, false))),
  def('info', [[V, V], V, { variadic: 1, experimental: true }]),
  def('integral', [[M, S], V, { variadic: 1, experimental: true }]),
  def('irate', [[M], V], range(instantValue(true))),
  def('label_join', [[V, STR, STR, STR], V, { variadic: -1 }], { kind: 'series', call: labelJoin }),
  def('label_replace', [[V, STR, STR, STR, STR], V], { kind: 'series', call: labelReplace }),
  def('last_over_time', [[M], V], range(edgeOverTime(true), { keepName: true })),
  def('ln', [[V], V], instant(simpleFloat(Math.log))),
  def('log10', [[V], V], instant(simpleFloat(Math.log10))),
  def('log2', [[V], V], instant(simpleFloat(Math.log2))),
  def(
    'mad_over_time',
    [[M], V, { experimental: true }],
    range(
      floatsOnly((w) => {
        // A NaN sample makes the result NaN rather than being dropped.
        const values = windowFloats(w);
        if (values.some(Number.isNaN)) return NaN;
        const median = quantile(0.5, values.slice());
        return quantile(
          0.5,
          values.map((f) => Math.abs(f - median)),
        );
      }),
    ),
  ),
  def('max_over_time', [[M], V], range(floatsOnly(compareOverTime((cur, best) => cur > best, false)))),
  def('min_over_time', [[M], V], range(floatsOnly(compareOverTime((cur, best) => cur < best, false)))),
  def(
    'max_of',
    [[S, S], S, { experimental: true }],
    instant((args, _e, ctx) => scalarSample(goMax(args[0][0].f, args[1][0].f), ctx.ts)),
  ),
  def(
    'min_of',
    [[S, S], S, { experimental: true }],
    instant((args, _e, ctx) => scalarSample(goMin(args[0][0].f, args[1][0].f), ctx.ts)),
  ),
  def('minute', [[V], V, { variadic: 1 }], instant(dateFunction((d) => d.getUTCMinutes()))),
  def('month', [[V], V, { variadic: 1 }], instant(dateFunction((d) => d.getUTCMonth() + 1))),
  def(
    'pi',
    [[], S],
    instant((_a, _e, ctx) => scalarSample(Math.PI, ctx.ts)),
  ),
  def(
    'predict_linear',
    [[M, S], V],
    range(
      floatsOnly((w, ctx) => {
        const { slope, intercept } = linearRegression(w.t.subarray(w.lo, w.hi), w.f.subarray(w.lo, w.hi), ctx.ts);
        return slope * ctx.scalarArgs[0] + intercept;
      }, 2),
    ),
  ),
  def(
    'present_over_time',
    [[M], V],
    range(() => 1),
  ),
  def(
    'quantile_over_time',
    [[S, M], V],
    range(
      floatsOnly((w, ctx) => {
        const q = ctx.scalarArgs[0];
        if (Number.isNaN(q) || q < 0 || q > 1) ctx.warnAtArg(0, `PromQL warning: quantile value should be between 0 and 1, got ${formatGoG(q)}`);
        return quantile(q, windowFloats(w));
      }),
    ),
  ),
  def('rad', [[V], V], instant(simpleFloat((v) => (v * Math.PI) / 180))),
  def(
    'range',
    [[], S, { experimental: true }],
    instant((_a, _e, ctx) => scalarSample((ctx.query.end - ctx.query.start) / 1000, ctx.ts)),
  ),
  def('rate', [[M], V], range(extrapolatedRate(true, true))),
  def(
    'resets',
    [[M], V],
    range((w) => changesOrResets(w.t.subarray(w.lo, w.hi), w.f.subarray(w.lo, w.hi), w.ht, w.h, true)),
  ),
  def(
    'round',
    [[V, S], V, { variadic: 1 }],
    instant((args, _e, ctx) => {
      // Multiplying by the inverse avoids some float error, as Prometheus does.
      const inv = 1 / (args.length >= 2 ? args[1][0].f : 1);
      return floatsOf(args[0]).map((s) => dropName(s, ctx, Math.floor(s.f * inv + 0.5) / inv, ctx.ts));
    }),
  ),
  def(
    'scalar',
    [[V], S],
    instant((args, _e, ctx) => {
      const floats = floatsOf(args[0]);
      return scalarSample(floats.length === 1 ? floats[0].f : NaN, ctx.ts);
    }),
  ),
  def('sgn', [[V], V], instant(simpleFloat((v) => (v < 0 ? -1 : v > 0 ? 1 : v)))),
  def('sin', [[V], V], instant(simpleFloat(Math.sin))),
  def('sinh', [[V], V], instant(simpleFloat(Math.sinh))),
  // NaN sorts last either way, as in Prometheus.
  def(
    'sort',
    [[V], V],
    instant((args) => sortByValue(floatsOf(args[0]), false)),
  ),
  def(
    'sort_by_label',
    [[V, STR], V, { variadic: -1, experimental: true }],
    instant((args, exprs) => sortByLabel(args[0], labelArgs(exprs), false)),
  ),
  def(
    'sort_by_label_desc',
    [[V, STR], V, { variadic: -1, experimental: true }],
    instant((args, exprs) => sortByLabel(args[0], labelArgs(exprs), true)),
  ),
  def(
    'sort_desc',
    [[V], V],
    instant((args) => sortByValue(floatsOf(args[0]), true)),
  ),
  def('sqrt', [[V], V], instant(simpleFloat(Math.sqrt))),
  def(
    'start',
    [[], S, { experimental: true }],
    instant((_a, _e, ctx) => scalarSample(ctx.query.start / 1000, ctx.ts)),
  ),
  def('stddev_over_time', [[M], V], range(floatsOnly((w) => Math.sqrt(varianceOverTime(w))))),
  def('stdvar_over_time', [[M], V], range(floatsOnly(varianceOverTime))),
  def(
    'step',
    [[], S, { experimental: true }],
    instant((_a, _e, ctx) => scalarSample(ctx.query.step / 1000, ctx.ts)),
  ),
  def('sum_over_time', [[M], V], range(sumOrAvgOverTime(sumOverTime, false))),
  def('tan', [[V], V], instant(simpleFloat(Math.tan))),
  def('tanh', [[V], V], instant(simpleFloat(Math.tanh))),
  def(
    'time',
    [[], S],
    instant((_a, _e, ctx) => scalarSample(ctx.ts / 1000, ctx.ts)),
  ),
  def(
    'timestamp',
    [[V], V],
    instant((args, _e, ctx) => args[0].map((s) => dropName(s, ctx, s.t / 1000, ctx.ts))),
  ),
  def(
    'ts_of_first_over_time',
    [[M], V, { experimental: true }],
    range((w) => Math.min(w.hi > w.lo ? w.t[w.lo] : Infinity, w.ht.length > 0 ? w.ht[0] : Infinity) / 1000),
  ),
  def(
    'ts_of_last_over_time',
    [[M], V, { experimental: true }],
    range((w) => Math.max(w.hi > w.lo ? w.t[w.hi - 1] : 0, w.ht.length > 0 ? w.ht[w.ht.length - 1] : 0) / 1000),
  ),
  def('ts_of_max_over_time', [[M], V, { experimental: true }], range(floatsOnly(compareOverTime((cur, best) => cur >= best, true)))),
  def('ts_of_min_over_time', [[M], V, { experimental: true }], range(floatsOnly(compareOverTime((cur, best) => cur <= best, true)))),
  def(
    'vector',
    [[S], V],
    instant((args, _e, ctx) => scalarSample(args[0][0].f, ctx.ts)),
  ),
  def('year', [[V], V, { variadic: 1 }], instant(dateFunction((d) => d.getUTCFullYear()))),
];

/** Every PromQL function by name. */
export const FUNCTIONS: Readonly<Record<string, FunctionDef>> = Object.fromEntries(list.map((f) => [f.name, f]));
