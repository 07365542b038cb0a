export { LocalCluster } from './local-cluster.ts';
export type { LocalClusterOptions } from './local-cluster.ts';
export { AppProcess } from './app-process.ts';
export type { AppProcessOptions } from './app-process.ts';
export { freePorts } from './free-ports.ts';
export { LocalRedis } from './local-redis.ts';
