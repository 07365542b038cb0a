// A Querier over each tenant's blocks in the bucket (what Mimir's
// store-gateway serves): the tenant's block list comes from its bucket index
// (or a listing when there is none yet), refreshed every sync interval; each
// block's index header is loaded once and kept; chunks are range-read per
// query. Blocks marked for deletion long enough are skipped. A tenant's query
// only ever opens keys under "<tenant>/".

import type { Registry } from 'prom-client';
import { Counter, Gauge } from 'prom-client';
import { MergeQuerier, type LabelValuesParams, type Querier, type SelectParams, type Series } from '@strata/model';
import type { Bucket } from '@strata/objstore';
import type { Logger } from '@strata/service';
import type { BlockMeta, BlockReader } from '@strata/tsdb';
import { openBucketBlock } from './bucket-block.ts';
import { readBucketIndex, scanTenantBlocks } from './bucket-index.ts';
import { tenantFromListing } from './layout.ts';
import { readDeletionMarks } from './markers.ts';

export interface BucketStoreOptions {
  bucket: Bucket;
  logger: Logger;
  registry?: Registry;
  /** How old a tenant's block list may get before it is read again. */
  syncIntervalMs: number;
  /** Blocks marked for deletion longer ago than this are not queried. */
  ignoreDeletionMarksDelayMs: number;
  /** Read <tenant>/bucket-index.json.gz (falls back to listing when a tenant has none). */
  bucketIndexEnabled: boolean;
  /** At start, load index headers of blocks with data newer than now minus this (0: none). */
  warmStartPeriodMs: number;
  now?: () => number;
}

interface KnownBlock {
  ulid: string;
  minTime: number;
  maxTime: number;
  meta?: BlockMeta;
}

interface TenantBlocks {
  fetchedAt: number;
  blocks: KnownBlock[];
  refreshing?: Promise<void>;
}

export class BucketStore implements Querier {
  private readonly tenants = new Map<string, TenantBlocks>();
  private readonly readers = new Map<string, Promise<BlockReader>>();
  private readonly metaCache = new Map<string, BlockMeta>();
  private readonly now: () => number;
  private warm: 'pending' | 'loading' | 'done' = 'pending';
  private warmProgress = 'not started';
  private readonly loads: Counter<'outcome'>;

  private readonly opts: BucketStoreOptions;

  constructor(opts: BucketStoreOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
    const registers = opts.registry ? [opts.registry] : [];
    this.loads = new Counter({
      name: 'strata_bucket_store_block_loads_total',
      help: 'Index headers of bucket blocks loaded, by outcome.',
      labelNames: ['outcome'],
      registers,
    });
    const readers = this.readers;
    new Gauge({
      name: 'strata_bucket_store_blocks_loaded',
      help: 'Bucket blocks whose index header is held in memory.',
      registers,
      collect() {
        this.set(readers.size);
      },
    });
  }

  /** Warm start: loads the index headers of recent blocks of every tenant; resolves when done. */
  async start(): Promise<void> {
    this.warm = 'loading';
    const began = this.now();
    let loaded = 0;
    try {
      if (this.opts.warmStartPeriodMs > 0) {
        const since = this.now() - this.opts.warmStartPeriodMs;
        const tenants = (await this.opts.bucket.list('')).map(tenantFromListing).filter((t): t is string => t !== null);
        for (const tenant of tenants) {
          const blocks = (await this.blocksOf(tenant)).filter((b) => b.maxTime >= since);
          for (const b of blocks) {
            this.warmProgress = `loading index headers: ${loaded} done, tenant ${tenant}`;
            try {
              await this.reader(tenant, b);
              loaded++;
            } catch (err) {
              this.opts.logger.warn({ tenant, block: b.ulid, err: (err as Error).message }, 'warm start: cannot load a block; it is retried at query time');
            }
          }
        }
      }
      this.opts.logger.info({ blocks: loaded, seconds: (this.now() - began) / 1000 }, `bucket store warm: index headers of ${loaded} recent blocks loaded`);
    } catch (err) {
      this.opts.logger.warn({ err: (err as Error).message }, 'warm start failed; index headers load at query time');
    } finally {
      this.warm = 'done';
    }
  }

