export { IngesterServer } from './server.ts';
export type { IngesterServerOptions, OffsetWaiter, ServedQuerier } from './server.ts';
export { IngesterClient } from './client.ts';
export type { IngesterClientOptions } from './client.ts';
export { GRPC_STATUS, KIND_OF_GRPC_STATUS, toGrpcStatus, fromGrpcError } from './grpc-status.ts';
