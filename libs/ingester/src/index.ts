export { Ingester, NotReadyError } from './ingester.ts';
export type { IngesterOptions, IngestRecord, RecordSource } from './ingester.ts';
export { parseInstanceId } from './instance-id.ts';
export type { IngesterIdentity } from './instance-id.ts';
export { ingesterConfigShape } from './config.ts';
export type { IngesterConfig } from './config.ts';
