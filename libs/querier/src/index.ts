export { PartitionQuerier, PartitionUnavailableError } from './partition-querier.ts';
export type { IngesterReplica, PartitionQuerierOptions } from './partition-querier.ts';
export { mergeSeries } from './merge.ts';
export { registerPrometheusApi } from './api.ts';
export type { PrometheusApiOptions } from './api.ts';
export { ApiError } from './errors.ts';
export { querierConfigShape, parseIngesterAddresses } from './config.ts';
export type { QuerierConfig, IngesterAddress } from './config.ts';
