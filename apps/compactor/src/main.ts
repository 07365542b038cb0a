// Compactor process: merges the zones' blocks, compacts levels, applies
// retention and deletions, and keeps every tenant's bucket index current.

import { Compactor, compactorConfigShape, retentionByTenant } from '@strata/compactor';
import { bucketConfigShape, createBucket } from '@strata/objstore';
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

const config = flagsToConfig({ ...serverConfigShape, ...bucketConfigShape, ...compactorConfigShape }, parseFlags(process.argv.slice(2)));
const logger = createLogger('compactor');
const registry = createMetricsRegistry({ component: 'compactor' });
const bucket = createBucket(config);
const compactor = new Compactor({
  bucket,
  logger,
  registry,
  dataDir: config['compactor.data-dir'],
  ranges: config['compactor.block-ranges'],
  compactionIntervalMs: config['compactor.compaction-interval'],
  cleanupIntervalMs: config['compactor.cleanup-interval'],
  deletionDelayMs: config['compactor.deletion-delay'],
  firstLevelWaitMs: config['compactor.first-level-compaction-wait-period'],
  retentionMs: retentionByTenant(config['compactor.blocks-retention-period'], config['compactor.tenant-blocks-retention-periods']),
  partialBlockDeletionDelayMs: config['compactor.partial-block-deletion-delay'],
  enabledTenants: config['compactor.enabled-tenants'].split(',').map((t) => t.trim()).filter((t) => t !== ''),
});
const http = createHttpServer({ logger, registry, readiness: { notReadyReason: () => undefined } });

await runServices(
  [
    {
      name: 'http',
      start: async () => {
        const host = config['server.http-listen-address'];
        const port = await listen(http, host, config['server.http-listen-port']);
        logger.info(`compactor listening on http://${host}:${port} (/ready, /metrics); bucket ${bucket.name}`);
      },
      stop: () => http.close(),
    },
    {
      name: 'compactor',
      start: () => compactor.start(),
      stop: async () => {
        await compactor.stop();
        await bucket.close();
      },
    },
  ],
  logger,
);
