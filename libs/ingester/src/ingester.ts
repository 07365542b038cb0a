// Consumes one Kafka partition into per-tenant heads, cuts them into blocks
// and ships those to the bucket. Kafka is the write-ahead log: the committed
// offset never passes a record whose samples exist only in memory (it moves
// only after the blocks holding them reached the bucket), so a restart
// replays from the committed offset and blocks + replay hold everything.
// It serves queries (head + local blocks) only once caught up and warm.

import type { Registry } from 'prom-client';
import { join } from 'node:path';
import { StrataError, isRetriable } from '@strata/errors';
import { SymbolizedDecoder, decodeWriteRequest, validateHistogram, type DecodedSeries, type SymbolizedRecord } from '@strata/remote-write';
import { DecodedSamplesCache, Head, type AppendStats, emptyAppendStats } from '@strata/tsdb';
import {
  QueryAbortedError,
  labelsKey,
  type ExemplarParams,
  type ExemplarQuerier,
  type ExemplarSeries,
  type LabelValuesParams,
  type MetadataParams,
  type MetadataQuerier,
  type MetricMetadataEntry,
  type Querier,
  type QueryBudget,
  type SelectParams,
  type Series,
} from '@strata/model';
import type { Bucket } from '@strata/objstore';
import type { Logger } from '@strata/service';
import { BlockCutter } from './block-cutter.ts';
import { IngesterMetrics } from './ingester-metrics.ts';
import { ConsumedOffset } from './consumed-offset.ts';
import type { IngesterIdentity } from './instance-id.ts';
import { OffsetTracker } from './offset-tracker.ts';
import { TenantDB } from './tenant-db.ts';
import { EwmaRate, INGESTION_RATE_TICK_MS } from './ingestion-rate.ts';
import { InstanceLimitGate, type InstanceLimits } from './instance-limits.ts';
import { SpanStatusCode, defaultTracer, extractTraceContext, inSpanSync, type Tracer } from '@strata/tracing';

const LIMIT_CHECK_INTERVAL_MS = 1000;
/** Between attempts to start consuming while Kafka refuses or cannot be reached. */
const CONNECT_RETRY_MS = 5000;

export interface IngestRecord {
  tenant: string;
  value: Buffer;
  /** Default 'write-request' (a remote-write 1.0 WriteRequest); 'symbolized': record format 3 (SymbolizedDecoder). */
  format?: 'write-request' | 'symbolized';
  offset: bigint;
  /** Kafka record headers; `traceparent` makes the append span a child of the distributor's push span. */
  headers?: Record<string, string>;
  /** When Kafka received the record (ms since the epoch), for the receive delay. */
  timestamp?: number;
}

/** One record's append, as it goes. */
interface RecordAppend {
  stats: AppendStats;
  maxTime: number;
  /** Samples (floats and histograms) the record held. */
  samples: number;
  /** Samples of series the tenant's series limit kept out. */
  seriesLimited: number;
  /** The tenant's series limit in this ingester (0: none). */
  maxSeries: number;
}

/** What the ingester needs from Kafka (a PartitionReader in production). */
export interface RecordSource {
  start(): Promise<void>;
  stop(): Promise<void>;
  waitCaughtUp(maxLag: number, onProgress?: (consumed: bigint, end: bigint) => void): Promise<void>;
  /** Commits the offset to resume from after a restart. */
  commit(nextOffset: bigint): Promise<void>;
  /** The next offset to consume. */
  position(): bigint;
  /** Records in the partition not yet consumed (asks Kafka); absent: lag is not reported. */
  lag?(): Promise<bigint>;
}

/** Per-tenant limits, read at use so runtime overrides apply. */
export interface IngesterLimits {
  outOfOrderTimeWindowMs(tenant: string): number;
  maxExemplars(tenant: string): number;
  /** Series the tenant may have in this ingester's head (its share of max_global_series_per_user); 0 or absent: no limit. */
  maxSeries?(tenant: string): number;
}

export interface BlocksStorageOptions {
  bucket: Bucket;
  /** Local block directory (-blocks-storage.tsdb.dir). */
  dir: string;
  blockRangeMs: number;
  retentionMs: number;
  /** How often due ranges are cut and pending uploads retried. */
  headCompactionIntervalMs: number;
  headCompactionIdleTimeoutMs: number;
}

