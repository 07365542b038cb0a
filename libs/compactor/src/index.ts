export { Compactor } from './compactor.ts';
export type { CompactorOptions, CompactorRun, CompactorStatus, TenantRunStats } from './compactor.ts';
export { compactorPage } from './compactor-page.ts';
export { planCompaction, overlappingGroups, splitByRange } from './planner.ts';
export type { PlanBlock, PlanOptions } from './planner.ts';
export { compactorConfigShape, retentionByTenant } from './config.ts';
export type { CompactorConfig } from './config.ts';
export { registerTenantDeletionApi } from './tenant-deletion-api.ts';
export type { TenantDeletionApiOptions } from './tenant-deletion-api.ts';
