// The ingester module: ingester-zone-<zone>-<n> consumes partition n into its
// heads, cuts blocks and ships them to the bucket, owns partition n in the
// partition ring, and serves queries (over gRPC unless the querier is in this
// process and reads it directly).

import { LastProducedOffsetsReader, PartitionReader } from '@strata/kafka';
import { DEFAULT_MAX_HEAP_SHARE, Ingester, PartitionCount, ingesterPage, parseInstanceId, registerIngesterRoutes, tenantsPage } from '@strata/ingester';
import { ingesterLimits } from '@strata/limits';
import { IngesterServer } from '@strata/ingester-rpc';
import { PartitionInstanceLifecycler, instanceHost, registerIngesterRingRoutes } from '@strata/ring';
import type { Service } from '@strata/service';
import { failureSignal, type Strata } from '@strata/runtime';

export function initIngester(t: Strata): Service[] {
  const { config, logger } = t;
  const identity = parseInstanceId(config['ingester.ring.instance-id']);
  // Global per-tenant limits are split over the topic's partitions (one ingester per partition and zone).
  const topicMetadata = new LastProducedOffsetsReader({
    brokers: t.brokers,
    security: t.kafkaSecurity,
    topic: config['ingest-storage.kafka.topic'],
    clientId: `${identity.id}-metadata`,
    logger,
  });
  const partitions = new PartitionCount({ fetch: async () => (await topicMetadata.fetch()).size, logger });
  const failure = failureSignal();
  const ingester = newIngester(t, identity, partitions, failure, (reason) => lifecycler.setOverLimit(reason));
  t.localIngester = { ingester, identity };
  t.readiness.push(() => ingester.notReadyReason());
  registerIngesterRoutes(t.http, { ingester, logger });
  const grpc = t.runs('querier')
    ? undefined
    : new IngesterServer({
        querier: ingester,
        address: `${config['server.grpc-listen-address']}:${config['server.grpc-listen-port']}`,
        tracer: t.tracing.tracer,
      });
  const lifecycler = partitionLifecycler(t, identity, grpc);
  registerIngesterRingRoutes(t.http, { lifecycler, logger });
  t.statusPages.push(ingesterPage(ingester), tenantsPage(ingester));
  t.endpoints.push(`${identity.id} on partition ${identity.partition}`, 'flush $BASE/ingester/flush');
  return [
    {
      name: 'partition-count',
      start: () => partitions.start(),
      stop: async () => {
        await partitions.stop();
        await topicMetadata.stop();
      },
    },
    { name: 'ingester', start: () => ingester.start(), stop: () => ingester.stop(), watch: failure.watch },
    ...(grpc ? [grpcService(t, identity, grpc)] : []),
    {
      name: 'ingester-ring',
      start: async () => {
        await lifecycler.start();
        logger.info(`${identity.id} owns partition ${identity.partition} in the partition ring (${t.kv.description})`);
      },
      stop: () => lifecycler.stop(),
    },
  ];
}

type Identity = ReturnType<typeof parseInstanceId>;

/** The ingester of partition `identity.partition`, reading it from the committed offset. */
function newIngester(
  t: Strata,
  identity: Identity,
  partitions: PartitionCount,
  failure: ReturnType<typeof failureSignal>,
  onOverLimit: (reason: string | undefined) => void,
): Ingester {
  const { config, logger } = t;
  return new Ingester({
    identity,
    maxLagForReady: config['ingester.max-lag-records-for-ready'],
    logger,
    registry: t.registry,
    blocksStorage: {
      bucket: t.bucket,
      dir: config['blocks-storage.tsdb.dir'],
      blockRangeMs: config['blocks-storage.tsdb.block-ranges-period'],
      retentionMs: config['blocks-storage.tsdb.retention-period'],
      headCompactionIntervalMs: config['blocks-storage.tsdb.head-compaction-interval'],
      headCompactionIdleTimeoutMs: config['blocks-storage.tsdb.head-compaction-idle-timeout'],
    },
    // Runtime overrides per tenant; series and exemplar limits are this partition's share.
    limits: ingesterLimits(t.overrides, () => partitions.value),
    tracer: t.tracing.tracer,
    // The querier's limits hold inside the ingester too, the tenant's overrides first: an over-budget select stops early here.
    queryBudget: (tenant) => {
      const l = t.overrides.forTenant(tenant);
      return {
        maxSeries: l.maxFetchedSeriesPerQuery ?? config['querier.max-fetched-series-per-query'],
        maxSamples: config['querier.max-samples'],
        maxEstimatedMemoryBytes: config['querier.max-estimated-memory-per-query'],
        maxChunkBytes: l.maxFetchedChunkBytesPerQuery ?? config['querier.max-fetched-chunk-bytes-per-query'],
        maxChunks: l.maxFetchedChunksPerQuery,
      };
    },
    decodedSamplesCacheBytes: config['ingester.decoded-chunks-cache-size'],
    // Over these the ingester keeps appending what Kafka holds and asks distributors, through its ring entry, to refuse writes.
    instanceLimits: { maxSeries: config['ingester.instance-limits.max-series'], maxHeapShare: DEFAULT_MAX_HEAP_SHARE },
    onOverLimit,
    createSource: (onRecords, onMissedRecords) =>
      new PartitionReader({
        brokers: t.brokers,
        security: t.kafkaSecurity,
        topic: config['ingest-storage.kafka.topic'],
        partition: identity.partition,
        consumerGroup: identity.id,
        startFrom: 'committed',
        logger,
        onRecords,
        onMissedRecords,
        // A reader that gave up for good leaves the ingester serving stale data: fail loudly instead.
        onError: (err) => failure.fail(err),
      }),
  });
}

/** This ingester's entry in the partition ring: it owns its partition there, and says when it is over a limit. */
function partitionLifecycler(t: Strata, identity: Identity, grpc: IngesterServer | undefined): PartitionInstanceLifecycler {
  const { config } = t;
  return new PartitionInstanceLifecycler({
    kv: t.kv,
    instanceId: identity.id,
    zone: identity.zone,
    partition: identity.partition,
    address: () => (grpc ? `${instanceHost(config['ingester.ring.instance-addr'], config['server.grpc-listen-address'])}:${grpc.port}` : 'in-process'),
    heartbeatPeriodMs: config['ingester.ring.heartbeat-period'],
    heartbeatTimeoutMs: config['ingester.ring.heartbeat-timeout'],
    minOwnersCount: config['ingester.partition-ring.min-partition-owners-count'],
    // The wait lets every distributor see the new owner before writes go there; an in-process ring has no other readers.
    minOwnersDurationMs: t.kv.description === 'memory' ? 0 : config['ingester.partition-ring.min-partition-owners-duration'],
    deleteInactivePartitionAfterMs: config['ingester.partition-ring.delete-inactive-partition-after'],
    pollIntervalMs: config['ingester.partition-ring.polling-interval'],
    logger: t.logger,
    registry: t.registry,
  });
}

function grpcService(t: Strata, identity: Identity, grpc: IngesterServer): Service {
  return {
    name: 'ingester-grpc',
    start: async () => {
      await grpc.start();
      t.logger.info(`${identity.id} serving queries on grpc://${t.config['server.grpc-listen-address']}:${grpc.port}`);
    },
    stop: () => grpc.stop(),
  };
}
