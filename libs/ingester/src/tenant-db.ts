// One tenant's data in an ingester: the in-memory head plus the blocks cut
// from it that are kept on local disk (served until the retention period, as
// Mimir's ingesters do, since queriers ask the store only for older data).
// Queries ask both through one MergeQuerier, so a sample in a block and still
// in the head counts once.

import { MergeQuerier, type BlockLabelValuesParams, type BlockQuerier, type BlockSelectParams, type QueryBudget, type Series } from '@strata/model';
import { RangeHead, type BlockMeta, type BlockReader, type Head } from '@strata/tsdb';

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

export class TenantDB implements BlockQuerier {
  blocks: LocalBlock[] = [];
  /** Every range below is in local blocks (cut, maybe not shipped yet). */
  cutUpTo = -Infinity;
  /** Every sample below is in shipped blocks; the head is truncated here. */
  persistedBefore = -Infinity;
  /** Wall-clock ms of the last append (for idle flushes). */
  lastAppendAt: number;

  readonly tenant: string;
  readonly head: Head;
  readonly dir: string;
  private readonly budget: () => QueryBudget;

  constructor(
    tenant: string,
    head: Head,
    dir: string,
    now: number,
    /** What one query may take out of the head (the querier's limits, enforced here too), read per query: the tenant's overrides change live. */
    budget: () => QueryBudget = () => ({}),
  ) {
    this.tenant = tenant;
    this.head = head;
    this.dir = dir;
    this.budget = budget;
    this.lastAppendAt = now;
  }

  select(p: BlockSelectParams): Promise<Series[]> {
    if (p.chunks === true) {
      // Chunks pass through undecoded only where the head alone answers: a merge with a local block needs samples.
      if (this.blocks.every((b) => b.meta.maxTime <= p.mint || b.meta.minTime > p.maxt))
        return new RangeHead(this.head, -Infinity, Infinity, this.budget()).select(p);
      return this.querier().select({ ...p, chunks: false });
    }
    return this.querier().select(p);
  }

  labelNames(p: BlockSelectParams): Promise<string[]> {
    return this.querier().labelNames(p);
  }

  labelValues(p: BlockLabelValuesParams): Promise<string[]> {
    return this.querier().labelValues(p);
  }

  /** The head's lowest sample time that is not yet in a local block. */
  unCutMinTime(): number {
    return Math.max(this.head.actualMinTime(), this.cutUpTo);
  }

  /** The head and the local blocks as they are now (blocks come and go between queries). */
  private querier(): BlockQuerier {
    const sources: BlockQuerier[] = [new RangeHead(this.head, -Infinity, Infinity, this.budget())];
    for (const b of this.blocks) sources.push(b.reader);
    return new MergeQuerier(sources);
  }
}
