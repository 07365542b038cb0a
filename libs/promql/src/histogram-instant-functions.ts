// The histogram_* instant functions: histogram_quantile(s) and
// histogram_fraction over native histograms and classic `_bucket{le}` series
// (never both for the same labels at once), and histogram_count, _sum, _avg,
// _stddev and _stdvar of native histograms, with Prometheus' annotations.

import type { Labels } from '@strata/model';
import { METRIC_NAME } from '@strata/model';
import { unwrapParens } from './ast.ts';
import type { Expr } from './ast.ts';
import { PromQLExecutionError } from './errors.ts';
import type { FunctionContext, InstantFunction } from './function-types.ts';
import { formatGoG, goQuote, parseGoFloat } from './go-compat.ts';
import type { FloatHistogram } from './histogram/float-histogram.ts';
import { histogramFraction as nativeFraction, histogramQuantile as nativeQuantile, histogramVariance } from './histogram/stats.ts';
import type { NaNNote } from './histogram/stats.ts';
import { dropMetadataLabels, getLabel, labelsWithout, setLabel, signature } from './labels.ts';
import type { Bucket } from './stats.ts';
import { bucketFraction, bucketQuantile } from './stats.ts';
import type { EvalSample, EvalVector } from './values.ts';

function stringArg(exprs: Expr[], i: number): string {
  const e = unwrapParens(exprs[i]);
  if (e.kind !== 'string') throw new PromQLExecutionError(`expected a string literal as argument ${i + 1}`);
  return e.value;
}

// --- histogram_quantile(s) and histogram_fraction over classic buckets -------------

interface ClassicHistogram {
  /** The labels without le (name included), as Prometheus groups buckets. */
  key: string;
  metric: Labels;
  buckets: Bucket[];
}

/**
 * Groups `_bucket` series by their labels without `le` (and the name): one
 * classic histogram per group. A missing or malformed `le` is a warning.
 */
function classicHistograms(vec: EvalVector, ctx: FunctionContext, arg: number): ClassicHistogram[] {
  const groups = new Map<string, ClassicHistogram>();
  const excluded = new Set([METRIC_NAME, 'le']);
  const leOnly = new Set(['le']);
  for (const s of vec) {
    const le = getLabel(s.metric, 'le');
    const upperBound = parseGoFloat(le);
    if (upperBound === undefined) {
      const name = getLabel(s.metric, METRIC_NAME);
      ctx.warn(
        `PromQL warning: bucket label "le" is missing or has a malformed value of ${goQuote(le)}` + (name ? ` for metric name ${goQuote(name)}` : ''),
        arg,
      );
      continue;
    }
    const key = signature(s.metric, leOnly, false);
    let g = groups.get(key);
    if (!g) {
      let metric = labelsWithout(s.metric, excluded);
      if (!ctx.delayedNameRemoval) metric = dropMetadataLabels(metric);
      else {
        const name = getLabel(s.metric, METRIC_NAME);
        if (name) metric = setLabel(metric, METRIC_NAME, name);
      }
      g = { key, metric, buckets: [] };
      groups.set(key, g);
    }
    g.buckets.push({ upperBound, count: s.f });
  }
  return [...groups.values()];
}

function checkQuantile(q: number, ctx: FunctionContext, arg: number): void {
  if (Number.isNaN(q) || q < 0 || q > 1) ctx.warn(`PromQL warning: quantile value should be between 0 and 1, got ${formatGoG(q)}`, arg);
}

/** The quantile of one classic histogram, noting when its buckets had to be made monotonic. */
function classicQuantile(q: number, h: ClassicHistogram, ctx: FunctionContext, arg: number): number {
  const { value, fix } = bucketQuantile(
    q,
    h.buckets.map((b) => ({ ...b })),
  );
  if (fix.forcedMonotonic) {
    const name = ctx.delayedNameRemoval ? getLabel(h.metric, METRIC_NAME) : '';
    ctx.info(
      'PromQL info: input to histogram_quantile needed to be fixed for monotonicity (see https://prometheus.io/docs/prometheus/latest/querying/functions/#histogram_quantile)' +
        (name ? ` for metric name ${goQuote(name)}` : ''),
      arg,
    );
  }
  return value;
}

/**
 * Splits histogram_* input into native samples and classic bucket groups; a
 * native histogram with the same labels as a classic group at this step
 * makes both unusable (Prometheus' resetHistograms).
 */
