// Ingester process: ingester-zone-<zone>-<n> consumes partition n into memory,
// cuts blocks and ships them to the bucket, and serves queries over gRPC once
// caught up (resuming from the committed offset after a restart).

import { LastProducedOffsetsReader, PartitionReader, kafkaBrokers, kafkaConfigShape } from '@strata/kafka';
import { Ingester, PartitionCount, ingesterConfigShape, parseInstanceId, registerIngesterRoutes } from '@strata/ingester';
import { Overrides, ingesterLimits, limitsConfigShape, runtimeConfigShape } from '@strata/limits';
import { bucketConfigShape, createBucket } from '@strata/objstore';
import { IngesterServer } from '@strata/ingester-rpc';
import { PartitionInstanceLifecycler, createKv, ingesterRingConfigShape, instanceHost, registerIngesterRingRoutes } from '@strata/ring';
import {
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

const config = flagsToConfig(
  { ...serverConfigShape, ...kafkaConfigShape, ...ingesterConfigShape, ...bucketConfigShape, ...limitsConfigShape, ...runtimeConfigShape, ...ingesterRingConfigShape, ...tracingConfigShape },
  parseFlags(process.argv.slice(2)),
);
const identity = parseInstanceId(config['ingester.ring.instance-id']);
const logger = createLogger(identity.id);
const registry = createMetricsRegistry({ component: 'ingester', instance_id: identity.id });
const tracing = new Tracing({ serviceName: 'ingester', config, instanceId: identity.id, logger });
const bucket = createBucket(config);
const overrides = Overrides.fromFlags(config, { logger, registry });
// Global per-tenant limits are split over the topic's partitions (one ingester per partition and zone).
const topicMetadata = new LastProducedOffsetsReader({
  brokers: kafkaBrokers(config['ingest-storage.kafka.address']),
  topic: config['ingest-storage.kafka.topic'],
  clientId: `${identity.id}-metadata`,
  logger,
});
const partitions = new PartitionCount({ fetch: async () => (await topicMetadata.fetch()).size, logger });

const ingester = new Ingester({
  identity,
  maxLagForReady: config['ingester.max-lag-records-for-ready'],
  logger,
  registry,
  blocksStorage: {
    bucket,
    dir: config['blocks-storage.tsdb.dir'],
    blockRangeMs: config['blocks-storage.tsdb.block-ranges-period'],
    retentionMs: config['blocks-storage.tsdb.retention-period'],
    headCompactionIntervalMs: config['blocks-storage.tsdb.head-compaction-interval'],
    headCompactionIdleTimeoutMs: config['blocks-storage.tsdb.head-compaction-idle-timeout'],
  },
  // Runtime overrides per tenant; series and exemplar limits are this partition's share.
  limits: ingesterLimits(overrides, () => partitions.value),
  tracer: tracing.tracer,
  createSource: (onRecords) =>
    new PartitionReader({
      brokers: config['ingest-storage.kafka.address'].split(','),
      topic: config['ingest-storage.kafka.topic'],
      partition: identity.partition,
      consumerGroup: identity.id,
      sessionTimeoutMs: config['ingest-storage.kafka.session-timeout'],
      startFrom: 'committed',
      logger,
      onRecords,
    }),
});
const grpcAddress = `${config['server.grpc-listen-address']}:${config['server.grpc-listen-port']}`;
const grpc = new IngesterServer({ querier: ingester, address: grpcAddress, tracer: tracing.tracer });
const http = createHttpServer({ logger, registry, readiness: ingester });
registerIngesterRoutes(http, { ingester, logger });
// Owner of partition n in the partition ring (-ring.store): registration, heartbeats, PENDING → ACTIVE, scale-down endpoints.
const ringKv = createKv(config);
const lifecycler = new PartitionInstanceLifecycler({
  kv: ringKv,
  instanceId: identity.id,
  zone: identity.zone,
  partition: identity.partition,
  address: () => `${instanceHost(config['ingester.ring.instance-addr'], config['server.grpc-listen-address'])}:${grpc.port}`,
  heartbeatPeriodMs: config['ingester.ring.heartbeat-period'],
  heartbeatTimeoutMs: config['ingester.ring.heartbeat-timeout'],
  minOwnersCount: config['ingester.partition-ring.min-partition-owners-count'],
  minOwnersDurationMs: config['ingester.partition-ring.min-partition-owners-duration'],
  deleteInactivePartitionAfterMs: config['ingester.partition-ring.delete-inactive-partition-after'],
  pollIntervalMs: config['ingester.partition-ring.polling-interval'],
  logger,
  registry,
});
registerIngesterRingRoutes(http, { lifecycler, logger });

await runServices(
  [
    { name: 'tracing', start: () => tracing.start(), stop: () => tracing.stop() },
    { name: 'runtime-config', start: () => overrides.start(), stop: () => overrides.stop() },
    {
      name: 'partition-count',
      start: () => partitions.start(),
      stop: async () => {
        await partitions.stop();
        await topicMetadata.stop();
      },
    },
    {
      name: 'ingester',
      start: () => ingester.start(),
      stop: async () => {
        await ingester.stop();
        await bucket.close();
      },
    },
    {
      name: 'grpc',
      start: async () => {
        await grpc.start();
        logger.info(`${identity.id} serving queries on grpc://${config['server.grpc-listen-address']}:${grpc.port}`);
      },
      stop: () => grpc.stop(),
    },
    {
      name: 'ring-lifecycler',
      start: async () => {
        await ringKv.start();
        await lifecycler.start();
        logger.info(`${identity.id} owns partition ${identity.partition} in the partition ring (${ringKv.description})`);
      },
      stop: async () => {
        await lifecycler.stop();
        await ringKv.stop();
      },
    },
    {
      name: 'http',
      start: async () => {
        const host = config['server.http-listen-address'];
        const port = await listen(http, host, config['server.http-listen-port']);
        logger.info(`${identity.id} listening on http://${host}:${port} (/ready, /metrics, /ingester/prepare-partition-downscale, /ingester/prepare-shutdown)`);
      },
      stop: () => http.close(),
    },
  ],
  logger,
);
