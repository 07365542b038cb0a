// The distributor module: remote write and OTLP in, one acked Kafka record per
// partition out, sharded over the partition ring's ACTIVE partitions.

import { IngestWriter, describeKafkaSecurity } from '@strata/kafka';
import { Distributor, instanceLimitsFromConfig, producedWritesObserver, registerPushRoutes } from '@strata/distributor';
import { PartitionRingWatcher, WritePartitions, registerRingStatusPage, ringPage } from '@strata/ring';
import { HaTracker, haTrackerKv, haTrackerPage } from '@strata/ha-tracker';
import type { Service } from '@strata/service';
import type { Strata } from '@strata/runtime';

/** How often a distributor that cannot reach Kafka tries again. */
const KAFKA_RETRY_MS = 5_000;

export function initDistributor(t: Strata): Service[] {
  const { config, logger, registry } = t;
  const ringWatcher = new PartitionRingWatcher({ kv: t.kv, logger, registry, heartbeatTimeoutMs: t.config['ingester.ring.heartbeat-timeout'] });
  const haKv = haTrackerKv(config, t.kv);
  const haTracker = newHaTracker(t, haKv);
  const writer = kafkaWriter(t);
  const writePartitions = new WritePartitions({ watcher: ringWatcher, partitionCount: () => writer.partitionCount(), logger });
  const distributor = new Distributor({
    writer,
    maxRecvMsgSize: config['distributor.max-recv-msg-size'],
    instanceLimits: instanceLimitsFromConfig(config),
    maxSeriesPerRequest: config['distributor.max-series-per-request'],
    maxRecordSizeBytes: config['ingest-storage.kafka.producer-max-record-size-bytes'],
    symbolizeRecords: config['ingest-storage.kafka.producer-record-version'] === 3,
    limits: t.overrides,
    logger,
    registry,
    partitions: writePartitions,
    haTracker,
    tracer: t.tracing.tracer,
  });
  t.distributor = distributor;
  const connection = new KafkaConnection(t, writer);
  t.readiness.push(() => connection.notReadyReason());
  registerRoutes(t, distributor, writePartitions, haTracker);
  return [
    {
      name: 'distributor-ring',
      start: async () => {
        if (haKv !== t.kv) await haKv.start();
        await ringWatcher.start();
        const s = ringWatcher.status();
        logger.info({ kv: s.kv, source: s.source, reason: s.reason }, `partition ring from ${s.kv}${haTracker ? `; HA tracker on ${haKv.description}` : ''}`);
      },
      stop: async () => {
        await ringWatcher.stop();
        if (haKv !== t.kv) await haKv.stop();
      },
    },
    { name: 'kafka-writer', start: () => connection.start(), stop: () => connection.stop() },
  ];
}

/**
 * Connects the writer to Kafka, and keeps trying while it cannot (brokers down, wrong SASL
 * credentials, an untrusted certificate): the process stays up, /ready says why, and each new
 * reason is logged once. Pushes meanwhile get 503 (retriable).
 */
class KafkaConnection {
  private reason: string | undefined = 'connecting to Kafka';
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly t: Strata;
  private readonly writer: IngestWriter;

  constructor(t: Strata, writer: IngestWriter) {
    this.t = t;
    this.writer = writer;
  }

  notReadyReason(): string | undefined {
    return this.reason;
  }

  /** Resolves once connected, or after the first failure (then retries in the background). */
  async start(): Promise<void> {
    await this.attempt();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.writer.stop();
  }

  private async attempt(): Promise<void> {
    const { config, logger, brokers, kafkaSecurity } = this.t;
    const topic = config['ingest-storage.kafka.topic'];
    try {
      await this.writer.start();
      this.reason = undefined;
      logger.info({ brokers, topic }, `producing to Kafka ${brokers.join(',')} topic "${topic}" (${describeKafkaSecurity(kafkaSecurity)})`);
    } catch (err) {
      const reason = `cannot reach Kafka (${describeKafkaSecurity(kafkaSecurity)}): ${(err as Error).message}`;
      if (reason !== this.reason) logger.error({ err }, `${reason}; retrying every ${KAFKA_RETRY_MS / 1000}s`);
      this.reason = reason;
      if (!this.stopped) this.retry = setTimeout(() => void this.attempt(), KAFKA_RETRY_MS);
    }
  }
}

/** The HA tracker (-distributor.ha-tracker.enable), electing one replica per cluster in `haKv`. */
function newHaTracker(t: Strata, haKv: ReturnType<typeof haTrackerKv>): HaTracker | undefined {
  const { config, logger } = t;
  if (!config['distributor.ha-tracker.enable']) return undefined;
  const haTracker = new HaTracker({
    kv: haKv,
    updateTimeoutMs: config['distributor.ha-tracker.update-timeout'],
    updateTimeoutJitterMaxMs: config['distributor.ha-tracker.update-timeout-jitter-max'],
    failoverTimeoutMs: config['distributor.ha-tracker.failover-timeout'],
    logger,
    registry: t.registry,
  });
  if (haKv.description === 'memory' && !t.runs('all')) {
    logger.warn('the HA tracker uses the in-process KV: each distributor elects on its own; set -ring.store=redis or -distributor.ha-tracker.redis.endpoint');
  }
  return haTracker;
}

function kafkaWriter(t: Strata): IngestWriter {
  const { config } = t;
  return new IngestWriter({
    brokers: t.brokers,
    security: t.kafkaSecurity,
    topic: config['ingest-storage.kafka.topic'],
    clientId: `${config['ingest-storage.kafka.client-id']}-distributor`,
    timeoutMs: config['ingest-storage.kafka.write-timeout'],
    attemptTimeoutMs: config['ingest-storage.kafka.write-attempt-timeout'],
    maxInFlight: config['ingest-storage.kafka.producer-max-in-flight'],
    maxBatchBytes: config['ingest-storage.kafka.producer-max-record-size-bytes'],
    compression: config['ingest-storage.kafka.producer-compression'],
    onProduceRequest: producedWritesObserver(t.registry),
    logger: t.logger,
  });
}

/** Push (remote write, OTLP), the partition ring's page, and the UI's pages. */
function registerRoutes(t: Strata, distributor: Distributor, writePartitions: WritePartitions, haTracker: HaTracker | undefined): void {
  const { config } = t;
  registerPushRoutes(t.http, {
    distributor,
    multitenancyEnabled: config['auth.multitenancy-enabled'],
    logger: t.logger,
    registry: t.registry,
    maxBodyBytes: config['distributor.max-recv-msg-size'],
    auth: t.auth,
    tracer: t.tracing.tracer,
  });
  registerRingStatusPage(t.http, {
    snapshot: () => writePartitions.snapshot(),
    heartbeatTimeoutMs: config['ingester.ring.heartbeat-timeout'],
    paths: ['/ingester/partition-ring', '/distributor/ring'],
  });
  t.statusPages.push(
    ringPage(() => writePartitions.snapshot(), config['ingester.ring.heartbeat-timeout']),
    haTrackerPage(haTracker),
  );
  t.uiLinks.push({ label: 'Partition ring (/ingester/partition-ring)', href: '/ingester/partition-ring' });
  t.endpoints.push('push $BASE/api/v1/push', 'OTLP $BASE/otlp/v1/metrics', 'partition ring $BASE/ingester/partition-ring');
}
