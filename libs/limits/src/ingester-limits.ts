// An ingester's share of a tenant's limits: global limits divided over the
// partitions (each ingester of a zone owns one), read per call so runtime
// overrides and partition changes apply. Matches @strata/ingester's IngesterLimits.

import { localLimit } from './limits.ts';
import type { Overrides } from './overrides.ts';

export interface IngesterLimitsView {
  outOfOrderTimeWindowMs(tenant: string): number;
  /** Exemplar ring size: max_global_exemplars_per_user / partitions (0: exemplars off). */
  maxExemplars(tenant: string): number;
  /** max_global_series_per_user / partitions (0: no limit). */
  maxSeries(tenant: string): number;
}

export function ingesterLimits(overrides: Overrides, partitions: () => number): IngesterLimitsView {
  return {
    outOfOrderTimeWindowMs: (tenant) => overrides.forTenant(tenant).outOfOrderTimeWindowMs,
    maxExemplars: (tenant) => localLimit(overrides.forTenant(tenant).maxGlobalExemplarsPerUser, partitions()),
    maxSeries: (tenant) => localLimit(overrides.forTenant(tenant).maxGlobalSeriesPerUser, partitions()),
  };
}
