// The write path: decode, validate, shard by series and produce one record per
// partition touched. It answers success only after Kafka acknowledged every
// record (acks=all); invalid series are reported but never block valid ones.

import { Counter, Histogram, type Registry } from 'prom-client';
import type { Label } from '@strata/model';
import {
  countSeries,
  decompressBody,
  BodyBuffers,
  encodeMetricMetadata,
  encodeRecordValue,
  encodeWriteRequest,
  formatSeries,
  parseContentType,
  parseWriteRequest,
  parseWriteRequestV2,
  replaceSeriesLabels,
  seriesV2ToV1,
  validateParsedSeries,
  sortLabelsInPlace,
  ParsedSeries,
  withoutExemplars,
  withoutStartTimestamps,
  checkSeriesHistograms,
  Symbolizer,
  type MetricMetadata,
  type ParsedSeriesV2,
  type ParsedWriteRequestV2,
  type RemoteWriteVersion,
} from '@strata/remote-write';
import {
  countExportRequestSeries,
  countRequestSeries,
  decodeContentEncoding,
  decodeExportRequestBody,
  otlpFormat,
  translateMetrics,
  type TranslateOptions,
} from '@strata/otlp';
import { DEFAULT_MAX_RECORD_SIZE_BYTES, KafkaUnavailableError, type PartitionRecord } from '@strata/kafka';
import { LocalRateLimiter, Overrides, DEFAULT_LIMITS, type TenantLimits } from '@strata/limits';
import { REQUEST_LATENCY_BUCKETS, exemplarsEnabled as registryTakesExemplars, type Logger } from '@strata/service';
import { errors } from './errors.ts';
import { framedSize, packRecords } from './records.ts';
import { seriesTokenFrom } from './sharding.ts';
import { PushBatch, labelsToStore, ownLabels, type Failure, type PartitionSeries, type RouteOutcome, type Routable, type TimeBounds } from './push-batch.ts';
import { KnownSeries } from './known-series.ts';
import { HaDedupe } from './ha-dedupe.ts';
import { WritePartitions, type PartitionLookup } from '@strata/ring';
import type { HaReplicaChecker } from '@strata/ha-tracker';
import { checkMetadata, checkSampleTimes } from './validate-limits.ts';
import { InflightLimiter, type InstanceLimits } from './instance-limits.ts';
import { defaultTracer, exemplarLabels, inSpan, traceContextHeaders, type Tracer } from '@strata/tracing';

/** What the distributor needs from Kafka: acked writes and the partition count. */
export interface RecordWriter {
  write(tenant: string, records: PartitionRecord[]): Promise<void>;
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
  /** Remote write 2.0 only: what Kafka acknowledged, for the X-Prometheus-Remote-Write-*-Written headers. */
  written?: WrittenCounts;
}

/** Counts of one request's data that was written (acknowledged by Kafka). */
export interface WrittenCounts {
  samples: number;
  histograms: number;
  exemplars: number;
}

export interface DistributorOptions {
  writer: RecordWriter;
  maxRecvMsgSize: number;
  logger: Logger;
  registry: Registry;
  /** Per-tenant limits, read on every push. Default: the flag defaults, no overrides. */
  limits?: Overrides;
  /** Largest Kafka record value: a partition's series are split over several records above it. */
  maxRecordSizeBytes?: number;
  /**
   * Write float series as record format 3 (a symbols table, see symbolizeSeries); records with
   * exemplars, native histograms or metadata stay format 2. Default true (-ingest-storage.kafka.producer-record-version).
   */
  symbolizeRecords?: boolean;
  /** Wall clock for the grace periods and the rate limiter; tests pass their own. */
  now?: () => number;
  /** Which partitions a series may go to (the partition ring). Default: every Kafka partition, on the same token ring. */
  partitions?: { lookup(): Promise<PartitionLookup> };
  /** HA dedup for tenants with accept_ha_samples; absent: -distributor.ha-tracker.enable=false. */
  haTracker?: HaReplicaChecker;
  /** Per-distributor limits on push requests in flight; absent: none. */
  instanceLimits?: InstanceLimits;
  /** -distributor.max-series-per-request: more series in one push is 413, checked before decoding; 0 or absent: none. */
  maxSeriesPerRequest?: number;
  /** Spans for produce; each record carries the caller's trace context (`traceparent`). Default: the global (no-op) tracer. */
  tracer?: Tracer;
}

