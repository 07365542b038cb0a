// The UI's ingester pages: this ingester's partition, readiness, offsets and head
// (from its status()), and the tenants it holds with their ingestion rates.

import type { StatusPage } from '@strata/ui';
import type { Ingester } from './ingester.ts';

export function ingesterPage(ingester: Ingester): StatusPage {
  return {
    id: 'ingester',
    title: 'Ingester',
    module: 'ingester',
    sections: async () => {
      const s = await ingester.status();
      return [
        {
          title: `${s.id}: partition ${s.partition}`,
          fields: {
            zone: s.zone,
            partition: s.partition,
            state: s.state,
            ready: s.notReadyReason === undefined,
            'not ready because': s.notReadyReason ?? null,
            'replay progress': s.replay ? `${s.replay.consumed} of ${s.replay.end} records` : null,
            'lag (records)': s.lagRecords ?? null,
            'next offset': s.nextOffset ?? null,
            'committed offset': s.committedOffset,
            'in-memory series': s.series,
            tenants: s.tenants,
            'local blocks': s.localBlocks,
          },
        },
      ];
    },
  };
}

export function tenantsPage(ingester: Ingester): StatusPage {
  return {
    id: 'tenants',
    title: 'Tenants',
    module: 'ingester',
    sections: () => [
      {
        title: 'Tenants in this ingester',
        note: `Partition ${ingester.identity.partition} only; /api/v1/user_stats sums one ingester per partition for a tenant. Ingestion rate: samples/s, a 15s EWMA.`,
        rows: ingester.allUserStats().map((u) => ({
          tenant: u.tenant,
          'active series': u.numSeries,
          'ingestion rate': u.ingestionRate,
          'API ingestion rate': u.apiIngestionRate,
          'rule ingestion rate': u.ruleIngestionRate,
        })),
      },
    ],
  };
}