export interface IngesterOptions {
  identity: IngesterIdentity;
  /** Builds the reader, handing it the ingester's record handler and where to report records retention deleted before they were read. */
  createSource(onRecords: (batch: IngestRecord[]) => Promise<void> | void, onMissedRecords: (from: bigint, to: bigint) => void): RecordSource;
  maxLagForReady: number;
  logger: Logger;
  registry: Registry;
  /** Without it the ingester keeps everything in memory and never commits (Kafka retention bounds history). */
  blocksStorage?: BlocksStorageOptions;
  limits?: IngesterLimits;
  now?: () => number;
  /** An `ingester.append` span per record, child of the span that produced it. Default: the global (no-op) tracer. */
  tracer?: Tracer;
  /**
   * What one query may take out of a tenant's head (-querier.max-fetched-series-per-query, -querier.max-samples,
   * the tenant's max_fetched_* overrides): fixed, or read per query for the tenant.
   */
  queryBudget?: QueryBudget | ((tenant: string) => QueryBudget);
  /** Bytes of decoded head samples kept between queries, over all tenants (-ingester.decoded-chunks-cache-size); 0 or absent: none. */
  decodedSamplesCacheBytes?: number;
  /** Past these the ingester asks distributors to refuse writes to its partition (onOverLimit); absent: none. */
  instanceLimits?: InstanceLimits;
  /** Called with why writes should be refused, and with undefined once they may go on. */
  onOverLimit?: (reason: string | undefined) => void;
}

/** A tenant's numbers in this ingester, with Mimir's user_stats names. */
export interface TenantStats {
  tenant: string;
  /** Series in the in-memory head. */
  numSeries: number;
  /** Samples per second appended (an EWMA ticked every 15s), once caught up. */
  ingestionRate: number;
  /** The part that came through the push API: all of it (no ruler writes here). */
  apiIngestionRate: number;
  ruleIngestionRate: number;
}

/** What the ingester's status page shows: where it is in its partition. */
export interface IngesterStatus {
  id: string;
  zone: string;
  partition: number;
  state: 'loading local blocks' | 'replaying' | 'running' | 'stopped';
  /** Why it is not ready, when it is not. */
  notReadyReason: string | undefined;
  /** While replaying: records consumed of the partition's end offset when replay began (as strings: offsets are 64-bit). */
  replay: { consumed: string; end: string } | undefined;
  /** The next offset to consume. */
  nextOffset: string | undefined;
  /** Everything before it is in shipped blocks (null: nothing committed since start). */
  committedOffset: string | null;
  /** Records in the partition not consumed yet (asked from Kafka now); undefined if Kafka did not answer in 2s. */
  lagRecords: number | undefined;
  series: number;
  tenants: number;
  localBlocks: number;
}

/** Asked to serve before it caught up (or while stopping): `unavailable`, the querier asks the other zone. */
export class NotReadyError extends StrataError {
  constructor(message: string) {
    super('ingester-not-ready', 'unavailable', message);
  }
}

const DEFAULT_LIMITS: IngesterLimits = { outOfOrderTimeWindowMs: () => 0, maxExemplars: () => 100_000 };

