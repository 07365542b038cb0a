// The compactor module: merges the zones' blocks, compacts levels, applies
// retention and deletions, and keeps every tenant's bucket index current.

import { join } from 'node:path';
import { BlockUploads, Compactor, compactorPage, registerBlockUploadApi, registerTenantDeletionApi, retentionByTenant } from '@strata/compactor';
import { Deletions } from '@strata/storegateway';
import type { Service } from '@strata/service';
import type { Strata } from '@strata/runtime';

export function initCompactor(t: Strata): Service[] {
  const { config } = t;
  const retentionMs = retentionByTenant(config['compactor.blocks-retention-period'], config['compactor.tenant-blocks-retention-periods']);
  const compactor = new Compactor({
    bucket: t.bucket,
    logger: t.logger,
    registry: t.registry,
    dataDir: config['compactor.data-dir'],
    ranges: config['compactor.block-ranges'],
    compactionIntervalMs: config['compactor.compaction-interval'],
    cleanupIntervalMs: config['compactor.cleanup-interval'],
    deletionDelayMs: config['compactor.deletion-delay'],
    firstLevelWaitMs: config['compactor.first-level-compaction-wait-period'],
    retentionMs,
    partialBlockDeletionDelayMs: config['compactor.partial-block-deletion-delay'],
    enabledTenants: config['compactor.enabled-tenants']
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== ''),
  });
  t.statusPages.push(compactorPage(compactor));
  // Mimir's tenant deletion API; the cache is the querier's when it runs here too, so its answers stop at once.
  const deletions = (t.deletions ??= new Deletions({ bucket: t.bucket, syncIntervalMs: config['querier.deletion-requests-sync-interval'] }));
  registerTenantDeletionApi(t.http, { bucket: t.bucket, deletions, multitenancyEnabled: config['auth.multitenancy-enabled'], auth: t.auth });
  // Mimir's block-upload API (mimirtool backfill); a published block goes into the bucket index at once.
  const ranges = config['compactor.block-ranges'];
  const uploads = new BlockUploads({
    bucket: t.bucket,
    logger: t.logger,
    registry: t.registry,
    limits: (tenant) => {
      const l = t.overrides.forTenant(tenant);
      return {
        enabled: l.compactorBlockUploadEnabled,
        validationEnabled: l.compactorBlockUploadValidationEnabled,
        verifyChunks: l.compactorBlockUploadVerifyChunks,
        maxBlockSizeBytes: l.compactorBlockUploadMaxBlockSizeBytes,
        retentionMs: retentionMs(tenant),
      };
    },
    maxRangeMs: ranges[ranges.length - 1],
    maxConcurrentValidations: config['compactor.max-block-upload-validation-concurrency'],
    scratchDir: join(config['compactor.data-dir'], 'uploads'),
    onComplete: (tenant) => compactor.updateIndex(tenant),
  });
  registerBlockUploadApi(t.http, { uploads, multitenancyEnabled: config['auth.multitenancy-enabled'], auth: t.auth, logger: t.logger });
  t.endpoints.push(`compactor on bucket ${t.bucket.name}`, 'block upload $BASE/api/v1/upload/block/');
  return [
    { name: 'compactor', start: () => compactor.start(), stop: () => compactor.stop() },
    { name: 'block-uploads', start: async () => undefined, stop: () => uploads.stop() },
  ];
}
