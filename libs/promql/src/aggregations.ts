// The PromQL aggregation table and its step-by-step driver: sum, avg, count,
// min, max, group, stddev, stdvar and quantile fold a group into one value;
// topk, bottomk, limitk and limit_ratio select samples (aggregation-k.ts);
// count_values counts values. Each follows Prometheus' aggregation() down to NaN
// handling and to how native histograms are summed, averaged or ignored.

import type { Labels } from '@strata/model';
import { METRIC_NAME } from '@strata/model';
import { evalAggregationK, isSelectingAggregation } from './aggregation-k.ts';
import { StepReader, groupingKey, groupingLabels, groupsOf, type AggregationParams, type StepValue } from './aggregation-input.ts';
import type { AggregateOp } from './ast.ts';
import { PromQLExecutionError } from './errors.ts';
import { formatGoFloat, goQuote } from './go-compat.ts';
import { kahanSumOrMean } from './histogram-functions.ts';
import { IncompatibleSchemaError, type FloatHistogram } from './histogram/float-histogram.ts';
import { setLabel } from './labels.ts';
import { kahanInc, quantile } from './stats.ts';
import type { EvalMatrix, EvalSeries, EvalVector } from './values.ts';

/** Folds one group's float values at one step into a value. */
interface Accumulator {
  add(f: number): void;
  result(param: number): number;
}

type AccumulatorFactory = (first: number) => Accumulator;

class SumAccumulator implements Accumulator {
  private sum: number;
  private c = 0;
  constructor(first: number) {
    this.sum = first;
  }
  add(f: number): void {
    // kahanInc, inlined: this runs once per sample.
    const t = this.sum + f;
    if (t === Infinity || t === -Infinity) this.c = 0;
    else if (Math.abs(this.sum) >= Math.abs(f)) this.c += this.sum - t + f;
    else this.c += f - t + this.sum;
    this.sum = t;
  }
  result(): number {
    return this.sum + this.c;
  }
}

/** Direct mean with Kahan summation until the sum would overflow, then the incremental mean. */
class AvgAccumulator implements Accumulator {
  private sum: number;
  private mean: number;
  private c = 0;
  private count = 1;
  private incremental = false;
  constructor(first: number) {
    this.sum = first;
    this.mean = first;
  }
  add(f: number): void {
    this.count++;
    if (!this.incremental) {
      const [s, c] = kahanInc(f, this.sum, this.c);
      if (s !== Infinity && s !== -Infinity) {
        this.sum = s;
        this.c = c;
        return;
      }
      this.incremental = true;
      this.mean = this.sum / (this.count - 1);
      this.c /= this.count - 1;
    }
    const q = (this.count - 1) / this.count;
    [this.mean, this.c] = kahanInc(f / this.count, q * this.mean, q * this.c);
  }
  result(): number {
    if (this.incremental) return this.mean + this.c;
    return this.sum / this.count + this.c / this.count;
  }
}

/** Welford's online variance, as Prometheus computes stddev and stdvar. */
class VarianceAccumulator implements Accumulator {
  private value: number;
  private mean: number;
  private count = 1;
  private readonly sqrt: boolean;

  constructor(first: number, sqrt: boolean) {
    this.sqrt = sqrt;
    this.value = Number.isFinite(first) ? 0 : NaN;
    this.mean = first;
  }
  add(f: number): void {
    this.count++;
    const delta = f - this.mean;
    this.mean += delta / this.count;
    this.value += delta * (f - this.mean);
  }
  result(): number {
    const v = this.value / this.count;
    return this.sqrt ? Math.sqrt(v) : v;
  }
}

function extremum(better: (cur: number, best: number) => boolean): AccumulatorFactory {
  return (first) => {
    let best = first;
    return {
      add(f) {
        if (better(f, best) || Number.isNaN(best)) best = f;
      },
      result: () => best,
    };
  };
}

/** Aggregations that fold each group into one value per step. */
const GROUP_AGGREGATIONS: Partial<Record<AggregateOp, AccumulatorFactory>> = {
  sum: (first) => new SumAccumulator(first),
  avg: (first) => new AvgAccumulator(first),
  count: () => {
    let n = 1;
    return { add: () => void n++, result: () => n };
  },
  group: () => ({ add: () => undefined, result: () => 1 }),
  min: extremum((cur, best) => best > cur),
  max: extremum((cur, best) => best < cur),
  stddev: (first) => new VarianceAccumulator(first, true),
  stdvar: (first) => new VarianceAccumulator(first, false),
  quantile: (first) => {
    const values = [first];
    return { add: (f) => void values.push(f), result: (q) => quantile(q, values) };
  },
};

