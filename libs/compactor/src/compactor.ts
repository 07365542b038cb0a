// The compactor (Mimir's, one instance): per tenant, merges the two zones'
// copies of each range into one block (vertical compaction, identical samples
// kept once), then compacts levels (2h -> 12h -> 24h by default); marks what it
// replaced, and what is past the tenant's retention, for deletion; deletes
// marked blocks after the deletion delay and failed uploads after theirs; and
// rewrites the tenant's bucket index, which queriers read instead of listing.
// A new block is uploaded (meta.json last) before its sources are marked, so
// a crash at any point leaves data readable (at worst twice, deduplicated).
// Delete requests (<tenant>/tombstones/) are applied to every block it writes,
// and a block still holding deleted samples is rewritten alone; a tenant marked
// for deletion has all its blocks deleted.

import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Bucket } from '@strata/objstore';
import type { Logger } from '@strata/service';
import {
  buildBucketIndex,
  deleteBlock,
  markForDeletion,
  readBucketIndex,
  readDeletionMarks,
  readDeletionRequests,
  readTenantDeletionMark,
  scanTenantBlocks,
  tenantFromListing,
  uploadBlock,
  writeBucketIndex,
  writeTenantDeletionMark,
  type DeletionMark,
  type DeletionRequest,
} from '@strata/storegateway';
import { BlockReader, compactBlocks, ulidTime, type BlockMeta } from '@strata/tsdb';
import { planCompaction, type PlanBlock } from './planner.ts';

export interface CompactorOptions {
  bucket: Bucket;
  logger: Logger;
  registry?: Registry;
  dataDir: string;
  ranges: number[];
  compactionIntervalMs: number;
  cleanupIntervalMs: number;
  deletionDelayMs: number;
  firstLevelWaitMs: number;
  /** Per tenant; 0 keeps blocks forever. */
  retentionMs: (tenant: string) => number;
  partialBlockDeletionDelayMs: number;
  /** Only these tenants; empty: every tenant in the bucket. */
  enabledTenants: string[];
  now?: () => number;
}

export interface TenantRunStats {
  compactions: number;
  markedForDeletion: number;
  deleted: number;
  partialDeleted: number;
}

/** One pass (compaction or cleanup) over every tenant. Times are ms since the epoch. */
export interface CompactorRun {
  startedAt: number;
  /** Unset while the pass runs. */
  finishedAt?: number;
  tenants: number;
  failedTenants: number;
}

/** What the status page shows: the last passes, and each tenant's blocks as its bucket index lists them. */
export interface CompactorStatus {
  lastCompaction?: CompactorRun;
  lastCleanup?: CompactorRun;
  tenants: {
    tenant: string;
    blocks: number;
    markedForDeletion: number;
    maxCompactionLevel: number;
    minTime?: number;
    maxTime?: number;
    indexUpdatedAt?: number;
  }[];
}

/** At most this many compactions per tenant per run, so one tenant cannot starve the others. */
const MAX_COMPACTIONS_PER_RUN = 100;

export class Compactor {
  private readonly now: () => number;
  private chain: Promise<unknown> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  private readonly metaCache = new Map<string, BlockMeta>();
  private readonly counters: Record<'compactions' | 'marked' | 'deleted' | 'partial' | 'failures', Counter>;
  private readonly lastSuccess: Gauge;
  private stopping = false;
  private readonly runs: { compaction?: CompactorRun; cleanup?: CompactorRun } = {};
  /** "<block>/<request>": blocks known to hold nothing a delete request covers (they need no rewrite). */
  private readonly clean = new Set<string>();

  private readonly opts: CompactorOptions;

  constructor(opts: CompactorOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
    const registers = opts.registry ? [opts.registry] : [];
    this.counters = {
      compactions: new Counter({ name: 'strata_compactor_compactions_total', help: 'Blocks written by compaction.', registers }),
      marked: new Counter({
        name: 'strata_compactor_blocks_marked_for_deletion_total',
        help: 'Blocks marked for deletion (compacted or past retention).',
        registers,
      }),
      deleted: new Counter({ name: 'strata_compactor_blocks_deleted_total', help: 'Blocks deleted after the deletion delay.', registers }),
      partial: new Counter({ name: 'strata_compactor_partial_blocks_deleted_total', help: 'Failed uploads (no meta.json) deleted.', registers }),
      failures: new Counter({ name: 'strata_compactor_runs_failed_total', help: 'Tenant runs that failed (retried next interval).', registers }),
    };
    this.lastSuccess = new Gauge({
      name: 'strata_compactor_last_successful_run_timestamp_seconds',
      help: 'When the last compaction pass in which every tenant succeeded ended (0: none yet).',
      registers,
    });
  }

