export { Distributor } from './distributor.ts';
export type { DistributorOptions, PushRequest, PushResult, RecordWriter, WrittenCounts } from './distributor.ts';
export { DistributorError } from './errors.ts';
export { registerPushRoutes } from './http.ts';
export type { PushRoutesOptions } from './http.ts';
export { seriesToken } from './sharding.ts';
export { distributorConfigShape, instanceLimitsFromConfig } from './config.ts';
export type { InstanceLimits } from './instance-limits.ts';
export type { DistributorConfig } from './config.ts';
