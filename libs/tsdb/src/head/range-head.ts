// The head as a BlockQuerier (Prometheus' RangeHead): the head restricted to
// [mint, maxt], asked like any block. Reads only; it never changes the head.

import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  estimatedSeriesBytes,
  queryBudgetExceeded,
  seriesChunkBytes,
  seriesChunkCount,
  seriesFloatSamples,
  throwIfAborted,
  type BlockLabelValuesParams,
  type BlockQuerier,
  type BlockSelectParams,
  type QueryBudget,
  type Series,
} from '@strata/model';
import type { Head } from './head.ts';

/** Series decoded per turn of the event loop: a large select never holds the process for long. */
const SERIES_PER_SLICE = 1000;

export class RangeHead implements BlockQuerier {
  private readonly head: Head;
  readonly mint: number;
  readonly maxt: number;
  private readonly budget: QueryBudget;

  constructor(
    head: Head,
    /** Inclusive bounds in ms; the whole head by default. */
    mint = -Infinity,
    maxt = Infinity,
    /** What one select may take out of the head; over it the select stops with a limit error. */
    budget: QueryBudget = {},
  ) {
    this.head = head;
    this.mint = mint;
    this.maxt = maxt;
    this.budget = budget;
  }

  /**
   * Reads the series in slices, yielding to the event loop between them (Kafka
   * consumption, heartbeats and other tenants' requests go on) and stopping at
   * once when the signal aborts or the budget is spent.
   */
  async select(p: BlockSelectParams): Promise<Series[]> {
    throwIfAborted(p.signal, 'selecting head series');
    const r = this.within(p);
    if (!r) return [];
    const ids = this.head.seriesIds(p.matchers);
    const { maxSeries = 0 } = this.budget;
    if (maxSeries > 0 && ids.length > maxSeries) throw queryBudgetExceeded('series', maxSeries);
    // An instant selector in an instant query (no step, no range) reads one sample per series, the
    // newest at or before its end; that holds only if the range's end is the selector's own.
    const latest = p.hints !== undefined && !p.hints.step && !p.hints.range && p.hints.end === p.maxt && r.maxt === p.maxt;
    const read = latest ? 'latest' : p.chunks === true ? 'chunks' : 'samples';
    const out: Series[] = [];
    const spent = new SelectSpending(this.budget, r.mint, r.maxt);
    for (let from = 0; from < ids.length; from += SERIES_PER_SLICE) {
      if (from > 0) {
        await nextTurn();
        throwIfAborted(p.signal, 'selecting head series');
      }
      for (const s of this.head.seriesOf(ids, from, Math.min(ids.length, from + SERIES_PER_SLICE), r.mint, r.maxt, read)) {
        spent.add(s);
        out.push(s);
      }
    }
    return out;
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

/** What one select has taken so far against the budget's samples, memory, chunks and chunk bytes; add() throws the refusal past one. */
class SelectSpending {
  private samples = 0;
  private bytes = 0;
  private chunkBytes = 0;
  private chunks = 0;

  private readonly budget: QueryBudget;
  private readonly mint: number;
  private readonly maxt: number;

  constructor(budget: QueryBudget, mint: number, maxt: number) {
    this.budget = budget;
    this.mint = mint;
    this.maxt = maxt;
  }

  add(s: Series): void {
    const { maxSamples = 0, maxEstimatedMemoryBytes: maxBytes = 0, maxChunkBytes = 0, maxChunks = 0 } = this.budget;
    this.samples += seriesFloatSamples(s, this.mint, this.maxt) + (s.histograms?.timestamps.length ?? 0);
    if (maxSamples > 0 && this.samples > maxSamples) throw queryBudgetExceeded('samples', maxSamples);
    if (maxBytes > 0) {
      this.bytes += estimatedSeriesBytes(s, this.mint, this.maxt);
      if (this.bytes > maxBytes) throw queryBudgetExceeded('memory', maxBytes);
    }
    if (maxChunkBytes > 0) {
      this.chunkBytes += seriesChunkBytes(s);
      if (this.chunkBytes > maxChunkBytes) throw queryBudgetExceeded('chunk-bytes', maxChunkBytes);
    }
    if (maxChunks > 0) {
      this.chunks += seriesChunkCount(s);
      if (this.chunks > maxChunks) throw queryBudgetExceeded('chunks', maxChunks);
    }
  }
}