/** Metadata to validate and route: a 1.0 request's carries its own bytes. */
type MetadataItem = MetricMetadata & { raw?: Uint8Array };

/** A request checked and packed into Kafka records, nothing of it written yet. */
interface Prepared {
  records: PartitionRecord[];
  partitions: number;
  outcome: RouteOutcome;
}

interface RouteSteps<S> {
  /** A protocol-specific rejection, checked before label validation. */
  reject?: (s: S) => Failure | undefined;
  /** The 1.0 TimeSeries body to route, with `labels` (empty values dropped), or the labels as sent when undefined. */
  body: (s: S, labels: Label[] | undefined) => Uint8Array;
  accepted?: (s: S) => void;
  /** The request's metadata, asked for after every series was seen. */
  metadata: () => MetadataItem[];
}

export class Distributor {
  private readonly received: Counter<'tenant'>;
  private readonly discarded: Counter<'tenant' | 'reason'>;
  private readonly discardedExemplars: Counter<'tenant' | 'reason'>;
  private readonly discardedMetadata: Counter<'tenant' | 'reason'>;
  private readonly relabelDropped: Counter<'tenant'>;
  private readonly produceLatency: Histogram;
  private readonly limits: Overrides;
  private readonly rateLimiter: LocalRateLimiter;
  private readonly now: () => number;
  private readonly maxRecordSize: number;
  private readonly symbolizeRecords: boolean;
  private readonly writePartitions: { lookup(): Promise<PartitionLookup> };
  private readonly ha: HaDedupe | undefined;
  private readonly inflight: InflightLimiter;
  private readonly tracer: Tracer;
  private readonly bodyBuffers = new BodyBuffers();
  /** Label pairs met, shared by the label check and the records' symbols tables. */
  private readonly symbolizer = new Symbolizer();
  private readonly known = new KnownSeries(this.symbolizer.pairs);

  private readonly opts: DistributorOptions;

  constructor(opts: DistributorOptions) {
    this.opts = opts;
    this.inflight = new InflightLimiter(opts.instanceLimits ?? { maxInflightPushRequests: 0, maxInflightPushRequestsBytes: 0 }, opts.registry);
    this.writePartitions = opts.partitions ?? new WritePartitions({ partitionCount: () => opts.writer.partitionCount() });
    this.ha = opts.haTracker ? new HaDedupe(opts.haTracker, opts.registry) : undefined;
    this.limits = opts.limits ?? new Overrides({ defaults: DEFAULT_LIMITS });
    this.now = opts.now ?? Date.now;
    this.tracer = opts.tracer ?? defaultTracer();
    this.rateLimiter = new LocalRateLimiter(this.now);
    this.maxRecordSize = opts.maxRecordSizeBytes ?? DEFAULT_MAX_RECORD_SIZE_BYTES;
    this.symbolizeRecords = opts.symbolizeRecords ?? true;
    const registers = [opts.registry];
    this.received = new Counter({
      name: 'strata_distributor_received_samples_total',
      help: 'Samples (floats and native histograms) acknowledged by Kafka and answered with success.',
      labelNames: ['tenant'],
      registers,
    });
    this.discarded = new Counter({
      name: 'strata_distributor_discarded_samples_total',
      help: 'Samples rejected by validation or limits, by reason.',
      labelNames: ['tenant', 'reason'],
      registers,
    });
    this.discardedExemplars = new Counter({
      name: 'strata_distributor_discarded_exemplars_total',
      help: 'Exemplars dropped by the distributor, by reason.',
      labelNames: ['tenant', 'reason'],
      registers,
    });
    this.discardedMetadata = new Counter({
      name: 'strata_distributor_discarded_metadata_total',
      help: 'Metric metadata rejected by the distributor, by reason.',
      labelNames: ['tenant', 'reason'],
      registers,
    });
    this.relabelDropped = new Counter({
      name: 'strata_distributor_relabel_dropped_series_total',
      help: "Series dropped by the tenant's metric_relabel_configs before they were written (not an error: the sender is answered 2xx).",
      labelNames: ['tenant'],
      registers,
    });
    const known = this.known;
    new Counter({
      name: 'strata_distributor_known_series_relearnings_total',
      help: 'Times the table of known series started over to follow the order senders send their series in (a resharded or restarted sender); it waits longer after each that did not help.',
      registers,
      collect() {
        this.reset();
        this.inc(known.order.relearnings);
      },
    });
    this.produceLatency = new Histogram({
      name: 'strata_distributor_kafka_produce_duration_seconds',
      help: 'Time from produce to acknowledgement of all records of a push (acks=all).',
      buckets: [...REQUEST_LATENCY_BUCKETS],
      enableExemplars: registryTakesExemplars(opts.registry),
      registers,
    });
  }

