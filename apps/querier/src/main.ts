// Querier process: the Prometheus HTTP API over one healthy ingester per partition.

import { Engine } from '@strata/promql';
import { IngesterClient } from '@strata/ingester-rpc';
import { parseInstanceId } from '@strata/ingester';
import { PartitionQuerier, parseIngesterAddresses, querierConfigShape, registerPrometheusApi } from '@strata/querier';
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

const logger = createLogger('querier');
const config = flagsToConfig(
  { ...serverConfigShape, ...querierConfigShape, 'auth.multitenancy-enabled': boolFlag(true) },
  parseFlags(process.argv.slice(2)),
);
const registry = createMetricsRegistry({ component: 'querier' });

const clients = parseIngesterAddresses(config['querier.ingester-addresses']).map(({ id, address }) => ({
  ...parseInstanceId(id),
  client: new IngesterClient({ id, address, timeoutMs: config['querier.ingester-timeout'] }),
}));
if (clients.length === 0) logger.warn('no ingesters configured (-querier.ingester-addresses); every query will be empty');
const querier = new PartitionQuerier({
  replicas: clients.map((c) => ({ id: c.id, zone: c.zone, partition: c.partition, querier: c.client })),
  preferredZone: config['querier.prefer-availability-zone'],
  logger,
});
const engine = new Engine({
  querier,
  lookbackDeltaMs: config['querier.lookback-delta'],
  maxSamples: config['querier.max-samples'],
  timeoutMs: config['querier.timeout'],
});
const http = createHttpServer({ logger, registry, readiness: { notReadyReason: () => undefined } });
registerPrometheusApi(http, {
  querier,
  engine,
  multitenancyEnabled: config['auth.multitenancy-enabled'],
  logger,
  registry,
  prefixes: ['/api/v1', '/prometheus/api/v1'],
});

await runServices(
  [
    {
      name: 'http',
      start: async () => {
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
      },
    },
  ],
  logger,
);
