// One tenant's data in an ingester: the in-memory head plus the blocks cut
// from it that are kept on local disk (served until the retention period, as
// Mimir's ingesters do, since queriers ask the store only for older data).
// Queries merge both, so a sample in a block and still in the head counts once.

import type { Matcher, Series } from '@strata/model';
import { blocksLabelNames, blocksLabelValues, mergeSeriesSets, selectBlocks, type BlockMeta, type BlockReader, type Head } from '@strata/tsdb';

export interface LocalBlock {
  meta: BlockMeta;
  dir: string;
  reader: BlockReader;
  shipped: boolean;
  /** When it reached the bucket (ms); retention counts from there, as Mimir's does. */
  shippedAt?: number;
  /** The head range [rangeStart, rangeEnd) it was cut from (its meta's range for blocks found on disk). */
  rangeStart: number;
  rangeEnd: number;
}

export class TenantDB {
  blocks: LocalBlock[] = [];
  /** Every range below is in local blocks (cut, maybe not shipped yet). */
  cutUpTo = -Infinity;
  /** Every sample below is in shipped blocks; the head is truncated here. */
  persistedBefore = -Infinity;
  /** Wall-clock ms of the last append (for idle flushes). */
  lastAppendAt: number;

  constructor(
    readonly tenant: string,
    readonly head: Head,
    readonly dir: string,
    now: number,
  ) {
    this.lastAppendAt = now;
  }

  async select(matchers: Matcher[], mint: number, maxt: number): Promise<Series[]> {
    const fromHead = this.head.select(matchers, mint, maxt);
    const blocks = this.readers();
    if (blocks.length === 0) return fromHead;
    return mergeSeriesSets([fromHead, await selectBlocks(blocks, matchers, mint, maxt)]);
  }

  async labelNames(matchers: Matcher[], mint: number, maxt: number): Promise<string[]> {
    const fromHead = this.head.labelNames(matchers, mint, maxt);
    const blocks = this.readers();
    if (blocks.length === 0) return fromHead;
    return [...new Set([...fromHead, ...(await blocksLabelNames(blocks, matchers, mint, maxt))])].sort();
  }

  async labelValues(name: string, matchers: Matcher[], mint: number, maxt: number): Promise<string[]> {
    const fromHead = this.head.labelValues(name, matchers, mint, maxt);
    const blocks = this.readers();
    if (blocks.length === 0) return fromHead;
    return [...new Set([...fromHead, ...(await blocksLabelValues(blocks, name, matchers, mint, maxt))])].sort();
  }

  /** The head's lowest sample time that is not yet in a local block. */
  unCutMinTime(): number {
    return Math.max(this.head.actualMinTime(), this.cutUpTo);
  }

  private readers(): BlockReader[] {
    return this.blocks.map((b) => b.reader);
  }
}