  /** Throws an `unavailable` StrataError if a push of `bodyBytes` is over an instance limit right now (nothing is reserved). */
  checkInstanceLimits(bodyBytes: number): void {
    this.inflight.check(bodyBytes);
  }

  /**
   * Remote write 1.0 or 2.0, by Content-Type. Throws a StrataError (of its
   * kind) for whole-request failures; per-series rejections come back as a 400 result.
   */
  async push(req: PushRequest): Promise<PushResult> {
    const version = parseContentType(req.contentType, req.contentEncoding);
    return await this.inflight.run(req.body.length, () => this.pushRemoteWrite(req, version));
  }

  private async pushRemoteWrite(req: PushRequest, version: RemoteWriteVersion): Promise<PushResult> {
    const body = decompressBody(req.body, this.opts.maxRecvMsgSize, this.bodyBuffers);
    let prepared: Prepared;
    // Everything read from the body is copied into records or strings before it is given back.
    try {
      this.checkSeriesCount(countSeries(body, version), 'series');
      if (version === 'v2') return await this.pushV2(req.tenant, parseWriteRequestV2(body));
      prepared = await this.prepareV1(req.tenant, body);
    } finally {
      this.bodyBuffers.give(body);
    }
    const o = await this.send(req.tenant, prepared);
    return { status: o.rejection === undefined ? 200 : 400, message: o.rejection, samples: o.samples, series: o.series };
  }

  /**
   * A 1.0 request parsed, checked and packed into records. Without an HA check nothing
   * awaits between the parse and the records, so its object per series dies young
   * instead of living through the Kafka round trip into the old generation.
   */
  private async prepareV1(tenant: string, body: Uint8Array): Promise<Prepared> {
    const partitions = this.ha === undefined ? await this.partitions() : undefined;
    const { series, metadata } = parseWriteRequest(body);
    // 1.0 has no start timestamps; a sender that puts them where Strata's records do gets them kept only as the tenant's setting says.
    const seriesBody = this.limits.forTenant(tenant).createdTimestampZeroIngestionEnabled ? v1Body : v1BodyWithoutStarts;
    return this.checkAndPrepare(tenant, series, { body: seriesBody, metadata: () => metadata }, partitions);
  }

  /**
   * OTLP metrics over HTTP (an ExportMetricsServiceRequest, protobuf or JSON,
   * gzip, zstd or neither), converted to 1.0 series per the tenant's `otel_*` limits and
   * routed like remote write. Exponential histograms become native histograms. Metrics that
   * cannot be converted (delta temporality without otel_native_delta_ingestion) are dropped
   * and answered with 400 after the rest was written, as Mimir does.
   */
  async pushOtlp(req: PushRequest): Promise<PushResult> {
    const format = otlpFormat(req.contentType);
    return await this.inflight.run(req.body.length, () => this.pushOtlpBody(req, format));
  }

