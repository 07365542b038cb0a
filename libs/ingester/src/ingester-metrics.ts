// The ingester's metrics in one place (Mimir's pkg/ingester/metrics.go): the counters the
// consume path increments, and the gauges read from the heads, Kafka and the limits at scrape.

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { TenantDB } from './tenant-db.ts';

/** What the scrape-time gauges read. */
export interface IngesterMetricsSources {
  registry: Registry;
  /** The owned partition, a label of the Kafka metrics. */
  partition: number;
  /** The tenants' heads and blocks (the live map). */
  dbs: ReadonlyMap<string, TenantDB>;
  /** Records not consumed yet, asked from Kafka; undefined while not consuming or when the source cannot tell. */
  lag: () => Promise<bigint> | undefined;
  /** The instance limit this ingester is over, or undefined. */
  overLimit: () => string | undefined;
  /** Whether blocks are cut and shipped (-blocks-storage): the block metrics exist only then. */
  blocks: boolean;
}

/** The BlockCutter's counters. */
export interface BlockCutterMetrics {
  blocksCut: Counter;
  blocksShipped: Counter;
  uploadFailures: Counter;
}

export class IngesterMetrics {
  readonly samplesAppended: Counter<'tenant'>;
  readonly samplesRejected: Counter<'tenant' | 'reason'>;
  readonly exemplarsAppended: Counter<'tenant'>;
  readonly recordsConsumed: Counter;
  readonly recordsMissed: Counter;
  readonly queriesStopped: Counter<'reason'>;
  readonly samplesConsumed: Counter<'tenant'>;
  readonly receiveDelay: Histogram<'partition'>;
  readonly committedOffset: Gauge;
  readonly blockCutter: BlockCutterMetrics | undefined;

  constructor(s: IngesterMetricsSources) {
    const registers = [s.registry];
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
    this.exemplarsAppended = new Counter({ name: 'strata_ingester_exemplars_appended_total', help: 'Exemplars stored.', labelNames: ['tenant'], registers });
    this.recordsConsumed = new Counter({
      name: 'strata_ingester_kafka_records_consumed_total',
      help: 'Kafka records consumed from the owned partition.',
      registers,
    });
    this.recordsMissed = new Counter({
      name: 'strata_ingester_missed_records_total',
      help: "Kafka records of the owned partition deleted by the topic's retention before this ingester read them (lost to it; its zone twin may hold them).",
      registers,
    });
    this.queriesStopped = new Counter({
      name: 'strata_ingester_queries_stopped_total',
      help: 'Selects stopped before they finished: canceled by the caller (timeout, client gone) or over the query budget.',
      labelNames: ['reason'],
      registers,
    });
    this.samplesConsumed = new Counter({
      name: 'strata_ingester_samples_consumed_total',
      help: 'Samples in consumed Kafka records, appended or not (see strata_ingester_samples_appended_total and _rejected_total).',
      labelNames: ['tenant'],
      registers,
    });
    this.receiveDelay = new Histogram({
      name: 'strata_ingester_kafka_receive_delay_seconds',
      help: 'Time from Kafka accepting a record (its timestamp) to this ingester consuming it; high during replay.',
      labelNames: ['partition'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600],
      registers,
    });
    partitionLag(s);
    this.committedOffset = new Gauge({
      name: 'strata_ingester_kafka_committed_offset',
      help: 'Offset committed for the owned partition (everything before it is in shipped blocks).',
      registers,
    });
    headGauges(s);
    this.blockCutter = s.blocks ? blockCutterMetrics(s.registry) : undefined;
    new Gauge({
      name: 'strata_ingester_instance_limit_reached',
      help: 'Whether this ingester is over an instance limit (max series, heap): distributors refuse writes to its partition while it is 1.',
      registers,
      collect() {
        this.set(s.overLimit() === undefined ? 0 : 1);
      },
    });
  }
}

/** The partition's lag, asked from Kafka at scrape (the last answer when Kafka takes over 2s). */
function partitionLag(s: IngesterMetricsSources): void {
  const partition = String(s.partition);
  let lastLag = 0;
  new Gauge({
    name: 'strata_ingester_kafka_partition_lag_records',
    help: 'Records acknowledged in the owned partition and not consumed yet (asked from Kafka at scrape; the last answer if Kafka is slow).',
    labelNames: ['partition'],
    registers: [s.registry],
    async collect() {
      const lag = s.lag();
      if (lag !== undefined) {
        const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2000).unref());
        const got = await Promise.race([lag.catch(() => undefined), timeout]);
        if (got !== undefined) lastLag = Number(got);
      }
      this.set({ partition }, lastLag);
    },
  });
}

/** What the tenants' heads and local blocks hold, summed over them at scrape. */
function headGauges(s: IngesterMetricsSources): void {
  const registers = [s.registry];
  const dbs = s.dbs;
  const sum = (of: (db: TenantDB) => number): number => {
    let n = 0;
    for (const db of dbs.values()) n += of(db);
    return n;
  };
  new Gauge({
    name: 'strata_ingester_active_series',
    help: 'Series in the in-memory head, per tenant.',
    labelNames: ['tenant'],
    registers,
    collect() {
      this.reset();
      for (const [tenant, db] of dbs) this.set({ tenant }, db.head.numSeries);
    },
  });
  new Gauge({
    name: 'strata_ingester_memory_series',
    help: 'Series in the in-memory head, all tenants.',
    registers,
    collect() {
      this.set(sum((db) => db.head.numSeries));
    },
  });
  new Counter({
    name: 'strata_ingester_series_order_relearnings_total',
    help: "Times a head's table of series started over to follow the order records list them in (a resharded or restarted sender); it waits longer after each that did not help.",
    registers,
    collect() {
      this.reset();
      this.inc(sum((db) => db.head.orderRelearnings));
    },
  });
  new Gauge({
    name: 'strata_ingester_head_chunk_file_bytes',
    help: "Bytes of closed head chunks in files (<tsdb dir>/<tenant>/chunks_head), all tenants; a tenant whose disk refused a write keeps its chunks in memory (see the ingester's log).",
    registers,
    collect() {
      this.set(sum((db) => db.head.chunkFiles?.bytes ?? 0));
    },
  });
  new Gauge({
    name: 'strata_ingester_local_blocks',
    help: 'Blocks on local disk, all tenants (shipped and not).',
    registers,
    collect() {
      this.set(sum((db) => db.blocks.length));
    },
  });
}

function blockCutterMetrics(registry: Registry): BlockCutterMetrics {
  const registers = [registry];
  return {
    blocksCut: new Counter({ name: 'strata_ingester_blocks_cut_total', help: 'Blocks cut from the head.', registers }),
    blocksShipped: new Counter({ name: 'strata_ingester_blocks_shipped_total', help: 'Blocks uploaded to the bucket.', registers }),
    uploadFailures: new Counter({ name: 'strata_ingester_block_upload_failures_total', help: 'Block uploads that failed (retried).', registers }),
  };
}
