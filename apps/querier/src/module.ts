// The querier module: the Prometheus HTTP API over one healthy ingester per
// partition (in this process, listed by -querier.ingester-addresses, or found
// in the partition ring) joined with the bucket's blocks.

import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Querier } from '@strata/model';
import { Engine } from '@strata/promql';
import { IngesterClient } from '@strata/ingester-rpc';
import { parseInstanceId } from '@strata/ingester';
import { LastProducedOffsetsReader } from '@strata/kafka';
import { BucketStore, DeletionFilterQuerier, Deletions } from '@strata/storegateway';
import {
  PartitionQuerier,
  RingIngesterDiscovery,
  StoreAndIngestersQuerier,
  RedisCacheBackend,
  ResultsCache,
  StrongReads,
  adminRoutes,
  cardinalityRoutes,
  parseIngesterAddresses,
  registerPrometheusApi,
  registerUserStatsApi,
  remoteReadRoutes,
  statusRoutes,
} from '@strata/querier';
import { QuerierWorker, injectingHandler } from '@strata/query-scheduler';
import { PartitionRingWatcher } from '@strata/ring';
import { readBuildInfo, type Service } from '@strata/service';
import type { Strata } from '@strata/runtime';

export function initQuerier(t: Strata): Service[] {
  const { config, logger } = t;
  const clients = ingesterClients(t);
  const local = t.localIngester;
  const useRing = config['ring.store'] === 'redis';
  if (clients.length === 0 && !useRing && !local)
    logger.warn('no ingesters configured (-querier.ingester-addresses, or -ring.store=redis); every query will be empty');
  const querier = partitionQuerier(t, clients);
  // With a shared ring, ingesters are found there (their registered gRPC address); the static list is the fallback.
  const { ringWatcher, discovery } = useRing ? ringDiscovery(t, clients, querier) : { ringWatcher: undefined, discovery: undefined };
  const store = bucketStore(t);
  const blocksAndIngesters = new StoreAndIngestersQuerier({
    ingesters: querier,
    store,
    queryIngestersWithinMs: config['querier.query-ingesters-within'],
    queryStoreAfterMs: config['querier.query-store-after'],
  });
  const engine = promqlEngine(t, blocksAndIngesters);
  // Read-after-write: the partitions' last produced offsets, through one long-lived admin client.
  const offsets = new LastProducedOffsetsReader({
    brokers: t.brokers,
    security: t.kafkaSecurity,
    topic: config['ingest-storage.kafka.topic'],
    clientId: `${config['ingest-storage.kafka.client-id']}-querier`,
    logger,
  });
  // Delete requests and deleted tenants, read from the bucket: every read goes through this filter.
  const deletions = (t.deletions ??= new Deletions({ bucket: t.bucket, syncIntervalMs: config['querier.deletion-requests-sync-interval'] }));
  const redisEndpoint = config['query-frontend.results-cache.redis.endpoint'];
  const cacheBackend = redisEndpoint ? new RedisCacheBackend({ endpoint: redisEndpoint }) : undefined;
  const strongReads = new StrongReads({ offsets, querier, maxWaitMs: config['querier.max-wait-for-offset'], blocks: blocksAndIngesters });
  const readFilter = (q: Querier) => new DeletionFilterQuerier(q, deletions);
  t.queryEngine = { engine, querier: async (strong) => readFilter(strong ? await strongReads.querier() : blocksAndIngesters) };
  registerApis(t, { querier: blocksAndIngesters, engine, strongReads, cacheBackend, readFilter, deletions });
  // /ready stays 503 until the recent blocks' index headers are loaded.
  t.readiness.push(() => store.notReadyReason());
  t.endpoints.push('Prometheus API $BASE/prometheus');
  return [
    {
      name: 'ingester-discovery',
      start: async () => {
        await ringWatcher?.start();
        discovery?.start();
        if (ringWatcher) logger.info({ ring: ringWatcher.status() }, `discovering ingesters in the partition ring (${t.kv.description})`);
        else logger.info({ ingesters: [...(local ? [local.identity.id] : []), ...clients.map((c) => c.id)] }, 'querying ingesters');
      },
      stop: async () => {
        discovery?.stop();
        await ringWatcher?.stop();
        for (const c of clients) c.client.close();
      },
    },
    {
      name: 'results-cache',
      start: async () => cacheBackend?.start(),
      stop: async () => {
        await offsets.stop();
        await cacheBackend?.stop();
      },
    },
    { name: 'bucket-store', start: () => store.start(), stop: () => store.stop() },
    ...schedulerWorker(t),
  ];
}