  private async pushOtlpBody(req: PushRequest, format: ReturnType<typeof otlpFormat>): Promise<PushResult> {
    const body = decodeContentEncoding(req.body, req.contentEncoding, this.opts.maxRecvMsgSize);
    // Protobuf is counted before it is decoded; JSON (already a tree once parsed) before it is translated.
    if (format === 'protobuf') this.checkSeriesCount(countExportRequestSeries(body), 'series-producing OTLP data points, buckets and quantiles');
    const decoded = decodeExportRequestBody(body, format);
    if (format === 'json') this.checkSeriesCount(countRequestSeries(decoded), 'series-producing OTLP data points, buckets and quantiles');
    const t = translateMetrics(decoded, otlpOptions(this.limits.forTenant(req.tenant)));
    if (t.droppedPoints > 0) this.discarded.inc({ tenant: req.tenant, reason: 'err-strata-otlp-unsupported-metric' }, t.droppedPoints);
    const parsed = parseWriteRequest(encodeWriteRequest({ timeseries: t.timeseries, metadata: t.metadata }));
    const o = await this.route(req.tenant, parsed.series, {
      body: v1Body,
      metadata: () => parsed.metadata,
    });
    const reasons: string[] = [];
    if (t.errors.length > 0) {
      const more = t.errors.length > 1 ? ` (and ${t.errors.length - 1} more metrics)` : '';
      reasons.push(`${t.droppedPoints} OTLP data points were not ingested: ${t.errors[0]}${more}`);
    }
    if (o.rejection !== undefined) reasons.push(o.rejection);
    const message = reasons.length > 0 ? reasons.join('; ') : undefined;
    return { status: message === undefined ? 200 : 400, message, samples: o.samples, series: o.series };
  }

  private checkSeriesCount(n: number, what: string): void {
    const max = this.opts.maxSeriesPerRequest ?? 0;
    if (max > 0 && n > max) throw errors.tooManySeries(n, max, what);
  }

  private async pushV2(tenant: string, req: ParsedWriteRequestV2): Promise<PushResult> {
    const metadata = new Map<string, MetricMetadata>();
    // Start timestamps travel in the records only for a tenant that ingests them (the ingester makes the zero samples).
    const startTimestamps = this.limits.forTenant(tenant).createdTimestampZeroIngestionEnabled;
    const o = await this.route<ParsedSeriesV2>(tenant, req.series, {
      body: (s, labels) => seriesV2ToV1(req, s, labels, startTimestamps),
      accepted: (s) => {
        if (s.metadata !== undefined && !metadata.has(s.metadata.metricFamilyName)) metadata.set(s.metadata.metricFamilyName, s.metadata);
      },
      metadata: () => [...metadata.values()],
    });
    return {
      status: o.rejection === undefined ? 204 : 400,
      message: o.rejection,
      samples: o.samples,
      series: o.series,
      written: { samples: o.samples, histograms: o.histograms, exemplars: o.exemplars },
    };
  }

  private async route<S extends Routable & TimeBounds>(tenant: string, all: readonly S[], steps: RouteSteps<S>): Promise<RouteOutcome> {
    return await this.send(tenant, await this.checkAndPrepare(tenant, all, steps));
  }

  /**
   * HA dedup first (Mimir's order: a non-elected replica's request stops here with 202), then
   * prepare with `partitions` (looked up now when not given). With neither an HA check nor a
   * lookup to wait for, nothing is awaited before the records exist.
   */
  private async checkAndPrepare<S extends Routable & TimeBounds>(
    tenant: string,
    all: readonly S[],
    steps: RouteSteps<S>,
    partitions?: PartitionLookup,
  ): Promise<Prepared> {
    const haReplicaLabel = this.ha === undefined ? undefined : await this.ha.check(tenant, this.limits.forTenant(tenant), all);
    return this.prepare(tenant, all, steps, partitions ?? (await this.partitions()), haReplicaLabel);
  }

