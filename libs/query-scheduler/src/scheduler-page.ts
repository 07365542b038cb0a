// The UI's query-scheduler page: each tenant's waiting queries and the connected queriers.

import type { StatusPage } from '@strata/ui';
import type { QueryScheduler } from './scheduler.ts';

export function querySchedulerPage(scheduler: QueryScheduler, maxOutstandingPerTenant: number): StatusPage {
  return {
    id: 'query-scheduler',
    title: 'Query-scheduler',
    module: 'query-scheduler',
    sections: () => {
      const q = scheduler.queue;
      const queriers = [...q.connectedQueriers()].sort(([a], [b]) => a.localeCompare(b));
      return [
        {
          title: 'Queue',
          fields: {
            'waiting queries': [...q.lengths().values()].reduce((a, b) => a + b, 0),
            'idle querier workers': q.waitingWorkers(),
            'max outstanding per tenant': maxOutstandingPerTenant === 0 ? 'no limit' : maxOutstandingPerTenant,
          },
        },
        {
          title: 'Waiting queries by tenant',
          note: 'Tenants are served round-robin: one query of each waiting tenant in turn.',
          rows: [...q.lengths()].sort(([a], [b]) => a.localeCompare(b)).map(([tenant, waiting]) => ({ tenant, waiting })),
        },
        { title: 'Connected queriers', rows: queriers.map(([querier, workers]) => ({ querier, 'worker streams': workers })) },
      ];
    },
  };
}
