// An aggregation too big for one select (over -querier.max-fetched-series-per-query or the
// estimated memory per query), answered shard by shard: each shard's select adds a
// `__query_shard__="i_of_n"` matcher, so it holds about 1/n of the series, and the shards'
// groups are folded together as they come. Only aggregations whose groups fold exactly
// (sum, count, group, min, max) over an input whose every series comes from one stored
// series (a selector, or a range function of one) are answered so; the rest keep the 422.
// A folded sum adds per-shard sums, so it may differ from the unsharded sum in the last bits
// (as Mimir's query sharding does); an instant vector's groups come in label order.

import { compareLabels, labelsKey, queryShardMatcher, type Labels } from '@strata/model';
import { unwrapParens, type Expr, type VectorSelector } from './ast.ts';
import { FUNCTIONS } from './functions.ts';
import type { QueryResult } from './values.ts';

type FoldOp = 'sum' | 'count' | 'group' | 'min' | 'max';
const FOLD_OPS = new Set<string>(['sum', 'count', 'group', 'min', 'max']);

/** Shard counts tried in turn: a shard over the budget asks for more, smaller ones. */
export const SHARD_COUNTS = [16, 128, 1024] as const;

/** The aggregation's op and the one selector whose matchers a shard narrows; undefined when it cannot be sharded. */
export function shardableAggregation(expr: Expr): { op: FoldOp; selector: VectorSelector } | undefined {
  const top = unwrapParens(expr);
  if (top.kind !== 'aggregate' || !FOLD_OPS.has(top.op) || top.param !== undefined) return undefined;
  const selector = perSeriesSelector(unwrapParens(top.expr));
  return selector === undefined ? undefined : { op: top.op as FoldOp, selector };
}

/** The selector of an input whose every output series comes from one of its series: a selector, or a range function of one. */
function perSeriesSelector(e: Expr): VectorSelector | undefined {
  if (e.kind === 'vectorSelector') return e;
  if (e.kind !== 'call' || e.args.length !== 1) return undefined;
  const impl = FUNCTIONS[e.func.name]?.impl;
  const arg = unwrapParens(e.args[0]);
  if (impl?.kind !== 'range' || impl.absentOverTime || arg.kind !== 'matrixSelector') return undefined;
  const vs = unwrapParens(arg.vectorSelector);
  return vs.kind === 'vectorSelector' ? vs : undefined;
}

/** Whether an error is a query budget refusal (series, samples, estimated memory or chunk bytes), from storage or the engine. */
export function isQueryBudgetError(err: unknown): boolean {
  return err instanceof Error && /\(err-strata-max-(series|samples|estimated-memory|chunks-bytes)-per-query\)/.test(err.message);
}

/**
 * Runs `evaluate` once per shard of `count` with the selector narrowed to it, folding the
 * results. `evaluate` is the engine's own evaluation of the whole (unsharded) expression.
 */
export async function evaluateSharded(
  plan: { op: FoldOp; selector: VectorSelector },
  count: number,
  evaluate: () => Promise<QueryResult>,
): Promise<QueryResult> {
  const fold = new ShardFold(plan.op);
  const matchers = plan.selector.matchers;
  try {
    for (let index = 0; index < count; index++) {
      plan.selector.matchers = [...matchers, queryShardMatcher({ index, count })];
      fold.add(await evaluate());
    }
  } finally {
    plan.selector.matchers = matchers;
  }
  return fold.result();
}

/** Groups of the shards' results by their labels, each a value per timestamp. */
class ShardFold {
  private readonly groups = new Map<string, { metric: Labels; points: Map<number, number> }>();
  private resultType: 'vector' | 'matrix' | undefined;
  private readonly warnings = new Set<string>();
  private readonly infos = new Set<string>();

  private readonly op: FoldOp;

  constructor(op: FoldOp) {
    this.op = op;
  }

  add(r: QueryResult): void {
    for (const w of r.warnings) this.warnings.add(w);
    for (const i of r.infos) this.infos.add(i);
    if (r.resultType === 'vector') {
      this.resultType = 'vector';
      for (const s of r.result) this.point(s.metric, s.t, s.f, s.h !== undefined);
    } else if (r.resultType === 'matrix') {
      this.resultType = 'matrix';
      for (const s of r.result) {
        if (s.histograms !== undefined && s.histograms.length > 0) throw unfoldable();
        for (const p of s.floats) this.point(s.metric, p.t, p.f, false);
      }
    } else {
      throw unfoldable();
    }
  }

  private point(metric: Labels, t: number, f: number, histogram: boolean): void {
    if (histogram) throw unfoldable();
    const key = labelsKey(metric);
    let g = this.groups.get(key);
    if (!g) this.groups.set(key, (g = { metric, points: new Map() }));
    const prev = g.points.get(t);
    g.points.set(t, prev === undefined ? f : foldValue(this.op, prev, f));
  }

  result(): QueryResult {
    const groups = [...this.groups.values()].sort((a, b) => compareLabels(a.metric, b.metric));
    const extra = { warnings: [...this.warnings], infos: [...this.infos] };
    if (this.resultType === 'vector') {
      return { resultType: 'vector', result: groups.flatMap((g) => [...g.points].map(([t, f]) => ({ metric: g.metric, t, f }))), ...extra };
    }
    return {
      resultType: 'matrix',
      result: groups.map((g) => ({ metric: g.metric, floats: [...g.points].sort(([a], [b]) => a - b).map(([t, f]) => ({ t, f })) })),
      ...extra,
    };
  }
}

/** Two shards' values of one group at one step, as the aggregation would have met them one after the other. */
function foldValue(op: FoldOp, a: number, b: number): number {
  switch (op) {
    case 'sum':
    case 'count':
      return a + b;
    case 'group':
      return 1;
    // Prometheus' min/max keep the first value unless a later one is smaller/larger or the kept one is NaN.
    case 'min':
      return a > b || Number.isNaN(a) ? b : a;
    case 'max':
      return a < b || Number.isNaN(a) ? b : a;
  }
}

/** Histograms (or a scalar) in a shard's answer: the sharded path does not fold them, the caller keeps the budget error. */
class UnfoldableShards extends Error {}

function unfoldable(): UnfoldableShards {
  return new UnfoldableShards('shards hold native histograms');
}

export function isUnfoldable(err: unknown): boolean {
  return err instanceof UnfoldableShards;
}
