// How an aggregation reads its input (AggregationParams, shared by aggregations.ts and
// aggregation-k.ts so neither imports the other): which group each series falls into
// (by/without, Prometheus' generateGroupingKey/generateGroupingLabels) and each
// series' sample at each step (nextValues), consumed in series order.

import type { Labels } from '@strata/model';
import { METRIC_NAME } from '@strata/model';
import type { AggregateExpr } from './ast.ts';
import type { FloatHistogram } from './histogram/float-histogram.ts';
import { labelsKeep, labelsWithout, signature } from './labels.ts';
import type { EvalMatrix, EvalSeries } from './values.ts';

/** What an aggregation is evaluated with: its expression, its input series and the steps. */
export interface AggregationParams {
  expr: AggregateExpr;
  input: EvalMatrix;
  /** The scalar parameter at each step (topk's k, quantile's q). */
  params: number[] | undefined;
  start: number;
  end: number;
  interval: number;
  delayedNameRemoval: boolean;
  /** Annotations at the parameter's position. */
  warn(message: string): void;
  /** Annotations at the aggregated expression's position. */
  warnAtExpr(message: string): void;
  infoAtExpr(message: string): void;
  /** Annotations at the whole aggregation's position. */
  infoAtAggregation(message: string): void;
  checkCancel(): void;
}

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

/** One input sample at one step: a float, or a histogram when `h` is set. */
export interface StepValue {
  f: number;
  h?: FloatHistogram;
}

/**
 * Reads each input series' sample at a step, consuming it (float and
 * histogram cursors). `next` fills `value` in place (no allocation per sample:
 * this runs for every series at every step) and says whether there was one;
 * copy `value` to keep it.
 */
export class StepReader {
  private readonly cursors: Int32Array;
  private readonly hCursors: Int32Array;
  readonly value: StepValue = { f: 0, h: undefined };

  private readonly input: EvalMatrix;

  constructor(input: EvalMatrix) {
    this.input = input;
    this.cursors = new Int32Array(input.length);
    this.hCursors = new Int32Array(input.length);
  }

  next(si: number, ts: number): boolean {
    const s = this.input[si];
    const fl = s.floats;
    const c = this.cursors[si];
    if (c < fl.length && fl[c].t === ts) {
      this.cursors[si] = c + 1;
      this.value.f = fl[c].f;
      this.value.h = undefined;
      return true;
    }
    const hl = s.histograms;
    if (hl) {
      const hc = this.hCursors[si];
      if (hc < hl.length && hl[hc].t === ts) {
        this.hCursors[si] = hc + 1;
        this.value.f = 0;
        this.value.h = hl[hc].h;
        return true;
      }
    }
    return false;
  }
}

/** The output series of each group and each input's group, for a `by`/`without` grouping. */
export function groupsOf(metrics: readonly Labels[], grouping: ReadonlySet<string>, without: boolean): { groupOf: Int32Array; outputs: EvalSeries[] } {
  const groupOf = new Int32Array(metrics.length);
  const keys = new Map<string, number>();
  const outputs: EvalSeries[] = [];
  for (let i = 0; i < metrics.length; i++) {
    const key = groupingKey(metrics[i], grouping, without);
    let g = keys.get(key);
    if (g === undefined) {
      g = keys.size;
      keys.set(key, g);
      outputs.push({ metric: groupingLabels(metrics[i], grouping, without), floats: [], dropName: false });
    }
    groupOf[i] = g;
  }
  return { groupOf, outputs };
}