/** Aggregations that skip native histograms (with an info annotation). */
const FLOAT_ONLY = new Set<AggregateOp>(['min', 'max', 'stddev', 'stdvar', 'quantile']);
/** Aggregations that count native histograms like floats. */
const COUNTING = new Set<AggregateOp>(['count', 'group']);

export function isKnownAggregation(op: AggregateOp): boolean {
  return op in GROUP_AGGREGATIONS || isSelectingAggregation(op) || op === 'count_values';
}

/** Evaluates an aggregation (other than count_values) over all steps of its already evaluated input. */
export function evalAggregation(p: AggregationParams): EvalMatrix {
  const { expr, input } = p;
  if (isSelectingAggregation(expr.op)) return evalAggregationK(p);
  const { groupOf, outputs } = groupsOf(
    input.map((s) => s.metric),
    new Set(expr.grouping),
    expr.without,
  );
  const numGroups = outputs.length;
  const reader = new StepReader(input);

  const factory = GROUP_AGGREGATIONS[expr.op];
  if (!factory) throw new PromQLExecutionError(`aggregation ${expr.op}() is not supported yet`);
  if (FAST_OPS.has(expr.op) && input.every((x) => !x.histograms || x.histograms.length === 0)) {
    return evalFloatGroups(p, groupOf, numGroups, outputs);
  }
  if (expr.op === 'quantile' && p.params) {
    for (const q of p.params) {
      if (Number.isNaN(q) || q < 0 || q > 1) p.warn(`PromQL warning: quantile value should be between 0 and 1, got ${formatGoFloat(q)}`);
    }
  }

  const ignored = `PromQL info: ignored histogram in ${expr.op} aggregation`;
  const groups = new Array<Group | undefined>(numGroups);
  for (let ts = p.start, step = 0; ts <= p.end; ts += p.interval, step++) {
    p.checkCancel();
    groups.fill(undefined);
    const v = reader.value;
    for (let si = 0; si < input.length; si++) {
      if (!reader.next(si, ts)) continue;
      if (v.h && FLOAT_ONLY.has(expr.op)) {
        p.infoAtExpr(ignored);
        continue;
      }
      const g = groupOf[si];
      const group = groups[g];
      if (group === undefined) groups[g] = newGroup(expr.op, input[si], v, factory);
      else addToGroup(group, expr.op, input[si], v, factory);
    }
    emitGroups(p, groups, outputs, ts, p.params ? p.params[step] : NaN);
  }
  return outputs.filter((s) => s.floats.length > 0 || (s.histograms?.length ?? 0) > 0);
}

/** A group started by its first sample at a step: a histogram (sum, avg) or an accumulator. */
function newGroup(op: AggregateOp, series: EvalSeries, v: StepValue, factory: AccumulatorFactory): Group {
  const group: Group = { dropName: series.dropName, hasFloat: false, hasHistogram: false, incompatible: false, counterReset: false, notCounterReset: false };
  if (v.h && !COUNTING.has(op)) {
    group.hasHistogram = true;
    group.histograms = [v.h];
    group.histogramNames = [nameOf(series.metric)];
    noteHint(group, v.h);
  } else {
    group.hasFloat = !v.h;
    group.acc = factory(v.f);
  }
  return group;
}

/** A later sample of the group at the step. */
function addToGroup(group: Group, op: AggregateOp, series: EvalSeries, v: StepValue, factory: AccumulatorFactory): void {
  if (series.dropName) group.dropName = true;
  if (group.incompatible) return;
  if (!v.h || COUNTING.has(op)) {
    group.hasFloat ||= !v.h;
    // After a leading histogram the float result is discarded (mixed group); it only needs to exist.
    if (group.acc) group.acc.add(v.f);
    else group.acc = factory(v.f);
    return;
  }
  group.hasHistogram = true;
  if (!group.histograms) return; // The group started with floats: its result is invalid anyway.
  noteHint(group, v.h);
  group.histograms.push(v.h);
  group.histogramNames!.push(nameOf(series.metric));
}

