// Public surface of @strata/limits: per-tenant limits from flags and the runtime overrides file.
export { Overrides } from './overrides.ts';
export type { OverridesOptions } from './overrides.ts';
export { overridesPage } from './overrides-page.ts';
export { LocalRateLimiter } from './rate-limiter.ts';
export type { RateDecision } from './rate-limiter.ts';
export { applyOverrides, localLimit, runtimeConfigSchema, tenantOverridesSchema } from './limits.ts';
export type { BlockedQuery, RuntimeConfig, TenantLimits, TenantOverrides } from './limits.ts';
export { DEFAULT_LIMITS, defaultLimitsFromFlags, limitsConfigShape, runtimeConfigShape } from './config.ts';
export type { LimitsConfig, RuntimeConfigFlags } from './config.ts';
export { ingesterLimits } from './ingester-limits.ts';
export type { IngesterLimitsView } from './ingester-limits.ts';
