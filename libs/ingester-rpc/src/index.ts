export { IngesterServer } from './server.ts';
export type { IngesterServerOptions } from './server.ts';
export { IngesterClient } from './client.ts';
export type { IngesterClientOptions } from './client.ts';