function nativeAndClassic(vec: EvalVector, ctx: FunctionContext, arg: number): { natives: EvalSample[]; classics: ClassicHistogram[] } {
  const natives = vec.filter((s) => s.h);
  const classicSamples = natives.length > 0 ? vec.filter((s) => !s.h) : vec;
  let classics = classicHistograms(classicSamples, ctx, arg);
  if (natives.length === 0 || classics.length === 0) return { natives, classics };
  const byKey = new Map(classics.map((c) => [c.key, c]));
  const keptNatives: EvalSample[] = [];
  for (const n of natives) {
    const c = byKey.get(signature(n.metric, new Set(), false));
    if (c && c.buckets.length > 0) {
      const name = getLabel(n.metric, METRIC_NAME);
      ctx.warn('PromQL warning: vector contains a mix of classic and native histograms' + (name ? ` for metric name ${goQuote(name)}` : ''), arg);
      byKey.delete(c.key);
      continue;
    }
    keptNatives.push(n);
  }
  classics = classics.filter((c) => byKey.has(c.key));
  return { natives: keptNatives, classics };
}

function nativeMetric(s: EvalSample, ctx: FunctionContext): Labels {
  return ctx.delayedNameRemoval ? s.metric : dropMetadataLabels(s.metric);
}

function noteNaN(note: NaNNote, s: EvalSample, ctx: FunctionContext, arg: number): void {
  if (!note) return;
  const name = getLabel(s.metric, METRIC_NAME);
  const text =
    note === 'quantile-nan-result'
      ? 'input to histogram_quantile has NaN observations, result is NaN'
      : note === 'quantile-nan-skew'
        ? 'input to histogram_quantile has NaN observations, result is skewed higher'
        : 'input to histogram_fraction has NaN observations, which are excluded from all fractions';
  ctx.info(`PromQL info: ${text}` + (name ? ` for metric name ${goQuote(name)}` : ''), arg);
}

export const histogramQuantile: InstantFunction = (args, _exprs, ctx) => {
  const q = args[0][0]?.f;
  if (q === undefined) return [];
  checkQuantile(q, ctx, 0);
  const { natives, classics } = nativeAndClassic(args[1], ctx, 1);
  const out: EvalVector = [];
  for (const n of natives) {
    const r = nativeQuantile(q, n.h!);
    noteNaN(r.note, n, ctx, 0);
    out.push({ metric: nativeMetric(n, ctx), t: ctx.ts, f: r.value, dropName: true });
  }
  for (const h of classics) out.push({ metric: h.metric, t: ctx.ts, f: classicQuantile(q, h, ctx, 1), dropName: true });
  return out;
};

/** Prometheus' labels.FormatOpenMetricsFloat: %g, with ".0" on integral values. */
function formatOpenMetricsFloat(v: number): string {
  const s = formatGoG(v);
  return /^[+-]?\d+$/.test(s) ? s + '.0' : s;
}

export const histogramQuantiles: InstantFunction = (args, exprs, ctx) => {
  const label = stringArg(exprs, 1);
  const qs: number[] = [];
  for (let i = 2; i < args.length; i++) {
    const q = args[i][0]?.f ?? NaN;
    checkQuantile(q, ctx, i);
    qs.push(q);
  }
  const { natives, classics } = nativeAndClassic(args[0], ctx, 0);
  const out: EvalVector = [];
  for (const q of qs) {
    const qLabel = formatOpenMetricsFloat(q);
    for (const n of natives) {
      const r = nativeQuantile(q, n.h!);
      noteNaN(r.note, n, ctx, 0);
      out.push({ metric: setLabel(nativeMetric(n, ctx), label, qLabel), t: ctx.ts, f: r.value, dropName: true });
    }
    for (const h of classics) {
      out.push({ metric: setLabel(h.metric, label, qLabel), t: ctx.ts, f: classicQuantile(q, h, ctx, 1), dropName: true });
    }
  }
  return out;
};

export const histogramFraction: InstantFunction = (args, _exprs, ctx) => {
  const lower = args[0][0]?.f;
  const upper = args[1][0]?.f;
  if (lower === undefined || upper === undefined) return [];
  const { natives, classics } = nativeAndClassic(args[2], ctx, 2);
  const out: EvalVector = [];
  for (const n of natives) {
    const r = nativeFraction(lower, upper, n.h!);
    noteNaN(r.note, n, ctx, 0);
    out.push({ metric: nativeMetric(n, ctx), t: ctx.ts, f: r.value, dropName: true });
  }
  for (const h of classics) {
    out.push({
      metric: h.metric,
      t: ctx.ts,
      f: bucketFraction(
        lower,
        upper,
        h.buckets.map((b) => ({ ...b })),
      ),
      dropName: true,
    });
  }
  return out;
};

/** A function of each native histogram sample; float samples are left out. The name goes, as for floats. */
export function simpleHistogram(fn: (h: FloatHistogram) => number): InstantFunction {
  return (args, _e, ctx) =>
    args[0]
      .filter((s) => s.h)
      .map((s) => ({
        metric: ctx.delayedNameRemoval ? s.metric : s.metric.filter((l) => l.name !== METRIC_NAME),
        t: ctx.ts,
        f: fn(s.h!),
        dropName: true,
      }));
}

export const histogramStddev = simpleHistogram((h) => Math.sqrt(histogramVariance(h)));
export const histogramStdvar = simpleHistogram(histogramVariance);
