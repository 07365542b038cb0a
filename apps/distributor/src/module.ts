// The distributor module: remote write and OTLP in, one acked Kafka record per
// partition out, sharded over the partition ring's ACTIVE partitions.

import { IngestWriter } from '@strata/kafka';
import { Distributor, instanceLimitsFromConfig, producedWritesObserver, registerPushRoutes } from '@strata/distributor';
import { PartitionRingWatcher, WritePartitions, registerRingStatusPage, ringPage } from '@strata/ring';
import { HaTracker, haTrackerKv, haTrackerPage } from '@strata/ha-tracker';
import type { Service } from '@strata/service';
import type { Strata } from '@strata/runtime';

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
  let writerReady = false;
  t.readiness.push(() => (writerReady ? undefined : 'connecting to Kafka'));
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
    {
      name: 'kafka-writer',
      start: async () => {
        await writer.start();
        writerReady = true;
        logger.info(
          { brokers: t.brokers, topic: config['ingest-storage.kafka.topic'] },
          `producing to Kafka ${t.brokers.join(',')} topic "${config['ingest-storage.kafka.topic']}"`,
        );
      },
      stop: () => writer.stop(),
    },
  ];
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
    topic: config['ingest-storage.kafka.topic'],
    clientId: `${config['ingest-storage.kafka.client-id']}-distributor`,
    timeoutMs: config['ingest-storage.kafka.write-timeout'],
    attemptTimeoutMs: config['ingest-storage.kafka.write-attempt-timeout'],
    maxInFlight: config['ingest-storage.kafka.producer-max-in-flight'],
    maxBatchBytes: config['ingest-storage.kafka.producer-max-record-size-bytes'],
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