/** Each group's result at the step (`param`: quantile's) into its output series; a mixed or incompatible group gives none. */
function emitGroups(p: AggregationParams, groups: (Group | undefined)[], outputs: EvalSeries[], ts: number, param: number): void {
  const op = p.expr.op;
  for (let g = 0; g < groups.length; g++) {
    const group = groups[g];
    if (group === undefined) continue;
    if (op === 'sum' || op === 'avg') {
      if (group.hasFloat && group.hasHistogram) {
        p.warnAtExpr('PromQL warning: encountered a mix of histograms and floats for aggregation');
        continue;
      }
      if (group.hasHistogram && group.histograms) {
        const h = combineHistograms(group, op === 'avg', p);
        if (!h) continue;
        if (group.counterReset && group.notCounterReset) p.warnAtExpr('PromQL warning: conflicting counter resets during histogram aggregation');
        (outputs[g].histograms ??= []).push({ t: ts, h: h.compact(0) });
        if (group.dropName) outputs[g].dropName = true;
        continue;
      }
    }
    if (!group.acc) continue;
    outputs[g].floats.push({ t: ts, f: group.acc.result(param) });
    if (group.dropName) outputs[g].dropName = true;
  }
}

const FAST_OPS = new Set<AggregateOp>(['sum', 'avg', 'count', 'group', 'min', 'max']);

/** Whether an aggregation can fold float samples with FloatGroupCells (no parameter, no histograms). */
export function isFloatGroupOp(op: AggregateOp): boolean {
  return FAST_OPS.has(op);
}

/**
 * One cell per (group, step) of sum, avg, count, group, min or max over
 * floats: the same arithmetic, in the same order per cell, as the
 * accumulators above, in typed arrays instead of an object per group and step.
 * Cells are filled series by series (add), then read out (emit).
 */
export class FloatGroupCells {
  private readonly count: Float64Array;
  private readonly sum: Float64Array; // sum, or min/max's best value
  private readonly comp: Float64Array; // Kahan compensation
  private readonly mean: Float64Array | undefined;
  private readonly incremental: Uint8Array | undefined;

  private readonly op: AggregateOp;
  private readonly numGroups: number;
  readonly numSteps: number;

  constructor(op: AggregateOp, numGroups: number, numSteps: number) {
    this.op = op;
    this.numGroups = numGroups;
    this.numSteps = numSteps;
    const cells = numGroups * numSteps;
    this.count = new Float64Array(cells);
    this.sum = new Float64Array(cells);
    this.comp = new Float64Array(cells);
    this.mean = op === 'avg' ? new Float64Array(cells) : undefined;
    this.incremental = op === 'avg' ? new Uint8Array(cells) : undefined;
  }

  add(cell: number, f: number): void {
    const { sum, comp, mean } = this;
    const n = ++this.count[cell];
    if (n === 1) {
      sum[cell] = f;
      if (mean) mean[cell] = f;
      return;
    }
    switch (this.op) {
      case 'sum':
        kahanAddInto(sum, comp, cell, f);
        break;
      case 'avg':
        if (!this.incremental![cell]) {
          const before = sum[cell];
          const beforeC = comp[cell];
          kahanAddInto(sum, comp, cell, f);
          if (sum[cell] !== Infinity && sum[cell] !== -Infinity) break;
          // The running sum overflowed: continue with the incremental mean.
          this.incremental![cell] = 1;
          mean![cell] = before / (n - 1);
          comp[cell] = beforeC / (n - 1);
        }
        {
          const q = (n - 1) / n;
          mean![cell] *= q;
          comp[cell] *= q;
          kahanAddInto(mean!, comp, cell, f / n);
        }
        break;
      case 'min':
        if (sum[cell] > f || Number.isNaN(sum[cell])) sum[cell] = f;
        break;
      case 'max':
        if (sum[cell] < f || Number.isNaN(sum[cell])) sum[cell] = f;
        break;
    }
  }

  /** Appends each group's points (steps from start by interval) to outputs[g].floats; returns the outputs with any. */
  emit(outputs: EvalSeries[], start: number, interval: number): EvalSeries[] {
    const { count, sum, comp, mean, incremental, numSteps } = this;
    for (let g = 0; g < this.numGroups; g++) {
      const floats = outputs[g].floats;
      for (let step = 0; step < numSteps; step++) {
        const cell = g * numSteps + step;
        const n = count[cell];
        if (n === 0) continue;
        let f: number;
        switch (this.op) {
          case 'sum':
            f = sum[cell] + comp[cell];
            break;
          case 'avg':
            f = incremental![cell] ? mean![cell] + comp[cell] : sum[cell] / n + comp[cell] / n;
            break;
          case 'count':
            f = n;
            break;
          case 'group':
            f = 1;
            break;
          default:
            f = sum[cell];
        }
        floats.push({ t: start + step * interval, f });
      }
    }
    return outputs.filter((s) => s.floats.length > 0);
  }
}

