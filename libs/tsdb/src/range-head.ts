// The head as a BlockQuerier (Prometheus' RangeHead): the head restricted to
// [mint, maxt], asked like any block. Reads only; it never changes the head.

import { throwIfAborted, type BlockLabelValuesParams, type BlockQuerier, type BlockSelectParams, type Series } from '@strata/model';
import type { Head } from './head.ts';

export class RangeHead implements BlockQuerier {
  constructor(
    private readonly head: Head,
    /** Inclusive bounds in ms; the whole head by default. */
    readonly mint = -Infinity,
    readonly maxt = Infinity,
  ) {}

  // The head answers synchronously, so an abort can only be seen before it starts.
  async select(p: BlockSelectParams): Promise<Series[]> {
    throwIfAborted(p.signal, 'selecting head series');
    const r = this.within(p);
    return r ? this.head.select(p.matchers, r.mint, r.maxt) : [];
  }

  async labelNames(p: BlockSelectParams): Promise<string[]> {
    throwIfAborted(p.signal, 'reading head label names');
    const r = this.within(p);
    return r ? this.head.labelNames(p.matchers, r.mint, r.maxt) : [];
  }

  async labelValues(p: BlockLabelValuesParams): Promise<string[]> {
    throwIfAborted(p.signal, 'reading head label values');
    const r = this.within(p);
    return r ? this.head.labelValues(p.name, p.matchers, r.mint, r.maxt) : [];
  }

  private within(p: BlockSelectParams): { mint: number; maxt: number } | null {
    const mint = Math.max(p.mint, this.mint);
    const maxt = Math.min(p.maxt, this.maxt);
    return mint <= maxt ? { mint, maxt } : null;
  }
}