/**
 * With -querier.scheduler-address, this querier also pulls queries from the query-scheduler
 * (-querier.max-concurrent at once) and runs each against its own HTTP routes, as Mimir's querier
 * workers do; /ready says whether the scheduler is connected.
 */
function schedulerWorker(t: Strata): Service[] {
  const { config, logger } = t;
  const schedulerAddress = config['querier.scheduler-address'];
  if (schedulerAddress === '') return [];
  const worker = new QuerierWorker({
    schedulerAddress,
    querierId: config['querier.id'] || `${hostname()}:${config['server.http-listen-port']}`,
    maxConcurrent: config['querier.max-concurrent'],
    handle: injectingHandler(t.http),
    logger,
  });
  t.readiness.push(() => (worker.connected() ? undefined : `not connected to the query-scheduler at ${schedulerAddress}`));
  return [
    {
      name: 'querier-worker',
      start: async () => {
        worker.start();
        logger.info(`running queries from the query-scheduler at ${schedulerAddress}, ${config['querier.max-concurrent']} at a time`);
      },
      stop: () => worker.stop(),
    },
  ];
}

type IngesterClientEntry = ReturnType<typeof ingesterClients>[number];

/** A gRPC client per ingester of -querier.ingester-addresses. */
function ingesterClients(t: Strata) {
  const { config } = t;
  return parseIngesterAddresses(config['querier.ingester-addresses']).map(({ id, address }) => ({
    ...parseInstanceId(id),
    address,
    client: new IngesterClient({ id, address, timeoutMs: config['querier.ingester-timeout'] }),
  }));
}

/** One healthy ingester per partition: the one in this process, the listed ones (the ring adds more). */
function partitionQuerier(t: Strata, clients: IngesterClientEntry[]): PartitionQuerier {
  const local = t.localIngester;
  return new PartitionQuerier({
    replicas: [
      ...(local ? [{ ...local.identity, querier: local.ingester, waiter: local.ingester }] : []),
      ...clients.map((c) => ({ id: c.id, zone: c.zone, partition: c.partition, querier: c.client, waiter: c.client })),
    ],
    preferredZone: t.config['querier.prefer-availability-zone'],
    logger: t.logger,
  });
}

/** Ingesters found in the partition ring (their registered gRPC address), the static list as the fallback. */
function ringDiscovery(t: Strata, clients: IngesterClientEntry[], querier: PartitionQuerier) {
  const { config, logger, registry } = t;
  const ringWatcher = new PartitionRingWatcher({ kv: t.kv, logger, registry, heartbeatTimeoutMs: config['ingester.ring.heartbeat-timeout'] });
  const discovery = new RingIngesterDiscovery({
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
  });
  return { ringWatcher, discovery };
}

/** Older data from the bucket's blocks, joined with the ingesters by time (-querier.query-store-after). */
function bucketStore(t: Strata): BucketStore {
  const { config } = t;
  return new BucketStore({
    bucket: t.bucket,
    logger: t.logger,
    registry: t.registry,
    syncIntervalMs: config['blocks-storage.bucket-store.sync-interval'],
    ignoreDeletionMarksDelayMs: config['blocks-storage.bucket-store.ignore-deletion-marks-delay'],
    bucketIndexEnabled: config['blocks-storage.bucket-store.bucket-index.enabled'],
    warmStartPeriodMs: config['blocks-storage.bucket-store.warm-start-period'],
  });
}