/** sum, avg, count, group, min and max over float-only input, series by series (see FloatGroupCells). */
function evalFloatGroups(p: AggregationParams, groupOf: Int32Array, numGroups: number, outputs: EvalSeries[]): EvalMatrix {
  const { input, expr } = p;
  const numSteps = Math.floor((p.end - p.start) / p.interval) + 1;
  const cells = new FloatGroupCells(expr.op, numGroups, numSteps);
  for (let si = 0; si < input.length; si++) {
    if ((si & 1023) === 0) p.checkCancel();
    const series = input[si];
    const fl = series.floats;
    if (fl.length === 0) continue;
    const g = groupOf[si];
    if (series.dropName) outputs[g].dropName = true;
    const base = g * numSteps;
    for (let i = 0; i < fl.length; i++) cells.add(base + Math.round((fl[i].t - p.start) / p.interval), fl[i].f);
  }
  return cells.emit(outputs, p.start, p.interval);
}

/** Kahan-adds f to sums[i] with compensation comps[i] (Prometheus' kahanSumInc), in place. */
function kahanAddInto(sums: Float64Array, comps: Float64Array, i: number, f: number): void {
  const s = sums[i];
  const t = s + f;
  if (t === Infinity || t === -Infinity) comps[i] = 0;
  else if (Math.abs(s) >= Math.abs(f)) comps[i] += s - t + f;
  else comps[i] += f - t + s;
  sums[i] = t;
}

interface Group {
  acc?: Accumulator;
  /** The group's histograms at this step (sum and avg), with their metric names for warnings. */
  histograms?: FloatHistogram[];
  histogramNames?: string[];
  hasFloat: boolean;
  hasHistogram: boolean;
  incompatible: boolean;
  counterReset: boolean;
  notCounterReset: boolean;
  dropName: boolean;
}

const nameOf = (ls: Labels) => ls.find((l) => l.name === METRIC_NAME)?.value ?? '';

/** sum or avg of a group's histograms (Kahan-compensated); undefined, with a warning, when they cannot be combined. */
function combineHistograms(g: Group, mean: boolean, p: AggregationParams): FloatHistogram | undefined {
  const hs = g.histograms!;
  let reconciled = false;
  try {
    const h = kahanSumOrMean(hs, mean, (r) => {
      if (r.nhcbBoundsReconciled) reconciled = true;
    });
    if (reconciled) p.infoAtExpr('PromQL info: mismatched custom buckets were reconciled during aggregation');
    return h;
  } catch (err) {
    if (!(err instanceof IncompatibleSchemaError)) throw err;
    const first = hs.findIndex((h) => h.usesCustomBuckets() !== hs[0].usesCustomBuckets());
    p.warnAtExpr(
      `PromQL warning: vector contains a mix of histograms with exponential and custom buckets schemas for metric name ${goQuote(g.histogramNames![first] ?? '')}`,
    );
    return undefined;
  }
}

function noteHint(g: Group, h: FloatHistogram): void {
  if (h.counterResetHint === 'reset') g.counterReset = true;
  else if (h.counterResetHint === 'not_reset') g.notCounterReset = true;
}

/**
 * count_values at one step: counts samples per (group, value), the value
 * written into `valueLabel` as Go formats floats (histograms as their String()).
 */
export function countValuesStep(vec: EvalVector, grouping: ReadonlySet<string>, without: boolean, valueLabel: string, ts: number): EvalVector {
  const groups = new Map<string, { metric: Labels; count: number }>();
  const effectiveGrouping = without ? grouping : new Set([...grouping, valueLabel]);
  for (const s of vec) {
    const metric = setLabel(s.metric, valueLabel, s.h ? s.h.toString() : formatGoFloat(s.f));
    const key = groupingKey(metric, effectiveGrouping, without);
    const g = groups.get(key);
    if (g) g.count++;
    else groups.set(key, { metric: groupingLabels(metric, effectiveGrouping, without), count: 1 });
  }
  return [...groups.values()].map((g) => ({ metric: g.metric, t: ts, f: g.count, dropName: false }));
}
