// The write path: decode, validate, shard by series and produce one record per
// partition touched. It answers success only after Kafka acknowledged every
// record (acks=all); invalid series are reported but never block valid ones.

import { Counter, Histogram, type Registry } from 'prom-client';
import {
  decompressBody,
  encodeRecordValue,
  parseContentType,
  parseWriteRequest,
  replaceSeriesLabels,
  validateParsedSeries,
  withoutEmptyLabelValues,
  RemoteWriteError,
} from '@strata/remote-write';
import { KafkaUnavailableError } from '@strata/kafka';
import type { Logger } from '@strata/service';
import { DistributorError, errors } from './errors.ts';
import { partitionFor } from './sharding.ts';

/** What the distributor needs from Kafka: acked writes and the partition count. */
export interface RecordWriter {
  write(tenant: string, records: { partition: number; value: Buffer }[]): Promise<void>;
  partitionCount(): Promise<number>;
}

export interface PushRequest {
  tenant: string;
  body: Buffer;
  contentType?: string;
  contentEncoding?: string;
}

export interface PushResult {
  status: number;
  /** One-line reason when some series were rejected. */
  message?: string;
  samples: number;
  series: number;
}

export interface DistributorOptions {
  writer: RecordWriter;
  maxRecvMsgSize: number;
  logger: Logger;
  registry: Registry;
}

export class Distributor {
  private readonly received: Counter<'tenant'>;
  private readonly discarded: Counter<'tenant' | 'reason'>;
  private readonly produceLatency: Histogram;

  constructor(private readonly opts: DistributorOptions) {
    const registers = [opts.registry];
    this.received = new Counter({
      name: 'strata_distributor_received_samples_total',
      help: 'Samples acknowledged by Kafka and answered with success.',
      labelNames: ['tenant'],
      registers,
    });
    this.discarded = new Counter({
      name: 'strata_distributor_discarded_samples_total',
      help: 'Samples rejected by validation, by reason.',
      labelNames: ['tenant', 'reason'],
      registers,
    });
    this.produceLatency = new Histogram({
      name: 'strata_distributor_kafka_produce_duration_seconds',
      help: 'Time from produce to acknowledgement of all records of a push (acks=all).',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
  }

  /** Throws DistributorError for whole-request failures; per-series rejections come back as a 400 result. */
  async push(req: PushRequest): Promise<PushResult> {
    try {
      if (parseContentType(req.contentType, req.contentEncoding) === 'v2') {
        throw new DistributorError(
          'err-strata-unsupported-remote-write-version',
          415,
          'remote write 2.0 (io.prometheus.write.v2.Request) is not supported yet; send remote write 1.0 (prometheus.WriteRequest)',
        );
      }
      const parsed = parseWriteRequest(decompressBody(req.body, this.opts.maxRecvMsgSize));
      const partitions = await this.partitions();
      const byPartition = new Map<number, Uint8Array[]>();
      let firstInvalid: string | undefined;
      let samples = 0;
      let series = 0;
      for (const s of parsed.series) {
        const failure = validateParsedSeries(s);
        if (failure) {
          firstInvalid ??= failure.message;
          this.discarded.inc({ tenant: req.tenant, reason: failure.code }, s.samples);
          continue;
        }
        // Prometheus treats an empty label value as no label: drop it before the series is stored.
        const labels = withoutEmptyLabelValues(s.labels);
        const raw = labels === s.labels ? s.raw : replaceSeriesLabels(s.raw, labels);
        const p = partitionFor(req.tenant, labels, partitions);
        let list = byPartition.get(p);
        if (!list) byPartition.set(p, (list = []));
        list.push(raw);
        samples += s.samples;
        series++;
      }
      // Metadata has no series to shard by; it travels with partition 0's record.
      const metadata = parsed.metadata.map((m) => m.raw);
      if (metadata.length > 0 && !byPartition.has(0)) byPartition.set(0, []);
      await this.produce(req.tenant, byPartition, metadata);
      this.received.inc({ tenant: req.tenant }, samples);
      if (firstInvalid !== undefined) return { status: 400, message: firstInvalid, samples, series };
      return { status: 200, samples, series };
    } catch (err) {
      throw toDistributorError(err);
    }
  }

  private async produce(tenant: string, byPartition: Map<number, Uint8Array[]>, metadata: Uint8Array[]): Promise<void> {
    if (byPartition.size === 0) return;
    const records = [...byPartition].map(([partition, series]) => ({
      partition,
      value: encodeRecordValue(series, partition === 0 ? metadata : undefined),
    }));
    const end = this.produceLatency.startTimer();
    await this.opts.writer.write(tenant, records);
    end();
  }

  private partitions(): Promise<number> {
    return this.opts.writer.partitionCount();
  }
}

function toDistributorError(err: unknown): DistributorError {
  if (err instanceof DistributorError) return err;
  if (err instanceof RemoteWriteError) return new DistributorError(err.code, err.status, err.message);
  if (err instanceof KafkaUnavailableError) return errors.kafkaUnavailable(err.message);
  return new DistributorError('err-strata-internal', 500, `internal error: ${(err as Error).message}`);
}
