// Distributor process: remote-write in, one acked Kafka record per partition out.

import { IngestWriter, kafkaConfigShape } from '@strata/kafka';
import { Distributor, distributorConfigShape, instanceLimitsFromConfig, registerPushRoutes } from '@strata/distributor';
import { Overrides, limitsConfigShape, runtimeConfigShape } from '@strata/limits';
import { PartitionRingWatcher, WritePartitions, createKv, registerRingStatusPage, ringClientConfigShape } from '@strata/ring';
import { HaTracker, haTrackerConfigShape, haTrackerKv } from '@strata/ha-tracker';
import {
  authConfigShape,
  createAuthenticator,
  createHttpServer,
  createLogger,
  createMetricsRegistry,
  flagsToConfig,
  listen,
  parseFlags,
  runServices,
  serverConfigShape,
} from '@strata/service';
import { Tracing, tracingConfigShape } from '@strata/tracing';

const logger = createLogger('distributor');
const config = flagsToConfig(
  { ...serverConfigShape, ...kafkaConfigShape, ...distributorConfigShape, ...limitsConfigShape, ...runtimeConfigShape, ...authConfigShape, ...ringClientConfigShape, ...haTrackerConfigShape, ...tracingConfigShape },
  parseFlags(process.argv.slice(2)),
);
const registry = createMetricsRegistry({ component: 'distributor' });
const tracing = new Tracing({ serviceName: 'distributor', config, logger });
const limits = Overrides.fromFlags(config, { logger, registry });
const auth = createAuthenticator(config, { logger, registry });
// The partition ring (ACTIVE partitions take writes) and the HA tracker, both in the KV store (-ring.store).
const ringKv = createKv(config);
const ringWatcher = new PartitionRingWatcher({ kv: ringKv, logger, registry });
const haKv = haTrackerKv(config, ringKv);
const haTracker = config['distributor.ha-tracker.enable']
  ? new HaTracker({
      kv: haKv,
      updateTimeoutMs: config['distributor.ha-tracker.update-timeout'],
      updateTimeoutJitterMaxMs: config['distributor.ha-tracker.update-timeout-jitter-max'],
      failoverTimeoutMs: config['distributor.ha-tracker.failover-timeout'],
      logger,
      registry,
    })
  : undefined;
if (haTracker && haKv.description === 'memory') {
  logger.warn('the HA tracker uses the in-process KV: each distributor elects on its own; set -ring.store=redis or -distributor.ha-tracker.redis.endpoint');
}

const writer = new IngestWriter({
  brokers: config['ingest-storage.kafka.address'].split(','),
  topic: config['ingest-storage.kafka.topic'],
  clientId: `${config['ingest-storage.kafka.client-id']}-distributor`,
  timeoutMs: config['ingest-storage.kafka.write-timeout'],
  logger,
});
const writePartitions = new WritePartitions({ watcher: ringWatcher, partitionCount: () => writer.partitionCount(), logger });
const distributor = new Distributor({
  writer,
  maxRecvMsgSize: config['distributor.max-recv-msg-size'],
  instanceLimits: instanceLimitsFromConfig(config),
  maxSeriesPerRequest: config['distributor.max-series-per-request'],
  maxRecordSizeBytes: config['ingest-storage.kafka.producer-max-record-size-bytes'],
  limits,
  logger,
  registry,
  partitions: writePartitions,
  haTracker,
  tracer: tracing.tracer,
});
let writerReady = false;
const http = createHttpServer({
  logger,
  registry,
  readiness: { notReadyReason: () => (writerReady ? undefined : 'connecting to Kafka') },
  bodyLimitBytes: config['distributor.max-recv-msg-size'],
});
registerPushRoutes(http, {
  distributor,
  multitenancyEnabled: config['auth.multitenancy-enabled'],
  logger,
  registry,
  maxBodyBytes: config['distributor.max-recv-msg-size'],
  auth,
  tracer: tracing.tracer,
});
registerRingStatusPage(http, {
  snapshot: () => writePartitions.snapshot(),
  heartbeatTimeoutMs: config['ingester.ring.heartbeat-timeout'],
  paths: ['/ingester/partition-ring', '/distributor/ring'],
});

await runServices(
  [
    { name: 'tracing', start: () => tracing.start(), stop: () => tracing.stop() },
    { name: 'runtime-config', start: () => limits.start(), stop: () => limits.stop() },
    { name: 'auth-tokens', start: async () => auth?.start(), stop: async () => auth?.stop() },
    {
      name: 'ring',
      start: async () => {
        await ringKv.start();
        if (haKv !== ringKv) await haKv.start();
        await ringWatcher.start();
        const s = ringWatcher.status();
        logger.info({ kv: s.kv, source: s.source, reason: s.reason }, `partition ring from ${s.kv}${haTracker ? `; HA tracker on ${haKv.description}` : ''}`);
      },
      stop: async () => {
        await ringWatcher.stop();
        if (haKv !== ringKv) await haKv.stop();
        await ringKv.stop();
      },
    },
    {
      name: 'kafka-writer',
      start: async () => {
        await writer.start();
        writerReady = true;
        logger.info({ brokers: config['ingest-storage.kafka.address'], topic: config['ingest-storage.kafka.topic'] }, 'producing to Kafka');
      },
      stop: () => writer.stop(),
    },
    {
      name: 'http',
      start: async () => {
        const host = config['server.http-listen-address'];
        const port = await listen(http, host, config['server.http-listen-port']);
        logger.info({ port }, `distributor listening on http://${host}:${port} (POST /api/v1/push, /otlp/v1/metrics, /ingester/partition-ring, /ready, /metrics)`);
      },
      stop: () => http.close(),
    },
  ],
  logger,
);
