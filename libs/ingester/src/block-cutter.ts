// Turns the head's completed ranges into blocks and gets them into the bucket:
// cut (a snapshot of whole chunks; samples below the range end are refused
// from then on), write locally, upload (meta.json last), and only then
// truncate the head. A failed upload leaves the head untouched and is retried
// on the next tick. Local blocks are kept until the retention period.
// One operation at a time: ticks and flushes are serialised.

import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Counter } from 'prom-client';
import type { Bucket } from '@strata/objstore';
import type { Logger } from '@strata/service';
import { uploadBlock } from '@strata/storegateway';
import { BlockReader, isUlid, writeBlockFromChunks, type WrittenBlock } from '@strata/tsdb';
import { readShipped, writeShipped } from './shipper-state.ts';
import type { LocalBlock, TenantDB } from './tenant-db.ts';

export interface BlockCutterOptions {
  bucket: Bucket;
  /** Local directory of the tenants' blocks (-blocks-storage.tsdb.dir). */
  dir: string;
  blockRangeMs: number;
  /** Local blocks are removed this long after they were shipped. */
  retentionMs: number;
  /** A tenant's head without appends for this long is flushed whole (0: never). */
  idleTimeoutMs: number;
  /** The tenant's out-of-order window: ranges are cut only once it has passed. */
  outOfOrderWindowMs: (tenant: string) => number;
  logger: Logger;
  now: () => number;
  metrics: {
    blocksCut: Counter;
    blocksShipped: Counter;
    uploadFailures: Counter;
  };
}

export interface LocalTenantBlocks {
  tenant: string;
  blocks: LocalBlock[];
}

export class BlockCutter {
  private chain: Promise<unknown> = Promise.resolve();

  private readonly opts: BlockCutterOptions;

  constructor(opts: BlockCutterOptions) {
    this.opts = opts;
  }

  /** Opens the local blocks of every tenant (their index headers): the ingester's warm start. */
  async openLocalBlocks(): Promise<LocalTenantBlocks[]> {
    await mkdir(this.opts.dir, { recursive: true });
    const out: LocalTenantBlocks[] = [];
    for (const tenant of await readdir(this.opts.dir)) {
      const tdir = join(this.opts.dir, tenant);
      let names: string[];
      try {
        names = await readdir(tdir);
      } catch {
        continue;
      }
      const shipped = await readShipped(tdir);
      const blocks: LocalBlock[] = [];
      for (const name of names.sort()) {
        if (name.endsWith('.tmp-for-creation')) {
          await rm(join(tdir, name), { recursive: true, force: true });
          continue;
        }
        if (!isUlid(name)) continue;
        try {
          const reader = await BlockReader.openDir(join(tdir, name));
          const meta = reader.meta!;
          // Shipped before the restart: its retention restarts now (conservative: kept a little longer).
          const was = shipped.has(name);
          blocks.push({
            meta,
            dir: join(tdir, name),
            reader,
            shipped: was,
            shippedAt: was ? this.opts.now() : undefined,
            rangeStart: meta.minTime,
            rangeEnd: meta.maxTime,
          });
        } catch (err) {
          this.opts.logger.error({ tenant, block: name, err: (err as Error).message }, 'cannot open a local block; moving it aside');
          await rm(join(tdir, name), { recursive: true, force: true });
        }
      }
      if (blocks.length > 0) out.push({ tenant, blocks });
    }
    return out;
  }

  /** Cuts what is due, ships what is pending, applies retention and idle flushes. */
  tick(dbs: Iterable<TenantDB>): Promise<void> {
    return this.serial(async () => {
      for (const db of dbs) {
        try {
          const idle = this.opts.idleTimeoutMs > 0 && this.opts.now() - db.lastAppendAt >= this.opts.idleTimeoutMs;
          if (idle && db.head.maxTime >= db.cutUpTo && db.head.numSeries > 0) {
            this.opts.logger.info({ tenant: db.tenant }, 'tenant idle: flushing its head to blocks');
            await this.cutAll(db);
          } else {
            await this.cutDue(db);
          }
          await this.ship(db);
        } catch (err) {
          this.opts.logger.error(
            { tenant: db.tenant, err: (err as Error).message },
            'block cut or upload failed; the head keeps the data and the next tick retries',
          );
        }
        await this.applyRetention(db);
      }
    });
  }

  /** Cuts and ships everything in the heads (POST /ingester/flush). Throws if an upload fails. */
  flush(dbs: Iterable<TenantDB>): Promise<void> {
    return this.serial(async () => {
      const failures: string[] = [];
      for (const db of dbs) {
        try {
          await this.cutAll(db);
          await this.ship(db);
        } catch (err) {
          failures.push(`${db.tenant}: ${(err as Error).message}`);
        }
      }
      if (failures.length > 0) throw new Error(`flush incomplete, retried on the next tick: ${failures.join('; ')}`);
    });
  }

  /** Ranges [a, a+R) the head has moved past by half a range (or the out-of-order window). */
  private async cutDue(db: TenantDB): Promise<void> {
    const r = this.opts.blockRangeMs;
    const wait = Math.max(r / 2, this.opts.outOfOrderWindowMs(db.tenant));
    for (;;) {
      const from = db.unCutMinTime();
      if (from === Infinity || db.head.maxTime < from) return;
      const a = Math.floor(from / r) * r;
      if (db.head.maxTime < a + r + wait) return;
      await this.cut(db, Math.max(a, db.cutUpTo), a + r);
    }
  }

