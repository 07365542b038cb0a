// The PromQL aggregation table and its step-by-step driver: sum, avg, count,
// min, max, group, stddev, stdvar and quantile fold a group into one value;
// topk, bottomk and limitk select samples; count_values counts values. Each
// follows Prometheus' aggregation()/aggregationK() down to NaN handling.

import type { Labels } from '@strata/model';
import { METRIC_NAME } from '@strata/model';
import type { AggregateExpr, AggregateOp } from './ast.ts';
import { PromQLExecutionError } from './errors.ts';
import { formatGoFloat } from './go-compat.ts';
import { keyOf, labelsKeep, labelsWithout, setLabel, signature } from './labels.ts';
import { compareNaNFirst, kahanInc, nanLast, quantile } from './stats.ts';
import type { EvalMatrix, EvalSeries, EvalVector } from './values.ts';

/** Folds one group's values at one step into a value. */
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
    [this.sum, this.c] = kahanInc(f, this.sum, this.c);
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
  constructor(
    first: number,
    private readonly sqrt: boolean,
  ) {
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

/** Aggregations that select input samples, by the order they prefer samples in; NaN only when nothing else is left. */
const SELECTING_AGGREGATIONS: Partial<Record<AggregateOp, (a: number, b: number) => number>> = {
  topk: nanLast((a, b) => compareNaNFirst(b, a)),
  bottomk: nanLast(compareNaNFirst),
  // Input order.
  limitk: () => 0,
};

export function isKnownAggregation(op: AggregateOp): boolean {
  return op in GROUP_AGGREGATIONS || op in SELECTING_AGGREGATIONS || op === 'count_values';
}

export interface AggregationParams {
  expr: AggregateExpr;
  input: EvalMatrix;
  /** The scalar parameter at each step (topk's k, quantile's q). */
  params: number[] | undefined;
  start: number;
  end: number;
  interval: number;
  delayedNameRemoval: boolean;
  warn(message: string): void;
  checkCancel(): void;
}

const MAX_INT64_FLOAT = 9223372036854774784;
const MIN_INT64_FLOAT = -9223372036854775808;

/** The label set of a group's output series: the `by` labels, or all but the `without` ones and the name. */
export function groupingLabels(metric: Labels, grouping: ReadonlySet<string>, without: boolean): Labels {
  if (without) return labelsWithout(metric, grouping).filter((l) => l.name !== METRIC_NAME);
  if (grouping.size === 0) return [];
  return labelsKeep(metric, grouping);
}

export function groupingKey(metric: Labels, grouping: ReadonlySet<string>, without: boolean): string {
  if (without) return signature(metric, new Set([...grouping, METRIC_NAME]), false);
  if (grouping.size === 0) return '';
  return signature(metric, grouping, true);
}

/** Evaluates an aggregation (other than count_values) over all steps of its already evaluated input. */
export function evalAggregation(p: AggregationParams): EvalMatrix {
  const { expr, input } = p;
  const grouping = new Set(expr.grouping);
  const groupOf: number[] = [];
  const keys = new Map<string, number>();
  const outputs: EvalSeries[] = [];
  for (const s of input) {
    const key = groupingKey(s.metric, grouping, expr.without);
    let g = keys.get(key);
    if (g === undefined) {
      g = keys.size;
      keys.set(key, g);
      outputs.push({ metric: groupingLabels(s.metric, grouping, expr.without), floats: [], dropName: false });
    }
    groupOf.push(g);
  }
  const numGroups = keys.size;
  const cursors = new Int32Array(input.length);
  const valueAt = (si: number, ts: number): number | undefined => {
    const fl = input[si].floats;
    const c = cursors[si];
    if (c < fl.length && fl[c].t === ts) {
      cursors[si] = c + 1;
      return fl[c].f;
    }
    return undefined;
  };

  const select = SELECTING_AGGREGATIONS[expr.op];
  if (select) return evalSelecting(p, select, groupOf, numGroups, valueAt);

  const factory = GROUP_AGGREGATIONS[expr.op];
  if (!factory) throw new PromQLExecutionError(`aggregation ${expr.op}() is not supported yet`);
  if (expr.op === 'quantile' && p.params) {
    for (const q of p.params) {
      if (Number.isNaN(q) || q < 0 || q > 1) p.warn(`PromQL warning: quantile value should be between 0 and 1, got ${formatGoFloat(q)}`);
    }
  }

  const accs: (Accumulator | undefined)[] = new Array(numGroups);
  const dropName = new Uint8Array(numGroups);
  for (let ts = p.start, step = 0; ts <= p.end; ts += p.interval, step++) {
    p.checkCancel();
    accs.fill(undefined);
    for (let si = 0; si < input.length; si++) {
      const f = valueAt(si, ts);
      if (f === undefined) continue;
      const g = groupOf[si];
      const acc = accs[g];
      if (acc === undefined) {
        accs[g] = factory(f);
        dropName[g] = input[si].dropName ? 1 : 0;
        continue;
      }
      if (input[si].dropName) dropName[g] = 1;
      acc.add(f);
    }
    const param = p.params ? p.params[step] : NaN;
    for (let g = 0; g < numGroups; g++) {
      const acc = accs[g];
      if (acc === undefined) continue;
      outputs[g].floats.push({ t: ts, f: acc.result(param) });
      if (dropName[g]) outputs[g].dropName = true;
    }
  }
  return outputs.filter((s) => s.floats.length > 0);
}

function evalSelecting(
  p: AggregationParams,
  order: (a: number, b: number) => number,
  groupOf: number[],
  numGroups: number,
  valueAt: (si: number, ts: number) => number | undefined,
): EvalMatrix {
  const { input, params } = p;
  if (!params) throw new PromQLExecutionError(`aggregation ${p.expr.op}() needs a parameter`);
  let max = -Infinity;
  let min = Infinity;
  for (const k of params) {
    if (Number.isNaN(k)) continue;
    max = Math.max(max, k);
    min = Math.min(min, k);
  }
  if (params.length > 0 && max < 1 && !params.some(Number.isNaN)) return [];
  if (params.some(Number.isNaN)) throw new PromQLExecutionError('Parameter value is NaN');
  if (min <= MIN_INT64_FLOAT) throw new PromQLExecutionError(`Scalar value ${goV(min)} underflows int64`);
  if (max >= MAX_INT64_FLOAT) throw new PromQLExecutionError(`Scalar value ${goV(max)} overflows int64`);

  const instant = p.start === p.end;
  const ordered: EvalMatrix = [];
  const byLabels = new Map<string, EvalSeries>();
  type Candidate = { si: number; f: number };
  const groups: Candidate[][] = Array.from({ length: numGroups }, () => []);
  for (let ts = p.start, step = 0; ts <= p.end; ts += p.interval, step++) {
    p.checkCancel();
    for (const g of groups) g.length = 0;
    for (let si = 0; si < input.length; si++) {
      const f = valueAt(si, ts);
      if (f !== undefined) groups[groupOf[si]].push({ si, f });
    }
    const k = Math.min(Math.trunc(params[step]), input.length);
    if (k < 1) continue;
    for (const candidates of groups) {
      // A stable sort keeps earlier series first among equal values, as Prometheus' heap does.
      const kept = candidates.sort((a, b) => order(a.f, b.f)).slice(0, k);
      for (const { si, f } of kept) {
        const src = input[si];
        if (instant) {
          ordered.push({ metric: src.metric, floats: [{ t: ts, f }], dropName: src.dropName });
          continue;
        }
        const key = keyOf(src.metric);
        let out = byLabels.get(key);
        if (!out) {
          out = { metric: src.metric, floats: [], dropName: src.dropName };
          byLabels.set(key, out);
        }
        out.floats.push({ t: ts, f });
      }
    }
  }
  return instant ? ordered : [...byLabels.values()];
}

/** Go's %v for a float64, enough for the int64 overflow messages. */
function goV(v: number): string {
  const s = String(v);
  return s.replace(/e\+?(-?)(\d)$/, 'e+$10$2').replace('e+-', 'e-');
}

/**
 * count_values at one step: counts samples per (group, value), the value
 * written into `valueLabel` as Go formats floats.
 */
export function countValuesStep(
  vec: EvalVector,
  grouping: ReadonlySet<string>,
  without: boolean,
  valueLabel: string,
  ts: number,
): EvalVector {
  const groups = new Map<string, { metric: Labels; count: number }>();
  const effectiveGrouping = without ? grouping : new Set([...grouping, valueLabel]);
  for (const s of vec) {
    const metric = setLabel(s.metric, valueLabel, formatGoFloat(s.f));
    const key = groupingKey(metric, effectiveGrouping, without);
    const g = groups.get(key);
    if (g) g.count++;
    else groups.set(key, { metric: groupingLabels(metric, effectiveGrouping, without), count: 1 });
  }
  return [...groups.values()].map((g) => ({ metric: g.metric, t: ts, f: g.count, dropName: false }));
}