  /** Runs a cleanup and a compaction at once, then on their intervals. */
  async start(): Promise<void> {
    void this.cleanup();
    void this.compact();
    this.timers.push(setInterval(() => void this.compact(), this.opts.compactionIntervalMs));
    this.timers.push(setInterval(() => void this.cleanup(), this.opts.cleanupIntervalMs));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    await this.chain.catch(() => undefined);
  }

  /** One compaction pass over every tenant (then their bucket index). */
  compact(): Promise<void> {
    return this.serial(async () => {
      const run: CompactorRun = { startedAt: this.now(), tenants: 0, failedTenants: 0 };
      this.runs.compaction = run;
      for (const tenant of await this.tenants()) {
        run.tenants++;
        try {
          await this.compactTenant(tenant);
          await this.updateIndex(tenant);
        } catch (err) {
          run.failedTenants++;
          this.counters.failures.inc();
          this.opts.logger.error({ tenant, err: (err as Error).message }, 'compaction failed; retried next interval');
        }
      }
      if (run.failedTenants === 0 && !this.stopping) this.lastSuccess.set(this.now() / 1000);
      run.finishedAt = this.now();
    });
  }

  /** Retention, deletions, failed uploads and the bucket index of every tenant. */
  cleanup(): Promise<void> {
    return this.serial(async () => {
      const run: CompactorRun = { startedAt: this.now(), tenants: 0, failedTenants: 0 };
      this.runs.cleanup = run;
      for (const tenant of await this.tenants()) {
        run.tenants++;
        try {
          await this.cleanupTenant(tenant);
          await this.updateIndex(tenant);
        } catch (err) {
          run.failedTenants++;
          this.counters.failures.inc();
          this.opts.logger.error({ tenant, err: (err as Error).message }, 'cleanup failed; retried next interval');
        }
      }
      run.finishedAt = this.now();
    });
  }

  /** The last passes and every tenant's blocks from its bucket index (one small read per tenant). */
  async status(): Promise<CompactorStatus> {
    const tenants: CompactorStatus['tenants'] = [];
    for (const tenant of await this.tenants()) {
      const index = await readBucketIndex(this.opts.bucket, tenant).catch(() => null);
      const blocks = index?.blocks ?? [];
      tenants.push({
        tenant,
        blocks: blocks.length,
        markedForDeletion: index?.block_deletion_marks.length ?? 0,
        maxCompactionLevel: Math.max(0, ...blocks.map((b) => b.compaction_level ?? 1)),
        ...(blocks.length > 0 ? { minTime: Math.min(...blocks.map((b) => b.min_time)), maxTime: Math.max(...blocks.map((b) => b.max_time)) } : {}),
        ...(index ? { indexUpdatedAt: index.updated_at * 1000 } : {}),
      });
    }
    return {
      ...(this.runs.compaction ? { lastCompaction: { ...this.runs.compaction } } : {}),
      ...(this.runs.cleanup ? { lastCleanup: { ...this.runs.cleanup } } : {}),
      tenants,
    };
  }

  /** Compaction until nothing is left to do (bounded), for one tenant. */
  async compactTenant(tenant: string): Promise<number> {
    let done = 0;
    if (await readTenantDeletionMark(this.opts.bucket, tenant)) return 0;
    const requests = await readDeletionRequests(this.opts.bucket, tenant);
    while (done < MAX_COMPACTIONS_PER_RUN && !this.stopping) {
      const { metas, marks } = await this.blocks(tenant);
      const live = [...metas.values()].filter((m) => !marks.has(m.ulid));
      const redundant = this.redundant(live);
      if (redundant.length > 0) {
        // A crash between uploading a compacted block and marking its sources left them behind.
        for (const m of redundant) await this.mark(tenant, m.ulid, 'already compacted into another block');
        continue;
      }
      const plan = planCompaction(live.map(planBlock), { ranges: this.opts.ranges, now: this.now(), firstLevelWaitMs: this.opts.firstLevelWaitMs });
      if (plan !== null) {
        await this.compactGroup(
          tenant,
          plan.map((p) => metas.get(p.ulid) as BlockMeta),
          requests,
        );
        done++;
        continue;
      }
      // Nothing to merge: rewrite, one at a time, blocks that still hold deleted samples (Prometheus' clean_tombstones).
      const dirty = await this.firstDirty(tenant, live, requests);
      if (dirty === null) break;
      await this.compactGroup(tenant, [dirty], requests);
      done++;
    }
    return done;
  }