  /** Every range up to the head's newest sample. */
  private async cutAll(db: TenantDB): Promise<void> {
    const r = this.opts.blockRangeMs;
    const end = db.head.maxTime + 1;
    for (;;) {
      const from = db.unCutMinTime();
      if (from === Infinity || from >= end) return;
      const a = Math.floor(from / r) * r;
      await this.cut(db, Math.max(a, db.cutUpTo), Math.min(a + r, end));
    }
  }

  private async cut(db: TenantDB, mint: number, maxt: number): Promise<void> {
    const began = this.opts.now();
    // The longest the event loop was held while cutting: Kafka acks and requests waited that long behind it.
    const stalls = monitorEventLoopDelay({ resolution: 20 });
    stalls.enable();
    let written: WrittenBlock | null;
    try {
      written = await this.writeRange(db, mint, maxt);
    } finally {
      stalls.disable();
    }
    if (written === null) return;
    this.opts.metrics.blocksCut.inc();
    const { stats } = written.meta;
    const stallMs = Math.round(stalls.max / 1e6);
    this.opts.logger.info(
      {
        tenant: db.tenant,
        block: written.meta.ulid,
        mint,
        maxt,
        series: stats.numSeries,
        samples: stats.numSamples,
        chunks: stats.numChunks,
        ms: this.opts.now() - began,
        stallMs,
      },
      `cut block ${written.meta.ulid} of tenant ${db.tenant}: [${mint}, ${maxt}), ${stats.numSeries} series, ${stats.numSamples} samples; longest event-loop stall ${stallMs} ms`,
    );
  }

  /** Writes the head's [mint, maxt) as a local block and opens it; null when the range holds nothing. */
  private async writeRange(db: TenantDB, mint: number, maxt: number): Promise<WrittenBlock | null> {
    const series = await db.head.snapshotForBlockInTurns(mint, maxt);
    db.cutUpTo = maxt;
    if (series.length === 0) return null;
    await mkdir(db.dir, { recursive: true });
    // meta.json spans the cut range, as Prometheus' head blocks do: both zones' blocks of a range line up for the compactor.
    // The ingester's head holds labels as the distributor validated them: sorted, no empty values.
    const written = await writeBlockFromChunks({ dir: db.dir, series, sorted: true, source: 'receive', minTime: mint, maxTime: maxt });
    if (written === null) return null;
    const reader = await BlockReader.openDir(written.dir);
    db.blocks.push({ meta: written.meta, dir: written.dir, reader, shipped: false, rangeStart: mint, rangeEnd: maxt });
    return written;
  }

  /** Uploads unshipped blocks oldest first; after each, truncates the head below what is shipped. */
  private async ship(db: TenantDB): Promise<void> {
    for (const b of db.blocks) {
      if (b.shipped) continue;
      const began = this.opts.now();
      try {
        const up = await uploadBlock(this.opts.bucket, db.tenant, b.meta.ulid, b.dir);
        b.shipped = true;
        b.shippedAt = this.opts.now();
        await writeShipped(
          db.dir,
          db.blocks.filter((x) => x.shipped).map((x) => x.meta.ulid),
        );
        this.opts.metrics.blocksShipped.inc();
        this.opts.logger.info(
          { tenant: db.tenant, block: b.meta.ulid, bytes: up.bytes, ms: this.opts.now() - began },
          `shipped block ${b.meta.ulid} of tenant ${db.tenant} to ${this.opts.bucket.name} (${up.bytes} bytes)`,
        );
      } catch (err) {
        this.opts.metrics.uploadFailures.inc();
        throw new Error(`uploading block ${b.meta.ulid}: ${(err as Error).message}`, { cause: err });
      } finally {
        await this.truncate(db);
      }
    }
    await this.truncate(db);
  }

  private async truncate(db: TenantDB): Promise<void> {
    let bound = db.cutUpTo;
    for (const b of db.blocks) if (!b.shipped && b.rangeStart < bound) bound = b.rangeStart;
    if (bound > db.persistedBefore) {
      await db.head.truncateInTurns(bound);
      db.persistedBefore = bound;
    }
  }

  private async applyRetention(db: TenantDB): Promise<void> {
    const cutoff = this.opts.now() - this.opts.retentionMs;
    const old = db.blocks.filter((b) => b.shipped && (b.shippedAt ?? 0) < cutoff);
    if (old.length === 0) return;
    db.blocks = db.blocks.filter((b) => !old.includes(b));
    await writeShipped(
      db.dir,
      db.blocks.filter((x) => x.shipped).map((x) => x.meta.ulid),
    );
    for (const b of old) {
      // A query may still be reading it: close and delete a little later.
      setTimeout(
        () =>
          void b.reader
            .close()
            .then(() => rm(b.dir, { recursive: true, force: true }))
            .catch(() => undefined),
        30_000,
      ).unref();
      this.opts.logger.info({ tenant: db.tenant, block: b.meta.ulid }, 'local block past the retention period removed');
    }
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }
}
