// Ingester process: ingester-zone-<zone>-<n> consumes partition n into memory
// and serves it over gRPC once caught up.

import { PartitionReader, kafkaConfigShape } from '@strata/kafka';
import { Ingester, ingesterConfigShape, parseInstanceId } from '@strata/ingester';
import { IngesterServer } from '@strata/ingester-rpc';
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

const config = flagsToConfig({ ...serverConfigShape, ...kafkaConfigShape, ...ingesterConfigShape }, parseFlags(process.argv.slice(2)));
const identity = parseInstanceId(config['ingester.ring.instance-id']);
const logger = createLogger(identity.id);
const registry = createMetricsRegistry({ component: 'ingester', instance_id: identity.id });

const ingester = new Ingester({
  identity,
  maxLagForReady: config['ingester.max-lag-records-for-ready'],
  logger,
  registry,
  createSource: (onRecords) =>
    new PartitionReader({
      brokers: config['ingest-storage.kafka.address'].split(','),
      topic: config['ingest-storage.kafka.topic'],
      partition: identity.partition,
      consumerGroup: identity.id,
      sessionTimeoutMs: config['ingest-storage.kafka.session-timeout'],
      startFrom: 'earliest',
      logger,
      onRecords,
    }),
});
const grpcAddress = `${config['server.grpc-listen-address']}:${config['server.grpc-listen-port']}`;
const grpc = new IngesterServer({ querier: ingester, address: grpcAddress });
const http = createHttpServer({ logger, registry, readiness: ingester });

await runServices(
  [
    { name: 'ingester', start: () => ingester.start(), stop: () => ingester.stop() },
    {
      name: 'grpc',
      start: async () => {
        await grpc.start();
        logger.info(`${identity.id} serving queries on grpc://${config['server.grpc-listen-address']}:${grpc.port}`);
      },
      stop: () => grpc.stop(),
    },
    {
      name: 'http',
      start: async () => {
        const host = config['server.http-listen-address'];
        const port = await listen(http, host, config['server.http-listen-port']);
        logger.info(`${identity.id} listening on http://${host}:${port} (/ready, /metrics)`);
      },
      stop: () => http.close(),
    },
  ],
  logger,
);