  /**
   * Validates against the tenant's limits (read now), shards, rate-limits and packs
   * the records to produce. A series or metadata entry that fails is left out and
   * named in `rejection`; a rate limit hit rejects the whole request.
   */
  private prepare<S extends Routable & TimeBounds>(
    tenant: string,
    all: readonly S[],
    steps: RouteSteps<S>,
    partitions: PartitionLookup,
    haReplicaLabel: string | undefined,
  ): Prepared {
    const limits = this.limits.forTenant(tenant);
    const b = new PushBatch(tenant, limits, this.now(), partitions, haReplicaLabel);
    // Nothing below awaits: the pair ids looked up from here on stay valid until the records exist.
    this.known.begin();
    for (const s of all) this.addSeries(b, s, steps);
    const allMetadata = steps.metadata();
    const metadata = this.checkedMetadata(b, allMetadata);
    this.checkPartitionsTakeWrites(b);
    this.checkRate(tenant, limits, b.out.samples + b.out.histograms, b.out.exemplars, metadata.length);
    if (metadata.length > 0) b.makeRoomForMetadata();
    const records = this.records(b.byPartition, metadata);
    const rejection = b.rejection(all.length, allMetadata.length);
    if (rejection !== undefined) b.out.rejection = rejection;
    return { records, partitions: b.byPartition.size, outcome: b.out };
  }

  /**
   * One series through the push path's steps, in Mimir's order: relabel, sort labels, validate,
   * drop empty and HA replica labels, drop exemplars when disabled, check native histograms and
   * the record size; then to its partition. A series that fails a step is counted and left out.
   */
  private addSeries<S extends Routable & TimeBounds>(b: PushBatch, s: S, steps: RouteSteps<S>): void {
    // Well-formed ASCII 1.0 series are validated and hashed by their label pairs; the rest decode their labels.
    const knownToken = s instanceof ParsedSeries && !b.relabelling ? this.known.token(s, b.seed, b.labelLimits) : -1;
    const fast = knownToken >= 0;
    const run = this.known.run;
    // Known series were sent sorted and are never decoded. The rest: relabelled by the tenant's rules, sorted as Prometheus sorts them.
    const own = fast ? undefined : ownLabels(b, s);
    if (own === null) {
      this.relabelDropped.inc({ tenant: b.tenant });
      return;
    }
    const resorted = own !== undefined && (sortLabelsInPlace(own) || own !== s.labels);
    const failure =
      steps.reject?.(s) ??
      (own === undefined ? undefined : validateParsedSeries({ labels: own, invalidUtf8: s.invalidUtf8 }, b.labelLimits)) ??
      checkSampleTimes(s, b.now, b.limits);
    if (failure !== undefined) return this.rejectSeries(b, s, failure);
    // undefined: the labels as sent (not decoded when `fast`).
    const labels = labelsToStore(s, own, resorted, b.haReplicaLabel);
    let body = steps.body(s, labels);
    if (!b.exemplarsEnabled && s.exemplars > 0) body = withoutExemplars(body);
    let histograms = s.histograms;
    if (s.histograms > 0) {
      const h = checkSeriesHistograms(body, b.histogramLimits);
      if (h.error !== undefined) return this.rejectSeries(b, s, histogramFailure(s, h.error));
      body = h.body;
      histograms -= h.dropped;
      if (h.dropped > 0) this.discarded.inc({ tenant: b.tenant, reason: 'err-strata-native-histograms-disabled' }, h.dropped);
      // A series left with nothing to store is not written (nor rejected).
      if (s.samples === 0 && histograms === 0) return;
    }
    if (framedSize(body.length) > this.maxRecordSize) return this.rejectSeries(b, s, seriesTooLarge(s, body.length, this.maxRecordSize));
    const asSent = fast && labels === undefined;
    b.add(b.partitions.partitionFor(asSent ? knownToken : seriesTokenFrom(b.seed, labels ?? s.labels)), body, asSent ? run : -1);
    steps.accepted?.(s);
    this.countAccepted(b, s, histograms);
  }

