// The query-scheduler module: the per-tenant fair queue between query-frontends and querier
// workers, served on the process' gRPC server.

import { QueryScheduler, querySchedulerPage } from '@strata/query-scheduler';
import type { Service } from '@strata/service';
import type { Strata } from '@strata/runtime';

export function initQueryScheduler(t: Strata): Service[] {
  const maxOutstanding = t.config['query-scheduler.max-outstanding-requests-per-tenant'];
  const scheduler = new QueryScheduler({ maxOutstandingPerTenant: maxOutstanding, registry: t.registry, logger: t.logger });
  scheduler.addTo(t.grpc.server);
  t.statusPages.push(querySchedulerPage(scheduler, maxOutstanding));
  return [
    {
      name: 'query-scheduler',
      start: async () => {
        const port = await t.grpc.start();
        t.logger.info(`query-scheduler queueing queries on grpc://${t.config['server.grpc-listen-address']}:${port}`);
      },
      stop: async () => {
        scheduler.stop();
        await t.grpc.stop();
      },
    },
  ];
}
