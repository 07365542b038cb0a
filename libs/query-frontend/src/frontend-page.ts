// The UI's query-frontend page: the queries running now and the slowest recent ones, per tenant.

import type { StatusPage } from '@strata/ui';
import type { LoggedQuery, QueryLog } from './query-log.ts';

const SLOWEST = 20;

function row(q: LoggedQuery, now: number): Record<string, string | number | null> {
  return {
    tenant: q.tenant,
    endpoint: q.path,
    query: q.query,
    'ms (wall)': q.wallMs ?? now - q.startedAt,
    'ms in queue': q.queueMs ?? null,
    series: q.series ?? null,
    samples: q.samples ?? null,
    'chunk bytes': q.chunkBytes ?? null,
    querier: q.querier ?? null,
    status: q.status ?? null,
    started: new Date(q.startedAt).toISOString(),
  };
}

export function queryFrontendPage(log: QueryLog, now: () => number = Date.now): StatusPage {
  return {
    id: 'query-frontend',
    title: 'Query-frontend',
    module: 'query-frontend',
    sections: () => [
      { title: 'Running queries', rows: log.active().map((q) => row(q, now())) },
      { title: `Slowest recent queries`, note: `The ${SLOWEST} slowest of the last 500 answered.`, rows: log.slowest(SLOWEST).map((q) => row(q, now())) },
    ],
  };
}