  private rejectSeries(b: PushBatch, s: Routable, f: Failure): void {
    b.rejectSeries(s, f);
    this.discarded.inc({ tenant: b.tenant, reason: f.code }, s.samples + s.histograms);
  }

  private countAccepted(b: PushBatch, s: Routable, histograms: number): void {
    const out = b.out;
    out.series++;
    out.samples += s.samples;
    out.histograms += histograms;
    if (b.exemplarsEnabled) out.exemplars += s.exemplars;
    else if (s.exemplars > 0) this.discardedExemplars.inc({ tenant: b.tenant, reason: 'err-strata-exemplars-disabled' }, s.exemplars);
  }

  /** The request's metadata that passes the tenant's limits, encoded for the record (a 1.0 request's as sent). */
  private checkedMetadata(b: PushBatch, all: readonly MetadataItem[]): Uint8Array[] {
    const metadata: Uint8Array[] = [];
    for (const m of all) {
      const checked = checkMetadata(m, b.limits);
      if ('code' in checked) {
        b.rejectMetadata(checked);
        this.discardedMetadata.inc({ tenant: b.tenant, reason: checked.code });
        continue;
      }
      metadata.push(checked.metadata === m && m.raw !== undefined ? m.raw : encodeMetricMetadata(checked.metadata));
    }
    return metadata;
  }

  /** A partition whose ingesters are over a limit refuses the whole request (nothing written). */
  private checkPartitionsTakeWrites(b: PushBatch): void {
    for (const p of b.byPartition.keys()) {
      const refusal = b.partitions.refusal(p);
      if (refusal !== undefined) throw errors.ingesterOverLimit(p, refusal);
    }
  }

  /** Mimir counts samples, exemplars and metadata against the ingestion rate; a refusal writes nothing. */
  private checkRate(tenant: string, limits: Readonly<TenantLimits>, samples: number, exemplars: number, metadata: number): void {
    const items = samples + exemplars + metadata;
    const decision = this.rateLimiter.allow(tenant, items, limits.ingestionRate, limits.ingestionBurstSize);
    if (decision === 'allowed') return;
    const reason = 'err-strata-ingestion-rate-limited';
    if (samples > 0) this.discarded.inc({ tenant, reason }, samples);
    if (exemplars > 0) this.discardedExemplars.inc({ tenant, reason }, exemplars);
    if (metadata > 0) this.discardedMetadata.inc({ tenant, reason }, metadata);
    throw decision === 'larger-than-burst'
      ? errors.burstExceeded(tenant, items, limits.ingestionBurstSize)
      : errors.rateLimited(tenant, items, limits.ingestionRate, limits.ingestionBurstSize);
  }

  /** Each partition's series (and partition 0's metadata) as record values of at most the max record size. */
  private records(byPartition: Map<number, PartitionSeries>, metadata: Uint8Array[]): PartitionRecord[] {
    // The caller's span (the push), not the produce span, is what ingesters continue from.
    const headers = traceContextHeaders();
    const records: PartitionRecord[] = [];
    for (const [partition, series] of byPartition) {
      for (const r of packRecords(series.bodies, partition === 0 ? metadata : [], this.maxRecordSize, series.runs)) {
        const symbolized =
          this.symbolizeRecords && r.metadata.length === 0 ? this.symbolizer.symbolize(r.series, { runs: r.runs, ids: this.known.ids }) : undefined;
        // A symbols table may take a few bytes more than the labels it replaces when no string repeats.
        if (symbolized !== undefined && symbolized.length <= this.maxRecordSize) records.push({ partition, value: symbolized, format: 'symbolized', headers });
        else records.push({ partition, value: encodeRecordValue(r.series, r.metadata), headers });
      }
    }
    return records;
  }

