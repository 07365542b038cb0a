// Distributor process: remote-write in, one acked Kafka record per partition out.

import { IngestWriter, kafkaConfigShape } from '@strata/kafka';
import { Distributor, distributorConfigShape, registerPushRoutes } from '@strata/distributor';
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

const logger = createLogger('distributor');
const config = flagsToConfig({ ...serverConfigShape, ...kafkaConfigShape, ...distributorConfigShape }, parseFlags(process.argv.slice(2)));
const registry = createMetricsRegistry({ component: 'distributor' });

const writer = new IngestWriter({
  brokers: config['ingest-storage.kafka.address'].split(','),
  topic: config['ingest-storage.kafka.topic'],
  clientId: `${config['ingest-storage.kafka.client-id']}-distributor`,
  timeoutMs: config['ingest-storage.kafka.write-timeout'],
  logger,
});
const distributor = new Distributor({ writer, maxRecvMsgSize: config['distributor.max-recv-msg-size'], logger, registry });
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
});

await runServices(
  [
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
        logger.info({ port }, `distributor listening on http://${host}:${port} (POST /api/v1/push, /ready, /metrics)`);
      },
      stop: () => http.close(),
    },
  ],
  logger,
);
