// Prometheus' TSDB admin API on the querier: POST /api/v1/admin/tsdb/delete_series
// records a delete request per match[] selector (204); readers drop the
// covered samples, the compactor removes them from blocks.

import type { Tombstone } from '@strata/model';
import type { ExtraRoute, RequestContext } from './api.ts';
import { matchParams, range } from './params.ts';

/** Where delete requests go: the bucket's deletion requests, and the ingesters' heads if wired. */
export interface SeriesDeleter {
  deleteSeries(tenant: string, tombstones: Tombstone[]): Promise<unknown>;
}

export function adminRoutes(deleters: SeriesDeleter[]): ExtraRoute[] {
  const deleteSeries = async ({ params, tenant }: RequestContext) => {
    const sets = matchParams(params, true);
    const { mint, maxt } = range(params);
    const tombstones = sets.map((matchers) => ({ matchers, mint, maxt }));
    for (const d of deleters) await d.deleteSeries(tenant, tombstones);
    return { raw: true as const, status: 204 };
  };
  return [{ endpoint: 'delete_series', path: '/admin/tsdb/delete_series', methods: ['POST', 'PUT'], handler: deleteSeries }];
}
