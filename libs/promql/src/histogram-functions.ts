// The native-histogram halves of PromQL functions: rate/increase/delta and
// irate/idelta over histogram samples, sum/avg_over_time of histograms,
// changes/resets over mixed float and histogram windows, and the instant
// functions that read histograms (histogram_count, _sum, _avg, _stddev,
// _stdvar). Semantics and annotations follow Prometheus' functions.go.

import { goQuote } from './go-compat.ts';
import { FloatHistogram, IncompatibleSchemaError } from './histogram/float-histogram.ts';

/** Where a kernel reports annotations (already positioned by the engine). */
export interface Annotate {
  warn(message: string): void;
  info(message: string): void;
}

export const mixedFloatsHistograms = (name: string) => `PromQL warning: encountered a mix of histograms and floats for metric name ${goQuote(name)}`;
export const mixedExponentialCustom = (name: string) =>
  `PromQL warning: vector contains a mix of histograms with exponential and custom buckets schemas for metric name ${goQuote(name)}`;
export const ignoredHistogramsInMixedRange = (name: string) =>
  `PromQL info: ignored histograms in a range containing both floats and histograms for metric name ${goQuote(name)}`;
const notCounter = (name: string) => `PromQL warning: this native histogram metric is not a counter: ${goQuote(name)}`;
const notGauge = (name: string) => `PromQL warning: this native histogram metric is not a gauge: ${goQuote(name)}`;
const reconciled = (what: string) => `PromQL info: mismatched custom buckets were reconciled during ${what}`;

/**
 * The increase of histogram samples (Prometheus' histogramRate): last minus
 * first, adding back what a counter reset lost. Undefined (with a warning)
 * when the samples cannot be combined.
 */
export function histogramIncrease(hs: FloatHistogram[], isCounter: boolean, name: string, a: Annotate): FloatHistogram | undefined {
  let prev = hs[0];
  let usingCustom = prev.usesCustomBuckets();
  const last = hs[hs.length - 1];
  if (isCounter && (prev.counterResetHint === 'gauge' || last.counterResetHint === 'gauge')) a.warn(notCounter(name));
  // A reset between the first two samples: the first one's layout does not matter.
  if (isCounter && hs.length > 1 && hs[1].detectReset(prev)) {
    const empty = new FloatHistogram();
    empty.schema = hs[1].schema;
    empty.customValues = hs[1].customValues;
    prev = empty;
    usingCustom = hs[1].usesCustomBuckets();
  }
  if (last.usesCustomBuckets() !== usingCustom) {
    a.warn(mixedExponentialCustom(name));
    return undefined;
  }
  let minSchema = Math.min(last.schema, prev.schema);
  for (const curr of hs.slice(1, -1)) {
    if (!isCounter) continue;
    if (curr.counterResetHint === 'gauge') a.warn(notCounter(name));
    minSchema = Math.min(minSchema, curr.schema);
    if (curr.usesCustomBuckets() !== usingCustom) {
      a.warn(mixedExponentialCustom(name));
      return undefined;
    }
  }
  const h = last.usesCustomBuckets() ? last.copy() : last.copyToSchema(minSchema);
  try {
    if (h.sub(prev).nhcbBoundsReconciled) a.info(reconciled('subtraction'));
    if (isCounter) {
      let p = prev;
      for (const curr of hs.slice(1)) {
        if (curr.detectReset(p) && h.add(p).nhcbBoundsReconciled) a.info(reconciled('addition'));
        p = curr;
      }
    } else if (hs[0].counterResetHint !== 'gauge' || last.counterResetHint !== 'gauge') {
      a.warn(notGauge(name));
    }
  } catch (err) {
    if (!(err instanceof IncompatibleSchemaError)) throw err;
    a.warn(mixedExponentialCustom(name));
    return undefined;
  }
  h.counterResetHint = 'gauge';
  return h.compact(0);
}

