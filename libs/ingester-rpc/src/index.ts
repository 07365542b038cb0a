export { IngesterServer } from './server.ts';
export type { IngesterServerOptions, OffsetWaiter, ServedQuerier } from './server.ts';
export { IngesterClient } from './client.ts';
export type { IngesterClientOptions } from './client.ts';