  /** Produces the records; returns what was written once Kafka acknowledged it all. */
  private async send(tenant: string, p: Prepared): Promise<RouteOutcome> {
    if (p.records.length > 0) {
      await inSpan(
        this.tracer,
        'distributor.produce',
        { attributes: { tenant, 'kafka.records': p.records.length, 'kafka.partitions': p.partitions } },
        undefined,
        async () => {
          const end = this.produceLatency.startTimer({}, {});
          try {
            await this.opts.writer.write(tenant, p.records);
          } catch (err) {
            // The sender reads this: say that nothing was acknowledged and that retrying loses nothing.
            throw err instanceof KafkaUnavailableError ? errors.kafkaUnavailable(err) : err;
          }
          end({}, exemplarLabels());
        },
      );
    }
    this.received.inc({ tenant }, p.outcome.samples + p.outcome.histograms);
    return p.outcome;
  }

  private partitions(): Promise<PartitionLookup> {
    return this.writePartitions.lookup();
  }
}

function seriesTooLarge(s: Routable, bytes: number, max: number): Failure {
  return {
    code: 'err-strata-series-too-large',
    message:
      `received series ${formatSeries(s.labels)} of ${bytes} bytes (${s.samples} samples), larger than the largest Kafka record ` +
      `(${max} bytes, -ingest-storage.kafka.producer-max-record-size-bytes) (err-strata-series-too-large); send its samples over several requests`,
  };
}

/** A 1.0 series routes its own bytes, rewritten only if labels were dropped (empty values, the HA replica label). */
function v1Body(s: ParsedSeries, labels: Label[] | undefined): Uint8Array {
  return labels === undefined ? s.raw : replaceSeriesLabels(s.raw, labels);
}

function v1BodyWithoutStarts(s: ParsedSeries, labels: Label[] | undefined): Uint8Array {
  return s.startTimestamps ? withoutStartTimestamps(v1Body(s, labels)) : v1Body(s, labels);
}

/** A series with an invalid native histogram (or one over the bucket limit at the lowest schema) is rejected whole. */
function histogramFailure(s: Routable, e: { code: 'invalid' | 'too-many-buckets'; reason: string }): Failure {
  if (e.code === 'invalid') {
    return {
      code: 'err-strata-invalid-native-histogram',
      message: `received an invalid native histogram in series ${formatSeries(s.labels)}: ${e.reason} (err-strata-invalid-native-histogram)`,
    };
  }
  return {
    code: 'err-strata-max-native-histogram-buckets',
    message:
      `received a native histogram in series ${formatSeries(s.labels)} that does not fit the bucket limit: ${e.reason} ` +
      `(err-strata-max-native-histogram-buckets); raise max_native_histogram_buckets or lower the sender's resolution`,
  };
}

/**
 * `strata_distributor_kafka_writes_per_produce_request`: how many pushes' records each produce
 * request carried (more than 1 once pushes wait behind -ingest-storage.kafka.producer-max-in-flight).
 */
export function producedWritesObserver(registry: Registry): (writes: number) => void {
  const h = new Histogram({
    name: 'strata_distributor_kafka_writes_per_produce_request',
    help: 'Pushes whose records went to Kafka in one produce request (first attempts; retries go alone).',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128],
    registers: [registry],
  });
  return (writes) => h.observe(writes);
}

/** The tenant's OTLP translation settings, read per request so a reloaded runtime config applies to the next push. */
function otlpOptions(l: Readonly<TenantLimits>): TranslateOptions {
  return {
    strategy: l.otelTranslationStrategy,
    allowDelta: l.otelNativeDeltaIngestion,
    promoteResourceAttributes: l.promoteOtelResourceAttributes,
    promoteAllResourceAttributes: l.promoteAllResourceAttributes,
    ignoreResourceAttributes: l.ignoreResourceAttributes,
    keepIdentifyingResourceAttributes: l.otelKeepIdentifyingResourceAttributes,
    promoteScopeMetadata: l.otelPromoteScopeMetadata,
    convertHistogramsToNhcb: l.otelConvertHistogramsToNhcb,
    startTimestamps: l.createdTimestampZeroIngestionEnabled || l.otelCreatedTimestampZeroIngestionEnabled,
  };
}
