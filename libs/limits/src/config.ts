// Default per-tenant limits as flags (Mimir's names and defaults, except where
// said) and the runtime config file that overrides them per tenant.

import { z } from 'zod';
import { boolFlag, duration } from '@strata/service';
import type { TenantLimits } from './limits.ts';

const count = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);
const positive = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const limitsConfigShape = {
  'distributor.ingestion-rate-limit': z.coerce.number().nonnegative().default(10_000),
  'distributor.ingestion-burst-size': count(200_000),
  'ingester.max-global-series-per-user': count(150_000),
  'validation.max-label-names-per-series': positive(30),
  'validation.max-length-label-name': positive(1024),
  'validation.max-length-label-value': positive(2048),
  'validation.max-metadata-length': positive(1024),
  'validation.create-grace-period': duration('10m'),
  'validation.past-grace-period': duration('0s'),
  'ingester.out-of-order-time-window': duration('0s'),
  // Mimir's default is 0 (exemplars off); Strata keeps them by default because linking a graph
  // to a trace is a core use, and 100000 is the head's own default ring size.
  'ingester.max-global-exemplars-per-user': count(100_000),
  'distributor.ha-tracker.enable-for-all-users': boolFlag(false),
  'distributor.ha-tracker.cluster': z.string().min(1).default('cluster'),
  'distributor.ha-tracker.replica': z.string().min(1).default('__replica__'),
  'distributor.ha-tracker.max-clusters': count(100),
};

export const runtimeConfigShape = {
  /** Mimir's runtime config file: `overrides: { <tenant>: { <limit>: value } }`. Empty: defaults only. */
  'runtime-config.file': z.string().default(''),
  'runtime-config.reload-period': duration('10s'),
};

export type LimitsConfig = z.infer<z.ZodObject<typeof limitsConfigShape>>;
export type RuntimeConfigFlags = z.infer<z.ZodObject<typeof runtimeConfigShape>>;

export function defaultLimitsFromFlags(c: LimitsConfig): TenantLimits {
  return {
    ingestionRate: c['distributor.ingestion-rate-limit'],
    ingestionBurstSize: c['distributor.ingestion-burst-size'],
    maxGlobalSeriesPerUser: c['ingester.max-global-series-per-user'],
    maxLabelNamesPerSeries: c['validation.max-label-names-per-series'],
    maxLabelNameLength: c['validation.max-length-label-name'],
    maxLabelValueLength: c['validation.max-length-label-value'],
    maxMetadataLength: c['validation.max-metadata-length'],
    creationGracePeriodMs: c['validation.create-grace-period'],
    pastGracePeriodMs: c['validation.past-grace-period'],
    outOfOrderTimeWindowMs: c['ingester.out-of-order-time-window'],
    maxGlobalExemplarsPerUser: c['ingester.max-global-exemplars-per-user'],
    acceptHaSamples: c['distributor.ha-tracker.enable-for-all-users'],
    haClusterLabel: c['distributor.ha-tracker.cluster'],
    haReplicaLabel: c['distributor.ha-tracker.replica'],
    haMaxClusters: c['distributor.ha-tracker.max-clusters'],
  };
}

/** The flag defaults alone, as a parse of no flags would give. */
export const DEFAULT_LIMITS: Readonly<TenantLimits> = Object.freeze(defaultLimitsFromFlags(z.object(limitsConfigShape).parse({})));