function promqlEngine(t: Strata, querier: Querier): Engine {
  const { config } = t;
  return new Engine({
    querier,
    lookbackDeltaMs: config['querier.lookback-delta'],
    maxSamples: config['querier.max-samples'],
    maxFetchedSeries: config['querier.max-fetched-series-per-query'],
    maxEstimatedMemoryBytes: config['querier.max-estimated-memory-per-query'],
    maxFetchedChunkBytes: config['querier.max-fetched-chunk-bytes-per-query'],
    // The tenant's max_fetched_*_per_query overrides; the flags above where it sets none.
    tenantLimits: (tenant) => {
      const l = t.overrides.forTenant(tenant);
      return {
        maxFetchedSeries: l.maxFetchedSeriesPerQuery,
        maxFetchedChunks: l.maxFetchedChunksPerQuery,
        maxFetchedChunkBytes: l.maxFetchedChunkBytesPerQuery,
      };
    },
    timeoutMs: config['querier.timeout'],
    enableExperimentalFunctions: config['querier.promql-experimental-functions-enabled'],
    enableDurationExpressions: config['querier.promql-duration-expressions-enabled'],
  });
}

interface ApiParts {
  querier: StoreAndIngestersQuerier;
  engine: Engine;
  strongReads: StrongReads;
  cacheBackend: RedisCacheBackend | undefined;
  readFilter: (q: Querier) => Querier;
  deletions: Deletions;
}

/** The Prometheus API (with remote read, admin, status and cardinality routes) and user_stats. */
function registerApis(t: Strata, p: ApiParts): void {
  const { config, logger, registry } = t;
  registerPrometheusApi(t.http, {
    querier: p.querier,
    engine: p.engine,
    multitenancyEnabled: config['auth.multitenancy-enabled'],
    logger,
    registry,
    prefixes: ['/api/v1', '/prometheus/api/v1'],
    strongReads: p.strongReads,
    resultsCache: p.cacheBackend
      ? new ResultsCache({
          backend: p.cacheBackend,
          splitIntervalMs: config['query-frontend.split-queries-by-interval'],
          maxFreshnessMs: config['query-frontend.max-cache-freshness'],
          ttlMs: config['query-frontend.results-cache-ttl'],
          registry,
          // Splits of one query run at once: the tenant's max_query_parallelism.
          concurrency: (tenant) => t.overrides.forTenant(tenant).maxQueryParallelism,
        })
      : undefined,
    auth: t.auth,
    tracer: t.tracing.tracer,
    readFilter: p.readFilter,
    maxQueryLookbackMs: (tenant) => t.overrides.forTenant(tenant).maxQueryLookbackMs,
    buildInfo: readBuildInfo(fileURLToPath(new URL('../../..', import.meta.url))),
    routes: [
      ...remoteReadRoutes({ registry }),
      ...adminRoutes([p.deletions]),
      ...statusRoutes({
        config,
        headWindowMs: config['querier.query-ingesters-within'],
        retention: retentionText(config['compactor.blocks-retention-period']),
      }),
      ...cardinalityRoutes({ headWindowMs: config['querier.query-ingesters-within'] }),
    ],
  });
  // user_stats from the ingester in this process (remote ingesters have no user-stats RPC yet).
  const local = t.localIngester;
  registerUserStatsApi(t.http, {
    sources: () => (local ? [local.ingester] : []),
    multitenancyEnabled: config['auth.multitenancy-enabled'],
    auth: t.auth,
    prefixes: ['/api/v1', '/prometheus/api/v1'],
  });
  t.queryApi = { apiPrefix: '/prometheus/api/v1', multitenancy: config['auth.multitenancy-enabled'] };
}

function retentionText(ms: number): string {
  return ms > 0 ? `${ms / 1000}s` : 'unlimited';
}
