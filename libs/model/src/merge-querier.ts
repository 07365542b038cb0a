// One tenant's readers (a head range and blocks, or ingesters and the bucket)
// behind one BlockQuerier: each is asked the same question in parallel and the
// answers are merged, so data held twice counts once. It never knows which
// source is which. Plus the two adapters that make a source fit: a range
// restriction, and a Querier bound to one tenant.

import { throwIfAborted } from './abort.ts';
import { mergeSeriesSets, mergeStringSets } from './merge-series.ts';
import type { BlockLabelValuesParams, BlockQuerier, BlockSelectParams, Querier, Series } from './querier.ts';

export class MergeQuerier implements BlockQuerier {
  private readonly sources: readonly BlockQuerier[];

  constructor(sources: readonly BlockQuerier[]) {
    this.sources = sources;
  }

  async select(p: BlockSelectParams): Promise<Series[]> {
    if (this.sources.length === 1) return this.sources[0].select(p);
    const sets = await Promise.all(this.sources.map((q) => q.select(p)));
    throwIfAborted(p.signal, 'merging series');
    return mergeSeriesSets(sets);
  }

  async labelNames(p: BlockSelectParams): Promise<string[]> {
    if (this.sources.length === 1) return this.sources[0].labelNames(p);
    return mergeStringSets(await Promise.all(this.sources.map((q) => q.labelNames(p))));
  }

  async labelValues(p: BlockLabelValuesParams): Promise<string[]> {
    if (this.sources.length === 1) return this.sources[0].labelValues(p);
    return mergeStringSets(await Promise.all(this.sources.map((q) => q.labelValues(p))));
  }
}

/** `q` asked only within [mint, maxt]: a question outside it is answered empty without asking. */
export function restrictRange(q: BlockQuerier, mint: number, maxt: number): BlockQuerier {
  const within = <P extends BlockSelectParams>(p: P): P | null => {
    const lo = Math.max(p.mint, mint);
    const hi = Math.min(p.maxt, maxt);
    return lo > hi ? null : lo === p.mint && hi === p.maxt ? p : { ...p, mint: lo, maxt: hi };
  };
  return {
    select: async (p) => {
      const r = within(p);
      return r ? q.select(r) : [];
    },
    labelNames: async (p) => {
      const r = within(p);
      return r ? q.labelNames(r) : [];
    },
    labelValues: async (p) => {
      const r = within(p);
      return r ? q.labelValues(r) : [];
    },
  };
}

/** One tenant's view of a multi-tenant Querier. */
export function tenantQuerier(q: Querier, tenant: string): BlockQuerier {
  return {
    select: (p) => q.select({ ...p, tenant }),
    labelNames: (p) => q.labelNames({ ...p, tenant }),
    labelValues: (p) => q.labelValues({ ...p, tenant }),
  };
}