/** irate / idelta of the last two histogram samples. */
export function histogramInstantValue(
  prev: { t: number; h: FloatHistogram },
  last: { t: number; h: FloatHistogram },
  isRate: boolean,
  name: string,
  a: Annotate,
): FloatHistogram | undefined {
  const result = last.h.copy();
  if (isRate && (last.h.counterResetHint === 'gauge' || prev.h.counterResetHint === 'gauge')) a.warn(notCounter(name));
  if (!isRate && (last.h.counterResetHint !== 'gauge' || prev.h.counterResetHint !== 'gauge')) a.warn(notGauge(name));
  if (!isRate || !last.h.detectReset(prev.h)) {
    try {
      if (result.sub(prev.h).nhcbBoundsReconciled) a.info(reconciled('subtraction'));
    } catch (err) {
      if (!(err instanceof IncompatibleSchemaError)) throw err;
      a.warn(mixedExponentialCustom(name));
      return undefined;
    }
  }
  result.counterResetHint = 'gauge';
  result.compact(0);
  if (isRate) result.div((last.t - prev.t) / 1000);
  return result;
}

/**
 * The sum (mean = false) or average (mean = true) of histograms with Kahan
 * compensation; the average is the direct mean while the running sum stays
 * finite, then the incremental mean (Prometheus' sum_over_time/avg_over_time
 * and sum/avg). Throws IncompatibleSchemaError for a mix of exponential and
 * custom buckets; calls onAdd with each combination's flags.
 */
export function kahanSumOrMean(hs: FloatHistogram[], mean: boolean, onAdd: (r: { nhcbBoundsReconciled: boolean }) => void): FloatHistogram {
  let sum = hs[0].copy();
  let comp: FloatHistogram | undefined;
  if (!mean) {
    for (const h of hs.slice(1)) {
      const r = sum.kahanAdd(h, comp);
      comp = r.comp;
      onAdd(r);
    }
    if (comp) onAdd(sum.add(comp));
    return sum;
  }
  let avg: FloatHistogram | undefined;
  let count = 1;
  for (const h of hs.slice(1)) {
    count++;
    if (!avg) {
      const trial = sum.copy();
      const r = trial.kahanAdd(h, comp?.copy());
      onAdd(r);
      if (!trial.hasOverflow()) {
        sum = trial;
        comp = r.comp;
        continue;
      }
      // The running sum overflowed: continue with the incremental mean.
      avg = sum.copy().div(count - 1);
      comp?.div(count - 1);
    }
    const q = (count - 1) / count;
    comp?.mul(q);
    const r = avg.mul(q).kahanAdd(h.copy().div(count), comp);
    comp = r.comp;
    onAdd(r);
  }
  if (avg) {
    if (comp) onAdd(avg.add(comp));
    return avg;
  }
  sum.div(count);
  if (comp) onAdd(sum.add(comp.div(count)));
  return sum;
}

/** sum_over_time (mean = false) or avg_over_time (mean = true) of histogram samples. */
export function histogramSumOverTime(hs: FloatHistogram[], mean: boolean, name: string, a: Annotate): FloatHistogram | undefined {
  let counterReset = false;
  let notCounterReset = false;
  let mismatched = false;
  for (const h of hs) {
    if (h.counterResetHint === 'reset') counterReset = true;
    else if (h.counterResetHint === 'not_reset') notCounterReset = true;
  }
  let result: FloatHistogram;
  try {
    result = kahanSumOrMean(hs, mean, (r) => {
      if (r.nhcbBoundsReconciled) mismatched = true;
    });
  } catch (err) {
    if (!(err instanceof IncompatibleSchemaError)) throw err;
    a.warn(mixedExponentialCustom(name));
    return undefined;
  }
  if (counterReset && notCounterReset) a.warn('PromQL warning: conflicting counter resets during histogram aggregation');
  if (mismatched) a.info(reconciled('aggregation'));
  return result;
}

/** changes() or resets() over a window's floats and histograms merged in time order. */
export function changesOrResets(t: Float64Array, f: Float64Array, ht: Float64Array, h: FloatHistogram[], resets: boolean): number {
  let n = 0;
  let i = 0;
  let j = 0;
  let prev: { f: number; h?: FloatHistogram } | undefined;
  while (i < t.length || j < ht.length) {
    let cur: { f: number; h?: FloatHistogram };
    if (j >= ht.length || (i < t.length && t[i] < ht[j])) cur = { f: f[i++] };
    else cur = { f: 0, h: h[j++] };
    if (prev) {
      if (!prev.h && !cur.h) {
        if (resets ? cur.f < prev.f : cur.f !== prev.f && !(Number.isNaN(cur.f) && Number.isNaN(prev.f))) n++;
      } else if (!prev.h || !cur.h) n++;
      else if (resets ? cur.h.detectReset(prev.h) : !cur.h.equals(prev.h)) n++;
    }
    prev = cur;
  }
  return n;
}