  /** The first live block holding a sample some delete request covers; null when every block is clean. */
  private async firstDirty(tenant: string, live: BlockMeta[], requests: DeletionRequest[]): Promise<BlockMeta | null> {
    const young = this.now() - this.opts.firstLevelWaitMs;
    for (const m of live) {
      // A fresh ingester block waits for its other zone's copy; the merge applies the requests then.
      if (m.compaction.level === 1 && ulidTime(m.ulid) > young) continue;
      const todo = requests.filter((r) => r.mint <= m.maxTime && m.minTime <= r.maxt && !this.clean.has(`${m.ulid}/${r.id}`));
      if (todo.length === 0) continue;
      const work = join(this.opts.dataDir, tenant, `check-${m.ulid}`);
      const reader = await this.download(tenant, m.ulid, work);
      try {
        for (const r of todo) {
          const hit = (await reader.select({ matchers: r.matchers, mint: r.mint, maxt: r.maxt })).some((s) => s.timestamps.length > 0);
          if (hit) return m;
          this.clean.add(`${m.ulid}/${r.id}`);
        }
      } finally {
        await reader.close().catch(() => undefined);
        await rm(work, { recursive: true, force: true });
      }
    }
    return null;
  }

  async cleanupTenant(tenant: string): Promise<TenantRunStats> {
    const stats: TenantRunStats = { compactions: 0, markedForDeletion: 0, deleted: 0, partialDeleted: 0 };
    const now = this.now();
    const { metas, marks, partial } = await this.blocks(tenant);
    const tenantMark = await readTenantDeletionMark(this.opts.bucket, tenant);
    if (tenantMark) {
      // Mimir's tenant deletion: every block goes now (queriers already answer nothing), then the mark says when it finished.
      for (const ulid of new Set([...metas.keys(), ...partial.keys(), ...marks.keys()])) {
        await deleteBlock(this.opts.bucket, tenant, ulid);
        this.metaCache.delete(ulid);
        this.counters.deleted.inc();
        stats.deleted++;
      }
      if (tenantMark.finished_time === undefined) {
        await writeTenantDeletionMark(this.opts.bucket, tenant, { ...tenantMark, finished_time: Math.floor(now / 1000) });
        this.opts.logger.info({ tenant, blocks: stats.deleted }, `deleted tenant ${tenant}'s blocks (tenant marked for deletion)`);
      }
      return stats;
    }
    const retention = this.opts.retentionMs(tenant);
    if (retention > 0) {
      for (const m of metas.values()) {
        if (!marks.has(m.ulid) && m.maxTime < now - retention) {
          await this.mark(tenant, m.ulid, 'past the retention period');
          stats.markedForDeletion++;
        }
      }
    }
    for (const mark of marks.values()) {
      if (mark.deletion_time * 1000 <= now - this.opts.deletionDelayMs) {
        await deleteBlock(this.opts.bucket, tenant, mark.id);
        this.metaCache.delete(mark.id);
        this.counters.deleted.inc();
        stats.deleted++;
        this.opts.logger.info({ tenant, block: mark.id }, 'deleted a block marked for deletion');
      }
    }
    if (this.opts.partialBlockDeletionDelayMs > 0) {
      for (const [ulid, newest] of partial) {
        if (newest <= now - this.opts.partialBlockDeletionDelayMs) {
          await deleteBlock(this.opts.bucket, tenant, ulid);
          this.counters.partial.inc();
          stats.partialDeleted++;
          this.opts.logger.warn({ tenant, block: ulid }, 'deleted a partial block (an upload that never finished)');
        }
      }
    }
    return stats;
  }

