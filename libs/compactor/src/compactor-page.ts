// The UI's compactor page: the last compaction and cleanup runs and each tenant's
// blocks, from the compactor's status (its bucket indexes) when the page is opened.

import type { StatusPage, StatusValue } from '@strata/ui';
import type { Compactor, CompactorRun } from './compactor.ts';

const iso = (ms: number | undefined): string | null => (ms === undefined || !Number.isFinite(ms) ? null : new Date(ms).toISOString());

function run(r: CompactorRun | undefined): Record<string, StatusValue> {
  if (!r) return { started: 'not yet' };
  return {
    started: iso(r.startedAt),
    finished: r.finishedAt === undefined ? 'running' : iso(r.finishedAt),
    tenants: r.tenants,
    'failed tenants': r.failedTenants,
  };
}

export function compactorPage(compactor: Compactor): StatusPage {
  return {
    id: 'compactor',
    title: 'Compactor',
    module: 'compactor',
    sections: async () => {
      const s = await compactor.status();
      return [
        { title: 'Last compaction', fields: run(s.lastCompaction) },
        { title: 'Last cleanup', fields: run(s.lastCleanup) },
        {
          title: 'Blocks by tenant',
          note: "From each tenant's bucket index.",
          rows: s.tenants.map((t) => ({
            tenant: t.tenant,
            blocks: t.blocks,
            'marked for deletion': t.markedForDeletion,
            'max level': t.maxCompactionLevel,
            from: iso(t.minTime),
            to: iso(t.maxTime),
            'index updated': iso(t.indexUpdatedAt),
          })),
        },
      ];
    },
  };
}