  async stop(): Promise<void> {
    const all = [...this.readers.values()];
    this.readers.clear();
    for (const p of all) await p.then((r) => r.close()).catch(() => undefined);
  }

  notReadyReason(): string | undefined {
    return this.warm === 'done' ? undefined : `bucket store warm start: ${this.warmProgress}`;
  }

  async select(p: SelectParams): Promise<Series[]> {
    return (await this.querier(p)).select(p);
  }

  async labelNames(p: SelectParams): Promise<string[]> {
    return (await this.querier(p)).labelNames(p);
  }

  async labelValues(p: LabelValuesParams): Promise<string[]> {
    return (await this.querier(p)).labelValues(p);
  }

  /** The tenant's queryable blocks (for tests and debugging). */
  async blocksOf(tenant: string): Promise<KnownBlock[]> {
    let t = this.tenants.get(tenant);
    if (!t || this.now() - t.fetchedAt >= this.opts.syncIntervalMs) {
      if (!t) this.tenants.set(tenant, (t = { fetchedAt: -Infinity, blocks: [] }));
      const state = t;
      state.refreshing ??= this.refresh(tenant, state).finally(() => (state.refreshing = undefined));
      await state.refreshing;
    }
    return t.blocks;
  }

  /** The tenant's blocks overlapping the range, merged (only those are opened). */
  private async querier(p: SelectParams): Promise<MergeQuerier> {
    const blocks = (await this.blocksOf(p.tenant)).filter((b) => b.minTime <= p.maxt && p.mint < b.maxTime);
    return new MergeQuerier(await Promise.all(blocks.map((b) => this.reader(p.tenant, b))));
  }

  private reader(tenant: string, b: KnownBlock): Promise<BlockReader> {
    const key = `${tenant}/${b.ulid}`;
    let p = this.readers.get(key);
    if (!p) {
      p = openBucketBlock(this.opts.bucket, tenant, b.ulid, b.meta ?? this.metaCache.get(b.ulid));
      this.readers.set(key, p);
      p.then(
        (r) => {
          if (r.meta) this.metaCache.set(b.ulid, r.meta);
          this.loads.inc({ outcome: 'ok' });
        },
        () => {
          this.readers.delete(key);
          this.loads.inc({ outcome: 'failed' });
        },
      );
    }
    return p;
  }

  private async refresh(tenant: string, state: TenantBlocks): Promise<void> {
    const now = this.now();
    const ignoreBefore = now - this.opts.ignoreDeletionMarksDelayMs;
    let blocks: KnownBlock[];
    const idx = this.opts.bucketIndexEnabled ? await readBucketIndex(this.opts.bucket, tenant) : null;
    if (idx !== null) {
      const marked = new Set(idx.block_deletion_marks.filter((m) => m.deletion_time * 1000 <= ignoreBefore).map((m) => m.block_id));
      blocks = idx.blocks.filter((b) => !marked.has(b.block_id)).map((b) => ({ ulid: b.block_id, minTime: b.min_time, maxTime: b.max_time }));
    } else {
      const scan = await scanTenantBlocks(this.opts.bucket, tenant, this.metaCache);
      for (const [id, m] of scan.metas) this.metaCache.set(id, m);
      const marks = await readDeletionMarks(this.opts.bucket, tenant);
      blocks = [...scan.metas.values()]
        .filter((m) => !((marks.get(m.ulid)?.deletion_time ?? Infinity) * 1000 <= ignoreBefore))
        .map((m) => ({ ulid: m.ulid, minTime: m.minTime, maxTime: m.maxTime, meta: m }));
    }
    // Let go of index headers of blocks that left the list (compacted away, deleted).
    const keep = new Set(blocks.map((b) => `${tenant}/${b.ulid}`));
    for (const [key, p] of this.readers) {
      if (key.startsWith(`${tenant}/`) && !keep.has(key)) {
        this.readers.delete(key);
        void p.then((r) => r.close()).catch(() => undefined);
      }
    }
    state.blocks = blocks;
    state.fetchedAt = now;
  }
}