  async updateIndex(tenant: string): Promise<void> {
    const previous = await readBucketIndex(this.opts.bucket, tenant).catch(() => null);
    const { index } = await buildBucketIndex(this.opts.bucket, tenant, this.now(), { previous, metaCache: this.metaCache });
    await writeBucketIndex(this.opts.bucket, tenant, index);
  }

  private async compactGroup(tenant: string, sources: BlockMeta[], tombstones: DeletionRequest[]): Promise<void> {
    const began = this.now();
    const work = join(this.opts.dataDir, tenant, `compact-${sources[0].ulid}`);
    await rm(work, { recursive: true, force: true });
    const readers: BlockReader[] = [];
    try {
      for (const m of sources) readers.push(await this.download(tenant, m.ulid, join(work, m.ulid)));
      const { block, stats } = await compactBlocks({ dir: join(work, 'out'), blocks: readers, tombstones });
      if (block) for (const r of tombstones) this.clean.add(`${block.meta.ulid}/${r.id}`);
      if (block) await uploadBlock(this.opts.bucket, tenant, block.meta.ulid, block.dir);
      for (const m of sources) await this.mark(tenant, m.ulid, `compacted into ${block?.meta.ulid ?? 'nothing (no series)'}`);
      this.counters.compactions.inc();
      this.opts.logger.info(
        {
          tenant,
          sources: sources.map((m) => m.ulid),
          block: block?.meta.ulid,
          level: block?.meta.compaction.level,
          minTime: block?.meta.minTime,
          maxTime: block?.meta.maxTime,
          samples: block?.meta.stats.numSamples,
          duplicateSamples: stats.duplicateSamples,
          deletedSamples: stats.deletedSamples,
          ms: this.now() - began,
        },
        `compacted ${sources.length} blocks of tenant ${tenant} into ${block?.meta.ulid ?? 'nothing'} (${stats.duplicateSamples} duplicate samples dropped)`,
      );
    } finally {
      for (const r of readers) await r.close().catch(() => undefined);
      await rm(work, { recursive: true, force: true });
    }
  }

  private async download(tenant: string, ulid: string, dir: string): Promise<BlockReader> {
    const prefix = `${tenant}/${ulid}/`;
    for (const key of await this.opts.bucket.list(prefix, { recursive: true })) {
      const rel = key.slice(prefix.length);
      if (rel === 'deletion-mark.json') continue;
      const path = join(dir, ...rel.split('/'));
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, await this.opts.bucket.get(key));
    }
    await mkdir(join(dir, 'chunks'), { recursive: true });
    return BlockReader.openDir(dir);
  }

  private async mark(tenant: string, ulid: string, why: string): Promise<void> {
    await markForDeletion(this.opts.bucket, tenant, ulid, this.now());
    this.counters.marked.inc();
    this.opts.logger.info({ tenant, block: ulid }, `marked block ${ulid} for deletion: ${why}`);
  }

  /** Blocks whose every source is inside a higher-level block's sources. */
  private redundant(live: BlockMeta[]): BlockMeta[] {
    const out: BlockMeta[] = [];
    for (const m of live) {
      const covered = live.some(
        (o) => o !== m && o.compaction.level > m.compaction.level && m.compaction.sources.every((s) => o.compaction.sources.includes(s)),
      );
      if (covered) out.push(m);
    }
    return out;
  }

  private async blocks(tenant: string): Promise<{ metas: Map<string, BlockMeta>; marks: Map<string, DeletionMark>; partial: Map<string, number> }> {
    const scan = await scanTenantBlocks(this.opts.bucket, tenant, this.metaCache);
    for (const [id, m] of scan.metas) this.metaCache.set(id, m);
    const marks = await readDeletionMarks(this.opts.bucket, tenant);
    return { metas: scan.metas, marks, partial: scan.partial };
  }

  private async tenants(): Promise<string[]> {
    if (this.opts.enabledTenants.length > 0) return this.opts.enabledTenants;
    return (await this.opts.bucket.list('')).map(tenantFromListing).filter((t): t is string => t !== null);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }
}

function planBlock(m: BlockMeta): PlanBlock {
  return { ulid: m.ulid, minTime: m.minTime, maxTime: m.maxTime, level: m.compaction.level, createdAt: ulidTime(m.ulid) };
}