export class Ingester implements Querier, ExemplarQuerier, MetadataQuerier {
  private readonly dbs = new Map<string, TenantDB>();
  private readonly consumed = new ConsumedOffset();
  /** Decodes format-3 records (one at a time, into arrays it reuses). */
  private readonly symbolized = new SymbolizedDecoder();
  /** A new one for each attempt to start consuming: a reader that failed to start cannot start again. */
  private source: RecordSource;
  private connectRetry: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly limitGate: InstanceLimitGate | undefined;
  private limitTimer: NodeJS.Timeout | undefined;
  private readonly tracker: OffsetTracker;
  private readonly cutter: BlockCutter | undefined;
  private readonly limits: IngesterLimits;
  private readonly now: () => number;
  private caughtUp = false;
  /** Between source.start() and stop(): only then may a scrape ask Kafka for the lag. */
  private consuming = false;
  private warm = false;
  private progress = 'starting';
  private replay: { consumed: bigint; end: bigint } | undefined;
  private readonly rates = new Map<string, EwmaRate>();
  private rateTimer: NodeJS.Timeout | undefined;
  private lastCommitted: bigint | null = null;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private readonly metrics: IngesterMetrics;
  /** When each tenant's series-limit rejection was last logged (one line per tenant per minute). */
  private readonly seriesLimitLoggedAt = new Map<string, number>();
  /** When each tenant's rejected samples were last logged (one line per tenant per minute). */
  private readonly rejectionLoggedAt = new Map<string, number>();
  /** Tenants whose head chunk file error was logged (once each). */
  private readonly chunkFileErrorLogged = new Set<string>();
  private readonly tracer: Tracer;
  private readonly decodedSamples: DecodedSamplesCache | undefined;

  private readonly opts: IngesterOptions;

  constructor(opts: IngesterOptions) {
    this.opts = opts;
    this.limits = opts.limits ?? DEFAULT_LIMITS;
    this.decodedSamples = opts.decodedSamplesCacheBytes ? new DecodedSamplesCache(opts.decodedSamplesCacheBytes) : undefined;
    // Records grouped by an eighth of a block range of data time: few entries, a commit at most that far behind.
    this.tracker = new OffsetTracker((opts.blocksStorage?.blockRangeMs ?? 0) / 8);
    this.now = opts.now ?? Date.now;
    this.tracer = opts.tracer ?? defaultTracer();
    this.metrics = new IngesterMetrics({
      registry: opts.registry,
      partition: opts.identity.partition,
      dbs: this.dbs,
      lag: () => (this.consuming ? this.source.lag?.() : undefined),
      overLimit: () => this.limitGate?.reason,
      blocks: opts.blocksStorage !== undefined,
    });
    const bs = opts.blocksStorage;
    if (bs) {
      this.cutter = new BlockCutter({
        bucket: bs.bucket,
        dir: bs.dir,
        blockRangeMs: bs.blockRangeMs,
        retentionMs: bs.retentionMs,
        idleTimeoutMs: bs.headCompactionIdleTimeoutMs,
        outOfOrderWindowMs: (t) => this.limits.outOfOrderTimeWindowMs(t),
        logger: opts.logger,
        now: this.now,
        metrics: this.metrics.blockCutter!,
      });
    }
    this.source = this.newSource();
    if (opts.instanceLimits)
      this.limitGate = new InstanceLimitGate({ limits: opts.instanceLimits, numSeries: () => this.numSeries, onChange: (r) => opts.onOverLimit?.(r) });
  }

  get identity(): IngesterIdentity {
    return this.opts.identity;
  }

  /** Warm start (local blocks' index headers), then consumption; readiness follows catch-up. */
  async start(): Promise<void> {
    await this.loadLocalBlocks();
    this.warm = true;
    await this.connect();
  }

  private newSource(): RecordSource {
    return this.opts.createSource(
      (batch) => this.consume(batch),
      (from, to) => this.metrics.recordsMissed.inc(Number(to - from)),
    );
  }

  private async loadLocalBlocks(): Promise<void> {
    const { identity, logger } = this.opts;
    if (this.cutter) {
      const began = this.now();
      this.progress = 'loading local blocks';
      let n = 0;
      for (const { tenant, blocks } of await this.cutter.openLocalBlocks()) {
        const db = this.db(tenant);
        db.blocks = blocks;
        const end = Math.max(...blocks.map((b) => b.meta.maxTime));
        // Samples below are in these blocks: a replay must not put them back in the head.
        db.cutUpTo = end;
        db.head.setMinValidTime(end);
        const unshipped = blocks.filter((b) => !b.shipped);
        db.persistedBefore = unshipped.length > 0 ? Math.min(...unshipped.map((b) => b.rangeStart)) : end;
        n += blocks.length;
      }
      logger.info({ blocks: n, seconds: (this.now() - began) / 1000 }, `${identity.id} loaded the index headers of ${n} local blocks`);
    }
  }

