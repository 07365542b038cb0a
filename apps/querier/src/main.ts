// Querier process: the Prometheus HTTP API over one healthy ingester per partition.

import { Engine } from '@strata/promql';
import { IngesterClient } from '@strata/ingester-rpc';
import { parseInstanceId } from '@strata/ingester';
import { LastProducedOffsetsReader, kafkaBrokers, kafkaConfigShape } from '@strata/kafka';
import { bucketConfigShape, createBucket } from '@strata/objstore';
import { BucketStore, bucketStoreConfigShape } from '@strata/storegateway';
import {
  PartitionQuerier,
  RingIngesterDiscovery,
  StoreAndIngestersQuerier,
  RedisCacheBackend,
  ResultsCache,
  StrongReads,
  parseIngesterAddresses,
  querierConfigShape,
  registerPrometheusApi,
  resultsCacheConfigShape,
} from '@strata/querier';
import { PartitionRingWatcher, createKv, ringClientConfigShape } from '@strata/ring';
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

const logger = createLogger('querier');
const config = flagsToConfig(
  {
    ...serverConfigShape,
    ...kafkaConfigShape,
    ...querierConfigShape,
    ...resultsCacheConfigShape,
    ...authConfigShape,
    ...bucketConfigShape,
    ...bucketStoreConfigShape,
    ...ringClientConfigShape,
    ...tracingConfigShape,
    'auth.multitenancy-enabled': boolFlag(true),
  },
  parseFlags(process.argv.slice(2)),
);
const registry = createMetricsRegistry({ component: 'querier' });
const tracing = new Tracing({ serviceName: 'querier', config, logger });
const auth = createAuthenticator(config, { logger, registry });

const clients = parseIngesterAddresses(config['querier.ingester-addresses']).map(({ id, address }) => ({
  ...parseInstanceId(id),
  address,
  client: new IngesterClient({ id, address, timeoutMs: config['querier.ingester-timeout'] }),
}));
const useRing = config['ring.store'] === 'redis';
if (clients.length === 0 && !useRing) logger.warn('no ingesters configured (-querier.ingester-addresses, or -ring.store=redis); every query will be empty');
const querier = new PartitionQuerier({
  replicas: clients.map((c) => ({ id: c.id, zone: c.zone, partition: c.partition, querier: c.client, waiter: c.client })),
  preferredZone: config['querier.prefer-availability-zone'],
  logger,
});
// With a shared ring, ingesters are found there (their registered gRPC address); the static list is the fallback.
const ringKv = useRing ? createKv(config) : undefined;
const ringWatcher = ringKv ? new PartitionRingWatcher({ kv: ringKv, logger, registry }) : undefined;
const discovery = ringWatcher
  ? new RingIngesterDiscovery({
      ring: ringWatcher,
      staticIngesters: clients,
      connect: (id, address) => {
        const known = clients.find((c) => c.id === id && c.address === address);
        const client = known?.client ?? new IngesterClient({ id, address, timeoutMs: config['querier.ingester-timeout'] });
        return { querier: client, waiter: client, close: () => (known ? undefined : client.close()) };
      },
      querier,
      heartbeatTimeoutMs: config['ingester.ring.heartbeat-timeout'],
      logger,
    })
  : undefined;
// Older data from the bucket's blocks, joined with the ingesters by time (-querier.query-store-after).
const bucket = createBucket(config);
const store = new BucketStore({
  bucket,
  logger,
  registry,
  syncIntervalMs: config['blocks-storage.bucket-store.sync-interval'],
  ignoreDeletionMarksDelayMs: config['blocks-storage.bucket-store.ignore-deletion-marks-delay'],
  bucketIndexEnabled: config['blocks-storage.bucket-store.bucket-index.enabled'],
  warmStartPeriodMs: config['blocks-storage.bucket-store.warm-start-period'],
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
// Read-after-write: the partitions' last produced offsets, through one long-lived admin client.
const offsets = new LastProducedOffsetsReader({
  brokers: kafkaBrokers(config['ingest-storage.kafka.address']),
  topic: config['ingest-storage.kafka.topic'],
  clientId: `${config['ingest-storage.kafka.client-id']}-querier`,
  logger,
});
const strongReads = new StrongReads({ offsets, querier, maxWaitMs: config['querier.max-wait-for-offset'], blocks: blocksAndIngesters });
const redisEndpoint = config['query-frontend.results-cache.redis.endpoint'];
const cacheBackend = redisEndpoint ? new RedisCacheBackend({ endpoint: redisEndpoint }) : undefined;
const resultsCache = cacheBackend
  ? new ResultsCache({
      backend: cacheBackend,
      splitIntervalMs: config['query-frontend.split-queries-by-interval'],
      maxFreshnessMs: config['query-frontend.max-cache-freshness'],
      ttlMs: config['query-frontend.results-cache-ttl'],
      registry,
    })
  : undefined;
const http = createHttpServer({ logger, registry, readiness: store });
registerPrometheusApi(http, {
  querier: blocksAndIngesters,
  engine,
  multitenancyEnabled: config['auth.multitenancy-enabled'],
  logger,
  registry,
  prefixes: ['/api/v1', '/prometheus/api/v1'],
  strongReads,
  resultsCache,
  auth,
  tracer: tracing.tracer,
});

await runServices(
  [
    { name: 'tracing', start: () => tracing.start(), stop: () => tracing.stop() },
    { name: 'auth-tokens', start: async () => auth?.start(), stop: async () => auth?.stop() },
    {
      name: 'ingester-discovery',
      start: async () => {
        await ringKv?.start();
        await ringWatcher?.start();
        discovery?.start();
        if (ringWatcher) logger.info({ ring: ringWatcher.status() }, `discovering ingesters in the partition ring (${ringKv!.description})`);
      },
      stop: async () => {
        discovery?.stop();
        await ringWatcher?.stop();
        await ringKv?.stop();
      },
    },
    {
      name: 'http',
      start: async () => {
        await cacheBackend?.start();
        const host = config['server.http-listen-address'];
        const port = await listen(http, host, config['server.http-listen-port']);
        logger.info(
          { ingesters: clients.map((c) => c.id) },
          `querier listening on http://${host}:${port} (Prometheus API at /prometheus/api/v1 and /api/v1)`,
        );
      },
      stop: async () => {
        await http.close();
        for (const c of clients) c.client.close();
        await offsets.stop();
        await cacheBackend?.stop();
      },
    },
    // After the HTTP server: /ready answers 503 until the recent blocks' index headers are loaded.
    {
      name: 'bucket-store',
      start: () => store.start(),
      stop: async () => {
        await store.stop();
        await bucket.close();
      },
    },
  ],
  logger,
);
