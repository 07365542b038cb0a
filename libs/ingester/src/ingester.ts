// Consumes one Kafka partition into per-tenant heads. Kafka is the write-ahead
// log: nothing is committed until it is persisted elsewhere, so a restarted
// ingester replays its partition and rebuilds exactly what it had. It serves
// queries only once caught up, so a replaying ingester never answers short.

import { Counter, Gauge, type Registry } from 'prom-client';
import { decodeWriteRequest } from '@strata/remote-write';
import { TenantHeads, emptyAppendStats, type AppendStats } from '@strata/tsdb';
import type { LabelValuesParams, Querier, SelectParams, Series } from '@strata/model';
import type { Logger } from '@strata/service';
import type { IngesterIdentity } from './instance-id.ts';

export interface IngestRecord {
  tenant: string;
  value: Buffer;
  offset: bigint;
}

/** What the ingester needs from Kafka (a PartitionReader in production). */
export interface RecordSource {
  start(): Promise<void>;
  stop(): Promise<void>;
  waitCaughtUp(maxLag: number, onProgress?: (consumed: bigint, end: bigint) => void): Promise<void>;
}

export interface IngesterOptions {
  identity: IngesterIdentity;
  /** Builds the reader, handing it the ingester's record handler. */
  createSource(onRecords: (batch: IngestRecord[]) => Promise<void> | void): RecordSource;
  maxLagForReady: number;
  logger: Logger;
  registry: Registry;
}

export class NotReadyError extends Error {}

export class Ingester implements Querier {
  readonly heads = new TenantHeads();
  private readonly source: RecordSource;
  private caughtUp = false;
  private progress = 'starting';
  private readonly samplesAppended: Counter<'tenant'>;
  private readonly samplesRejected: Counter<'tenant' | 'reason'>;
  private readonly recordsConsumed: Counter;

  constructor(private readonly opts: IngesterOptions) {
    const registers = [opts.registry];
    this.samplesAppended = new Counter({
      name: 'strata_ingester_samples_appended_total',
      help: 'Samples appended to the head.',
      labelNames: ['tenant'],
      registers,
    });
    this.samplesRejected = new Counter({
      name: 'strata_ingester_samples_rejected_total',
      help: 'Samples not appended, by reason (duplicate = idempotent replay).',
      labelNames: ['tenant', 'reason'],
      registers,
    });
    this.recordsConsumed = new Counter({
      name: 'strata_ingester_kafka_records_consumed_total',
      help: 'Kafka records consumed from the owned partition.',
      registers,
    });
    const heads = this.heads;
    new Gauge({
      name: 'strata_ingester_active_series',
      help: 'Series in the in-memory head, all tenants.',
      registers,
      collect() {
        this.set(heads.numSeries);
      },
    });
    this.source = opts.createSource((batch) => this.consume(batch));
  }

  get identity(): IngesterIdentity {
    return this.opts.identity;
  }

  /** Starts consuming; resolves once consumption runs (not when caught up: see ready()). */
  async start(): Promise<void> {
    const { identity, logger } = this.opts;
    await this.source.start();
    logger.info({ partition: identity.partition }, `${identity.id} consuming partition ${identity.partition}; replaying from the start of the partition`);
    const began = Date.now();
    let lastLog = 0;
    void this.source
      .waitCaughtUp(this.opts.maxLagForReady, (consumed, end) => {
        this.progress = `replaying partition ${identity.partition}: ${consumed} of ${end} records`;
        if (Date.now() - lastLog >= 2000) {
          lastLog = Date.now();
          const pct = end > 0n ? Number((consumed * 1000n) / end) / 10 : 100;
          logger.info({ consumed: String(consumed), end: String(end) }, `${this.progress} (${pct}%)`);
        }
      })
      .then(() => {
        this.caughtUp = true;
        logger.info(
          { series: this.heads.numSeries, seconds: (Date.now() - began) / 1000 },
          `${identity.id} caught up with partition ${identity.partition}; ready`,
        );
      })
      .catch((err: Error) => {
        this.progress = `catch-up failed: ${err.message}`;
        logger.error({ err: err.message }, 'waiting for catch-up failed');
      });
  }

  async stop(): Promise<void> {
    await this.source.stop();
  }

  notReadyReason(): string | undefined {
    return this.caughtUp ? undefined : this.progress;
  }

  async select(p: SelectParams): Promise<Series[]> {
    this.assertReady();
    return this.heads.select(p);
  }

  async labelNames(p: SelectParams): Promise<string[]> {
    this.assertReady();
    return this.heads.labelNames(p);
  }

  async labelValues(p: LabelValuesParams): Promise<string[]> {
    this.assertReady();
    return this.heads.labelValues(p);
  }

  private assertReady(): void {
    if (!this.caughtUp) throw new NotReadyError(`${this.opts.identity.id} is not ready (${this.progress}); ask the other zone`);
  }

  private consume(batch: IngestRecord[]): void {
    for (const record of batch) {
      let req: ReturnType<typeof decodeWriteRequest>;
      try {
        req = decodeWriteRequest(record.value);
      } catch (err) {
        // A record the distributor would never write; skip it rather than stall the partition.
        this.samplesRejected.inc({ tenant: record.tenant, reason: 'corrupt-record' });
        this.opts.logger.error({ offset: String(record.offset), err: (err as Error).message }, 'skipping undecodable record');
        continue;
      }
      const stats = emptyAppendStats();
      const head = this.heads.head(record.tenant);
      for (const ts of req.timeseries) head.append(ts.labels, ts.timestamps, ts.values, stats);
      this.count(record.tenant, stats);
    }
    this.recordsConsumed.inc(batch.length);
  }

  private count(tenant: string, stats: AppendStats): void {
    if (stats.appended > 0) this.samplesAppended.inc({ tenant }, stats.appended);
    if (stats.duplicates > 0) this.samplesRejected.inc({ tenant, reason: 'duplicate' }, stats.duplicates);
    if (stats.outOfOrder > 0) this.samplesRejected.inc({ tenant, reason: 'out-of-order' }, stats.outOfOrder);
    if (stats.conflicting > 0) this.samplesRejected.inc({ tenant, reason: 'duplicate-timestamp-other-value' }, stats.conflicting);
  }
}