  /**
   * Starts consuming. While Kafka cannot be reached or refuses this ingester (wrong credentials, an
   * untrusted certificate, brokers down) it stays up and not ready, says why once per reason, and
   * tries again every CONNECT_RETRY_MS with a new reader; a reader failed for good still throws.
   */
  private async connect(): Promise<void> {
    try {
      await this.source.start();
    } catch (err) {
      if (this.stopped) return;
      if (!(err instanceof StrataError) || !isRetriable(err.kind)) throw err;
      const reason = `cannot reach Kafka: ${err.message}`;
      if (reason !== this.progress) this.opts.logger.error({ err: err.message }, `${reason}; retrying every ${CONNECT_RETRY_MS / 1000}s`);
      this.progress = reason;
      this.connectRetry = setTimeout(() => {
        this.source = this.newSource();
        this.connect().catch((e: Error) => this.opts.logger.error({ err: e.message }, 'starting the partition reader failed for good'));
      }, CONNECT_RETRY_MS);
      return;
    }
    this.startConsuming();
  }

  /** From the reader's start on: catch-up (then ready), ingestion rates, limit checks and block cuts. */
  private startConsuming(): void {
    const { identity, logger } = this.opts;
    this.consuming = true;
    logger.info(
      { partition: identity.partition, from: String(this.source.position()) },
      `${identity.id} consuming partition ${identity.partition} from offset ${this.source.position()}${this.cutter ? ' (the committed offset)' : ''}`,
    );
    const began = this.now();
    let lastLog = 0;
    void this.source
      .waitCaughtUp(this.opts.maxLagForReady, (consumed, end) => {
        this.progress = `replaying partition ${identity.partition}: ${consumed} of ${end} records`;
        this.replay = { consumed, end };
        if (this.now() - lastLog >= 2000) {
          lastLog = this.now();
          logger.info({ consumed: String(consumed), end: String(end) }, this.progress);
        }
      })
      .then(() => {
        this.caughtUp = true;
        logger.info({ series: this.numSeries, seconds: (this.now() - began) / 1000 }, `${identity.id} caught up with partition ${identity.partition}; ready`);
      })
      .catch((err: Error) => {
        this.progress = `catch-up failed: ${err.message}`;
        logger.error({ err: err.message }, 'waiting for catch-up failed');
      });
    this.rateTimer = setInterval(() => {
      for (const r of this.rates.values()) r.tick();
    }, INGESTION_RATE_TICK_MS);
    this.rateTimer.unref();
    // Judged after every batch too; this clears a verdict while no records come (writes refused, heap freed).
    if (this.limitGate) {
      const gate = this.limitGate;
      this.limitTimer = setInterval(() => gate.check(), LIMIT_CHECK_INTERVAL_MS);
      this.limitTimer.unref();
    }
    if (this.cutter && this.opts.blocksStorage) {
      this.timer = setInterval(() => void this.tick(), this.opts.blocksStorage.headCompactionIntervalMs);
      this.timer.unref();
      void this.tick();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.connectRetry);
    this.consuming = false;
    if (this.timer) clearInterval(this.timer);
    if (this.rateTimer) clearInterval(this.rateTimer);
    if (this.limitTimer) clearInterval(this.limitTimer);
    await this.ticking?.catch(() => undefined);
    await this.source.stop();
    for (const db of this.dbs.values()) {
      for (const b of db.blocks) await b.reader.close().catch(() => undefined);
      db.head.close();
    }
  }

  notReadyReason(): string | undefined {
    return this.caughtUp && this.warm ? undefined : this.progress;
  }

  get numSeries(): number {
    let n = 0;
    for (const db of this.dbs.values()) n += db.head.numSeries;
    return n;
  }

  /** The tenant's series and ingestion rate here (Mimir's user_stats); zeros for a tenant this ingester never saw. */
  userStats(tenant: string): TenantStats {
    const rate = this.rates.get(tenant)?.rate() ?? 0;
    return { tenant, numSeries: this.dbs.get(tenant)?.head.numSeries ?? 0, ingestionRate: rate, apiIngestionRate: rate, ruleIngestionRate: 0 };
  }

