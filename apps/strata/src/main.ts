// Single-process mode (`npm start`): every role in one process on one port,
// multi-tenancy off, a local Kafka broker started for it unless one is given.

import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { IngestWriter, PartitionReader, kafkaConfigShape } from '@strata/kafka';
import { ensureTopic, startKafka, type LocalKafka } from '@strata/local-kafka';
import { Distributor, distributorConfigShape, registerPushRoutes } from '@strata/distributor';
import { Ingester, parseInstanceId } from '@strata/ingester';
import { PartitionQuerier, querierConfigShape, registerPrometheusApi } from '@strata/querier';
import { Engine } from '@strata/promql';
import {
  boolFlag,
  createHttpServer,
  createLogger,
  createMetricsRegistry,
  flagsToConfig,
  listen,
  parseFlags,
  runServices,
  serverConfigShape,
} from '@strata/service';

const shape = {
  ...serverConfigShape,
  ...kafkaConfigShape,
  ...distributorConfigShape,
  ...querierConfigShape,
  'auth.multitenancy-enabled': boolFlag(false),
  'data-dir': z.string().default('./data'),
};
const config = flagsToConfig(shape, parseFlags(process.argv.slice(2)));
const logger = createLogger('strata');
const registry = createMetricsRegistry({ component: 'all' });
const dataDir = resolve(config['data-dir']);
const bucketDir = resolve(dataDir, 'bucket');
const topic = config['ingest-storage.kafka.topic'];
const identity = parseInstanceId('ingester-zone-a-0');

let kafka: LocalKafka | undefined;
let brokers = config['ingest-storage.kafka.address'].split(',');
const externalKafka = process.argv.some((a) => a.includes('ingest-storage.kafka.address')) || process.env.STRATA_INGEST_STORAGE_KAFKA_ADDRESS !== undefined;

const writer = () =>
  new IngestWriter({ brokers, topic, clientId: `${config['ingest-storage.kafka.client-id']}-distributor`, timeoutMs: config['ingest-storage.kafka.write-timeout'], logger });
let kafkaWriter: IngestWriter;
let ingester: Ingester;

const http = createHttpServer({
  logger,
  registry,
  readiness: { notReadyReason: () => (ingester ? ingester.notReadyReason() : 'starting Kafka') },
  bodyLimitBytes: config['distributor.max-recv-msg-size'],
});

await runServices(
  [
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
        mkdirSync(bucketDir, { recursive: true });
        ingester = new Ingester({
          identity,
          maxLagForReady: 100,
          logger,
          registry,
          createSource: (onRecords) =>
            new PartitionReader({ brokers, topic, partition: 0, consumerGroup: identity.id, startFrom: 'earliest', logger, onRecords }),
        });
        await ingester.start();
      },
      stop: () => ingester.stop(),
    },
    {
      name: 'distributor',
      start: async () => {
        kafkaWriter = writer();
        await kafkaWriter.start();
        const distributor = new Distributor({ writer: kafkaWriter, maxRecvMsgSize: config['distributor.max-recv-msg-size'], logger, registry });
        registerPushRoutes(http, {
          distributor,
          multitenancyEnabled: config['auth.multitenancy-enabled'],
          logger,
          registry,
          maxBodyBytes: config['distributor.max-recv-msg-size'],
        });
        const querier = new PartitionQuerier({
          replicas: [{ id: identity.id, zone: identity.zone, partition: identity.partition, querier: ingester }],
          logger,
        });
        const engine = new Engine({
          querier,
          lookbackDeltaMs: config['querier.lookback-delta'],
          maxSamples: config['querier.max-samples'],
          timeoutMs: config['querier.timeout'],
        });
        registerPrometheusApi(http, {
          querier,
          engine,
          multitenancyEnabled: config['auth.multitenancy-enabled'],
          logger,
          registry,
          prefixes: ['/api/v1', '/prometheus/api/v1'],
        });
      },
      stop: () => kafkaWriter.stop(),
    },
    {
      name: 'http',
      start: async () => {
        const host = config['server.http-listen-address'];
        const port = await listen(http, host, config['server.http-listen-port']);
        const base = `http://${host}:${port}`;
        logger.info(
          `Strata (single process) listening on ${base}: push ${base}/api/v1/push, ` +
            `Prometheus API ${base}/prometheus, ready ${base}/ready, metrics ${base}/metrics; ` +
            `Kafka ${brokers.join(',')} topic "${topic}"; bucket ${bucketDir}`,
        );
      },
      stop: () => http.close(),
    },
  ],
  logger,
);
