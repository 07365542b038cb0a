// Single-process mode (`npm start`): every role in one process on one port,
// multi-tenancy off, a local Kafka broker started for it unless one is given,
// blocks shipped to the bucket <data-dir>/bucket (so ./data/bucket/anonymous/<ULID>/).

import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { IngestWriter, LastProducedOffsetsReader, PartitionReader, kafkaConfigShape } from '@strata/kafka';
import { ensureTopic, startKafka, type LocalKafka } from '@strata/local-kafka';
import { Distributor, distributorConfigShape, instanceLimitsFromConfig, registerPushRoutes } from '@strata/distributor';
import { Ingester, ingesterConfigShape, parseInstanceId, registerIngesterRoutes } from '@strata/ingester';
import { Overrides, ingesterLimits, limitsConfigShape, runtimeConfigShape } from '@strata/limits';
import { bucketConfigShape, createBucket, type Bucket } from '@strata/objstore';
import { BucketStore, bucketStoreConfigShape } from '@strata/storegateway';
import { Compactor, compactorConfigShape, retentionByTenant } from '@strata/compactor';
import {
  PartitionQuerier,
  StoreAndIngestersQuerier,
  RedisCacheBackend,
  ResultsCache,
  StrongReads,
  querierConfigShape,
  registerPrometheusApi,
  resultsCacheConfigShape,
} from '@strata/querier';
import { Engine } from '@strata/promql';
import { MemoryKv, PartitionInstanceLifecycler, PartitionRingWatcher, WritePartitions, registerIngesterRingRoutes, registerRingStatusPage } from '@strata/ring';
import { HaTracker, haTrackerConfigShape } from '@strata/ha-tracker';
import {
  authConfigShape,
  boolFlag,
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

const shape = {
  ...serverConfigShape,
  ...kafkaConfigShape,
  ...distributorConfigShape,
  ...querierConfigShape,
  ...resultsCacheConfigShape,
  ...blocksFlags(),
  ...bucketConfigShape,
  ...bucketStoreConfigShape,
  ...compactorConfigShape,
  ...limitsConfigShape,
  ...runtimeConfigShape,
  ...authConfigShape,
  ...haTrackerConfigShape,
  ...tracingConfigShape,
  'auth.multitenancy-enabled': boolFlag(false),
  'data-dir': z.string().default('./data'),
};
const config = flagsToConfig(shape, parseFlags(process.argv.slice(2)));
const logger = createLogger('strata');
const registry = createMetricsRegistry({ component: 'all' });
const tracing = new Tracing({ serviceName: 'strata', config, logger });
const limits = Overrides.fromFlags(config, { logger, registry });
const auth = createAuthenticator(config, { logger, registry });
const dataDir = resolve(config['data-dir']);
// The bucket and the local blocks live under -data-dir unless their own flags say otherwise.
const given = (flag: string) =>
  process.argv.some((a) => a.replace(/^--?/, '').startsWith(`${flag}=`)) || process.env[`STRATA_${flag.replace(/[.-]/g, '_').toUpperCase()}`] !== undefined;
const bucketDir = given('blocks-storage.filesystem.dir') ? resolve(config['blocks-storage.filesystem.dir']) : resolve(dataDir, 'bucket');
const tsdbDir = given('blocks-storage.tsdb.dir') ? resolve(config['blocks-storage.tsdb.dir']) : resolve(dataDir, 'tsdb');
let bucket: Bucket | undefined;
let store: BucketStore | undefined;
let compactor: Compactor | undefined;
const topic = config['ingest-storage.kafka.topic'];
const identity = parseInstanceId('ingester-zone-a-0');

let kafka: LocalKafka | undefined;
let brokers = config['ingest-storage.kafka.address'].split(',');
const externalKafka = process.argv.some((a) => a.includes('ingest-storage.kafka.address')) || process.env.STRATA_INGEST_STORAGE_KAFKA_ADDRESS !== undefined;

const writer = () =>
  new IngestWriter({ brokers, topic, clientId: `${config['ingest-storage.kafka.client-id']}-distributor`, timeoutMs: config['ingest-storage.kafka.write-timeout'], logger });
let kafkaWriter: IngestWriter;
let ingester: Ingester;
let offsets: LastProducedOffsetsReader | undefined;
const redisEndpoint = config['query-frontend.results-cache.redis.endpoint'];
const cacheBackend = redisEndpoint ? new RedisCacheBackend({ endpoint: redisEndpoint }) : undefined;
// The partition ring and the HA tracker in the in-process KV: one ingester owning partition 0, ACTIVE at once.
const ringKv = new MemoryKv();
const HEARTBEAT_TIMEOUT_MS = 60_000;
const lifecycler = new PartitionInstanceLifecycler({
  kv: ringKv,
  instanceId: identity.id,
  zone: identity.zone,
  partition: identity.partition,
  address: () => 'in-process',
  heartbeatPeriodMs: 15_000,
  heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
  minOwnersCount: 1,
  minOwnersDurationMs: 0,
  deleteInactivePartitionAfterMs: 0,
  logger,
  registry,
});
const ringWatcher = new PartitionRingWatcher({ kv: ringKv, logger, registry });
const haTracker = config['distributor.ha-tracker.enable']
  ? new HaTracker({
      kv: ringKv,
      updateTimeoutMs: config['distributor.ha-tracker.update-timeout'],
      updateTimeoutJitterMaxMs: config['distributor.ha-tracker.update-timeout-jitter-max'],
      failoverTimeoutMs: config['distributor.ha-tracker.failover-timeout'],
      logger,
      registry,
    })
  : undefined;

const http = createHttpServer({
  logger,
  registry,
  readiness: { notReadyReason: () => (ingester ? (ingester.notReadyReason() ?? store?.notReadyReason()) : 'starting Kafka') },
  bodyLimitBytes: config['distributor.max-recv-msg-size'],
});

await runServices(
  [
    { name: 'tracing', start: () => tracing.start(), stop: () => tracing.stop() },
    { name: 'runtime-config', start: () => limits.start(), stop: () => limits.stop() },
    { name: 'auth-tokens', start: async () => auth?.start(), stop: async () => auth?.stop() },
    {
      name: 'kafka',
      start: async () => {
        if (externalKafka) {
          logger.info({ brokers }, 'using external Kafka');
        } else {
          logger.info(`starting a local Apache Kafka broker (data in ${dataDir}/kafka)`);
          kafka = await startKafka({ dataDir: resolve(dataDir, 'kafka'), brokers: 1, log: (line) => logger.debug(line) });
          brokers = kafka.brokers;
          logger.info({ brokers }, `local Kafka broker ready at ${brokers.join(',')}`);
        }
        await ensureTopic({ brokers, topic, partitions: 1, replicationFactor: 1 });
      },
      stop: async () => {
        await kafka?.stop();
      },
    },
    {
      name: 'ingester',
      start: async () => {
        if (config['blocks-storage.backend'] === 'filesystem') mkdirSync(bucketDir, { recursive: true });
        bucket = createBucket({ ...config, 'blocks-storage.filesystem.dir': bucketDir });
        ingester = new Ingester({
          identity,
          maxLagForReady: 100,
          logger,
          registry,
          blocksStorage: {
            bucket,
            dir: tsdbDir,
            blockRangeMs: config['blocks-storage.tsdb.block-ranges-period'],
            retentionMs: config['blocks-storage.tsdb.retention-period'],
            headCompactionIntervalMs: config['blocks-storage.tsdb.head-compaction-interval'],
            headCompactionIdleTimeoutMs: config['blocks-storage.tsdb.head-compaction-idle-timeout'],
          },
          // Runtime overrides per tenant; one partition, so the ingester holds the whole global limits.
          limits: ingesterLimits(limits, () => 1),
          createSource: (onRecords) =>
            new PartitionReader({ brokers, topic, partition: 0, consumerGroup: identity.id, startFrom: 'committed', logger, onRecords }),
          tracer: tracing.tracer,
        });
        registerIngesterRoutes(http, { ingester, logger });
        await ingester.start();
        store = new BucketStore({
          bucket,
          logger,
          registry,
          syncIntervalMs: config['blocks-storage.bucket-store.sync-interval'],
          ignoreDeletionMarksDelayMs: config['blocks-storage.bucket-store.ignore-deletion-marks-delay'],
          bucketIndexEnabled: config['blocks-storage.bucket-store.bucket-index.enabled'],
          warmStartPeriodMs: config['blocks-storage.bucket-store.warm-start-period'],
        });
        void store.start();
        // -target=all runs the compactor too: levels, retention and the bucket index.
        compactor = new Compactor({
          bucket,
          logger,
          registry,
          dataDir: given('compactor.data-dir') ? resolve(config['compactor.data-dir']) : resolve(dataDir, 'compactor'),
          ranges: config['compactor.block-ranges'],
          compactionIntervalMs: config['compactor.compaction-interval'],
          cleanupIntervalMs: config['compactor.cleanup-interval'],
          deletionDelayMs: config['compactor.deletion-delay'],
          firstLevelWaitMs: config['compactor.first-level-compaction-wait-period'],
          retentionMs: retentionByTenant(config['compactor.blocks-retention-period'], config['compactor.tenant-blocks-retention-periods']),
          partialBlockDeletionDelayMs: config['compactor.partial-block-deletion-delay'],
          enabledTenants: config['compactor.enabled-tenants'].split(',').map((t) => t.trim()).filter((t) => t !== ''),
        });
        await compactor.start();
      },
      stop: async () => {
        await compactor?.stop();
        await ingester.stop();
        await store?.stop();
        await bucket?.close();
      },
    },
    {
      name: 'ring',
      start: async () => {
        await lifecycler.start();
        await ringWatcher.start();
        registerIngesterRingRoutes(http, { lifecycler, logger });
      },
      stop: async () => {
        await ringWatcher.stop();
        await lifecycler.stop();
      },
    },
    {
      name: 'distributor',
      start: async () => {
        kafkaWriter = writer();
        await kafkaWriter.start();
        const writePartitions = new WritePartitions({ watcher: ringWatcher, partitionCount: () => kafkaWriter.partitionCount(), logger });
        const distributor = new Distributor({
          writer: kafkaWriter,
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
        registerRingStatusPage(http, {
          snapshot: () => writePartitions.snapshot(),
          heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS,
          paths: ['/ingester/partition-ring', '/distributor/ring'],
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
        const querier = new PartitionQuerier({
          replicas: [{ id: identity.id, zone: identity.zone, partition: identity.partition, querier: ingester, waiter: ingester }],
          logger,
        });
        const blocksAndIngesters = new StoreAndIngestersQuerier({
          ingesters: querier,
          store,
          queryIngestersWithinMs: config['querier.query-ingesters-within'],
          queryStoreAfterMs: config['querier.query-store-after'],
        });
        const engine = new Engine({
          querier: blocksAndIngesters,
          lookbackDeltaMs: config['querier.lookback-delta'],
          maxSamples: config['querier.max-samples'],
          maxFetchedSeries: config['querier.max-fetched-series-per-query'],
          timeoutMs: config['querier.timeout'],
          enableExperimentalFunctions: config['querier.promql-experimental-functions-enabled'],
          enableDurationExpressions: config['querier.promql-duration-expressions-enabled'],
        });
        offsets = new LastProducedOffsetsReader({ brokers, topic, clientId: 'strata-querier', logger });
        await cacheBackend?.start();
        registerPrometheusApi(http, {
          querier: blocksAndIngesters,
          engine,
          multitenancyEnabled: config['auth.multitenancy-enabled'],
          logger,
          registry,
          prefixes: ['/api/v1', '/prometheus/api/v1'],
          auth,
          tracer: tracing.tracer,
          strongReads: new StrongReads({ offsets, querier, maxWaitMs: config['querier.max-wait-for-offset'], blocks: blocksAndIngesters }),
          resultsCache: cacheBackend
            ? new ResultsCache({
                backend: cacheBackend,
                splitIntervalMs: config['query-frontend.split-queries-by-interval'],
                maxFreshnessMs: config['query-frontend.max-cache-freshness'],
                ttlMs: config['query-frontend.results-cache-ttl'],
                registry,
              })
            : undefined,
        });
      },
      stop: async () => {
        await kafkaWriter.stop();
        await offsets?.stop();
        await cacheBackend?.stop();
      },
    },
    {
      name: 'http',
      start: async () => {
        const host = config['server.http-listen-address'];
        const port = await listen(http, host, config['server.http-listen-port']);
        const base = `http://${host}:${port}`;
        logger.info(
          `Strata (single process) listening on ${base}: push ${base}/api/v1/push, OTLP ${base}/otlp/v1/metrics, ` +
            `Prometheus API ${base}/prometheus, ready ${base}/ready, metrics ${base}/metrics; ` +
            `Kafka ${brokers.join(',')} topic "${topic}"; bucket ${bucketDir}`,
        );
      },
      stop: () => http.close(),
    },
  ],
  logger,
);

/** The ingester's blocks flags, without the instance id (one fixed ingester here). */
function blocksFlags() {
  const { 'ingester.ring.instance-id': _id, 'ingester.max-lag-records-for-ready': _lag, ...rest } = ingesterConfigShape;
  return rest;
}