  /** Every tenant this ingester holds, by tenant id. */
  allUserStats(): TenantStats[] {
    return [...this.dbs.keys()].sort().map((t) => this.userStats(t));
  }

  /** Where the ingester is in its partition, the lag asked from Kafka now. */
  async status(): Promise<IngesterStatus> {
    const { id, zone, partition } = this.opts.identity;
    let lagRecords: number | undefined;
    if (this.consuming && this.source.lag) {
      const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2000).unref());
      const got = await Promise.race([this.source.lag().catch(() => undefined), timeout]);
      if (got !== undefined) lagRecords = Number(got);
    }
    const notReadyReason = this.notReadyReason();
    let localBlocks = 0;
    for (const db of this.dbs.values()) localBlocks += db.blocks.length;
    return {
      id,
      zone,
      partition,
      state: !this.warm ? 'loading local blocks' : !this.consuming ? 'stopped' : this.caughtUp ? 'running' : 'replaying',
      notReadyReason,
      replay: this.replay && !this.caughtUp ? { consumed: String(this.replay.consumed), end: String(this.replay.end) } : undefined,
      nextOffset: this.consuming ? String(this.source.position()) : undefined,
      committedOffset: this.lastCommitted === null ? null : String(this.lastCommitted),
      lagRecords,
      series: this.numSeries,
      tenants: this.dbs.size,
      localBlocks,
    };
  }

  /** The tenant's head (tests, exemplars and metadata for the API). */
  head(tenant: string): Head | undefined {
    return this.dbs.get(tenant)?.head;
  }

  tenants(): string[] {
    return [...this.dbs.keys()];
  }

  async select(p: SelectParams): Promise<Series[]> {
    this.assertReady();
    try {
      return (await this.dbs.get(p.tenant)?.select(p)) ?? [];
    } catch (err) {
      const reason = err instanceof QueryAbortedError ? 'canceled' : err instanceof StrataError && err.kind === 'unprocessable' ? 'budget' : undefined;
      if (reason !== undefined) {
        this.metrics.queriesStopped.inc({ reason });
        this.opts.logger.info({ tenant: p.tenant, reason, err: (err as Error).message }, `select stopped (${reason}): ${(err as Error).message}`);
      }
      throw err;
    }
  }

  async labelNames(p: SelectParams): Promise<string[]> {
    this.assertReady();
    return (await this.dbs.get(p.tenant)?.labelNames(p)) ?? [];
  }

  async labelValues(p: LabelValuesParams): Promise<string[]> {
    this.assertReady();
    return (await this.dbs.get(p.tenant)?.labelValues(p)) ?? [];
  }

  /** Exemplars of series matching any of the matcher sets, from the tenant's circular buffer. */
  async exemplars(p: ExemplarParams): Promise<ExemplarSeries[]> {
    this.assertReady();
    const head = this.dbs.get(p.tenant)?.head;
    if (!head) return [];
    const bySeries = new Map<string, ExemplarSeries>();
    for (const matchers of p.matcherSets.length > 0 ? p.matcherSets : [[]]) {
      for (const s of head.exemplars(matchers, p.mint, p.maxt)) {
        const key = labelsKey(s.labels);
        if (!bySeries.has(key)) bySeries.set(key, { seriesLabels: s.labels, exemplars: s.exemplars });
      }
    }
    return [...bySeries.values()];
  }

  /** Metric metadata the tenant's agents sent, one entry per distinct (family, type, help, unit). */
  async metadata(p: MetadataParams): Promise<MetricMetadataEntry[]> {
    this.assertReady();
    const head = this.dbs.get(p.tenant)?.head;
    if (!head) return [];
    const out: MetricMetadataEntry[] = [];
    for (const [metricFamilyName, entries] of head.metadata(p.metric || undefined)) {
      for (const e of entries) out.push({ metricFamilyName, type: e.type, help: e.help, unit: e.unit });
    }
    return out;
  }

  /** Read-after-write: resolves with the consumed offset once `offset` was consumed into the head. */
  waitForOffset(offset: bigint, timeoutMs: number): Promise<bigint> {
    return this.consumed.wait(offset, timeoutMs, () => this.opts.identity.id);
  }

  /** Cuts every head into blocks, ships them and commits (POST /ingester/flush). */
  async flush(): Promise<void> {
    if (!this.cutter) throw new Error('no blocks storage configured: nothing to flush to');
    try {
      await this.cutter.flush(this.dbs.values());
    } finally {
      await this.commit();
    }
  }

  /** One round of cutting, shipping and committing (also run every head compaction interval). */
  tick(): Promise<void> {
    if (!this.cutter) return Promise.resolve();
    for (const db of this.dbs.values()) {
      const err = db.head.chunkFiles?.error;
      if (err && !this.chunkFileErrorLogged.has(db.tenant)) {
        this.chunkFileErrorLogged.add(db.tenant);
        this.opts.logger.warn(
          { tenant: db.tenant, err: err.message },
          'cannot write head chunk files: this tenant keeps its closed chunks in memory from now on (nothing is lost; check the disk under -blocks-storage.tsdb.dir)',
        );
      }
    }
    this.ticking ??= this.cutter
      .tick(this.dbs.values())
      .then(() => this.commit())
      .catch((err: Error) => this.opts.logger.error({ err: err.message }, 'block cutting round failed'))
      .finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async commit(): Promise<void> {
    const offset = this.tracker.committable((t) => this.dbs.get(t)?.persistedBefore ?? -Infinity);
    if (offset === null || (this.lastCommitted !== null && offset <= this.lastCommitted)) return;
    try {
      await this.source.commit(offset);
      this.lastCommitted = offset;
      this.metrics.committedOffset.set(Number(offset));
      this.opts.logger.info(
        { offset: String(offset), pending: this.tracker.pending },
        `committed offset ${offset}: every record before it is in shipped blocks`,
      );
    } catch (err) {
      this.opts.logger.warn({ offset: String(offset), err: (err as Error).message }, 'offset commit failed; the next round retries');
    }
  }

  private assertReady(): void {
    const reason = this.notReadyReason();
    if (reason !== undefined) throw new NotReadyError(`${this.opts.identity.id} is not ready (${reason}); ask the other zone`);
  }

  private db(tenant: string): TenantDB {
    let db = this.dbs.get(tenant);
    if (!db) {
      const bs = this.opts.blocksStorage;
      const head = new Head({
        chunkRangeMs: bs?.blockRangeMs ?? 0,
        outOfOrderTimeWindowMs: () => this.limits.outOfOrderTimeWindowMs(tenant),
        maxExemplars: this.limits.maxExemplars(tenant),
        decodedSamples: this.decodedSamples,
        // Closed chunks live in files, as Prometheus' chunks_head: the head holds where they are.
        chunksDir: bs ? join(bs.dir, tenant, 'chunks_head') : undefined,
      });
      const budget = this.opts.queryBudget;
      db = new TenantDB(tenant, head, bs ? join(bs.dir, tenant) : '', this.now(), typeof budget === 'function' ? () => budget(tenant) : () => budget ?? {});
      this.dbs.set(tenant, db);
    }
    return db;
  }

  private consume(batch: IngestRecord[]): void {
    const now = this.now();
    const partition = String(this.opts.identity.partition);
    for (const record of batch) {
      if (record.timestamp !== undefined) this.metrics.receiveDelay.observe({ partition }, Math.max(0, now - record.timestamp) / 1000);
      // The append continues the trace of the push that produced the record.
      inSpanSync(
        this.tracer,
        'ingester.append',
        { attributes: { tenant: record.tenant, 'kafka.partition': this.opts.identity.partition, 'kafka.offset': String(record.offset) } },
        extractTraceContext(record.headers),
        (span) => {
          const stats = this.append(record, now);
          if (stats === undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: 'undecodable record skipped' });
          else
            span.setAttributes({
              'samples.appended': stats.appended,
              'samples.rejected': stats.duplicates + stats.outOfOrder + stats.conflicting + stats.outOfBounds,
            });
        },
      );
    }
    this.metrics.recordsConsumed.inc(batch.length);
    if (batch.length > 0) this.consumed.advance(batch[batch.length - 1].offset);
    this.limitGate?.check();
  }

  /** Why this ingester asks for no more writes now (an instance limit); undefined when under them. */
  get overLimitReason(): string | undefined {
    return this.limitGate?.reason;
  }

  /** Appends one record's series and metadata to its tenant's head; undefined for a record that cannot be decoded. */
  private append(record: IngestRecord, now: number): AppendStats | undefined {
    let req: ReturnType<typeof decodeWriteRequest> | SymbolizedRecord;
    try {
      req = record.format === 'symbolized' ? this.symbolized.decode(record.value) : decodeWriteRequest(record.value);
    } catch (err) {
      // A record the distributor would never write; skip it rather than stall the partition.
      this.metrics.samplesRejected.inc({ tenant: record.tenant, reason: 'corrupt-record' });
      this.opts.logger.error({ tenant: record.tenant, offset: String(record.offset), err: (err as Error).message }, 'skipping undecodable record');
      this.tracker.add(record.offset, record.tenant, -Infinity);
      return undefined;
    }
    const db = this.db(record.tenant);
    const r: RecordAppend = {
      stats: emptyAppendStats(),
      maxTime: -Infinity,
      samples: 0,
      seriesLimited: 0,
      maxSeries: this.limits.maxSeries?.(record.tenant) ?? 0,
    };
    if ('symbols' in req) this.appendSymbolized(db.head, req, r);
    else this.appendWriteRequest(record.tenant, db.head, req, r);
    if (r.seriesLimited > 0) this.seriesLimitReached(record.tenant, r.maxSeries, r.seriesLimited);
    db.lastAppendAt = now;
    this.tracker.add(record.offset, record.tenant, r.maxTime);
    if (r.samples > 0) this.metrics.samplesConsumed.inc({ tenant: record.tenant }, r.samples);
    this.count(record.tenant, r.stats);
    this.logRejections(record, r.stats);
    return r.stats;
  }

  private appendWriteRequest(tenant: string, head: Head, req: ReturnType<typeof decodeWriteRequest>, r: RecordAppend): void {
    for (const ts of req.timeseries) {
      const t = ts.timestamps;
      r.samples += t.length + ts.histograms;
      // Only a new series counts against the limit; the lookup runs only once the head is full.
      if (r.maxSeries > 0 && head.numSeries >= r.maxSeries && !head.hasSeries(ts.labels)) {
        r.seriesLimited += t.length + ts.histograms;
        continue;
      }
      for (let i = 0; i < t.length; i++) if (t[i] > r.maxTime) r.maxTime = t[i];
      head.append(ts, t, ts.values, r.stats, ts.exemplars, ts.starts);
      if (ts.histograms > 0) r.maxTime = Math.max(r.maxTime, this.appendHistograms(tenant, head, ts, r.stats));
    }
    for (const m of req.metadata) head.appendMetadata(m);
  }

  /** Record format 3: float series whose labels reference the record's symbols table. */
  private appendSymbolized(head: Head, req: SymbolizedRecord, r: RecordAppend): void {
    const symbols = head.symbols(req.bytes, req.symbolStart, req.symbolEnd, req.symbols);
    const { refs, refEnd, sampleEnd, timestamps: t } = req;
    for (let i = 0, refFrom = 0, from = 0; i < req.series; refFrom = refEnd[i], from = sampleEnd[i], i++) {
      const to = sampleEnd[i];
      r.samples += to - from;
      // Only a new series counts against the limit: once the head is full, absent series are not created.
      const s = head.seriesBySymbols(symbols, refs, refFrom, refEnd[i], !(r.maxSeries > 0 && head.numSeries >= r.maxSeries));
      if (s === undefined) {
        r.seriesLimited += to - from;
        continue;
      }
      for (let k = from; k < to; k++) if (t[k] > r.maxTime) r.maxTime = t[k];
      head.appendSamples(s, t, req.values, from, to, r.stats, req.starts);
    }
  }

  /** Appends a series' valid native histograms (invalid ones are counted and dropped); returns their newest timestamp. */
  private appendHistograms(tenant: string, head: Head, ts: DecodedSeries, stats: AppendStats): number {
    const valid = ts.histogramSamples.filter((h) => validateHistogram(h) === null);
    const invalid = ts.histogramSamples.length - valid.length;
    if (invalid > 0) this.metrics.samplesRejected.inc({ tenant, reason: 'invalid-histogram' }, invalid);
    let maxTime = -Infinity;
    for (const h of valid) if (h.timestamp > maxTime) maxTime = h.timestamp;
    if (valid.length > 0) head.appendHistograms(ts, valid, stats);
    return maxTime;
  }

  /**
   * Samples a sender should hear about (not idempotent-replay duplicates): one line per tenant per
   * minute, logged inside the append span so it names the trace of the push that carried them.
   */
  private logRejections(record: IngestRecord, stats: AppendStats): void {
    const rejected = {
      'out-of-order': stats.outOfOrder,
      'duplicate-timestamp-other-value': stats.conflicting,
      'out-of-bounds': this.caughtUp ? stats.outOfBounds : 0,
    };
    const total = rejected['out-of-order'] + rejected['duplicate-timestamp-other-value'] + rejected['out-of-bounds'];
    if (total === 0) return;
    const now = this.now();
    if (now - (this.rejectionLoggedAt.get(record.tenant) ?? -Infinity) < 60_000) return;
    this.rejectionLoggedAt.set(record.tenant, now);
    this.opts.logger.warn(
      { tenant: record.tenant, offset: String(record.offset), rejected },
      `tenant ${record.tenant}: ${total} samples of a record were not appended (${Object.entries(rejected)
        .filter(([, n]) => n > 0)
        .map(([r, n]) => `${n} ${r}`)
        .join(', ')}); ` +
        'senders overlap or send old samples (strata_ingester_samples_rejected_total); further lines for this tenant are skipped for a minute',
    );
  }

  private seriesLimitReached(tenant: string, maxSeries: number, samples: number): void {
    this.metrics.samplesRejected.inc({ tenant, reason: 'per-user-series-limit' }, samples);
    const now = this.now();
    if (now - (this.seriesLimitLoggedAt.get(tenant) ?? -Infinity) < 60_000) return;
    this.seriesLimitLoggedAt.set(tenant, now);
    this.opts.logger.warn(
      { tenant, limit: maxSeries, droppedSamples: samples, reason: 'per-user-series-limit' },
      `tenant ${tenant} reached its series limit of ${maxSeries} in ${this.opts.identity.id} (its share of max_global_series_per_user); ` +
        'samples of new series are dropped (strata_ingester_samples_rejected_total{reason="per-user-series-limit"}): reduce cardinality or raise max_global_series_per_user for the tenant',
    );
  }

  private count(tenant: string, stats: AppendStats): void {
    if (stats.appended > 0) this.metrics.samplesAppended.inc({ tenant }, stats.appended);
    // The live rate: a replay after a restart is not what the tenant sends now.
    if (stats.appended > 0 && this.caughtUp) {
      let rate = this.rates.get(tenant);
      if (!rate) this.rates.set(tenant, (rate = new EwmaRate()));
      rate.add(stats.appended);
    }
    if (stats.duplicates > 0) this.metrics.samplesRejected.inc({ tenant, reason: 'duplicate' }, stats.duplicates);
    if (stats.outOfOrder > 0) this.metrics.samplesRejected.inc({ tenant, reason: 'out-of-order' }, stats.outOfOrder);
    if (stats.conflicting > 0) this.metrics.samplesRejected.inc({ tenant, reason: 'duplicate-timestamp-other-value' }, stats.conflicting);
    // While replaying after a restart these are mostly samples already in local blocks: told apart for operators.
    if (stats.outOfBounds > 0)
      this.metrics.samplesRejected.inc({ tenant, reason: this.caughtUp ? 'out-of-bounds' : 'out-of-bounds-during-replay' }, stats.outOfBounds);
    if (stats.exemplarsAppended > 0) this.metrics.exemplarsAppended.inc({ tenant }, stats.exemplarsAppended);
    if (stats.exemplarsRejected > 0) this.metrics.samplesRejected.inc({ tenant, reason: 'exemplar-rejected' }, stats.exemplarsRejected);
  }
}
