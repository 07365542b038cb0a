// Public surface of @strata/runtime: what the modules of the one binary share.
export { FLAG_GROUPS, YAML_PATHS, strataConfigShape } from './config.ts';
export type { StrataConfig } from './config.ts';
export { Strata } from './strata.ts';
export type { ProcessConfig } from './strata.ts';
export type { ProcessGrpc } from './process-grpc.ts';
export { failureSignal } from './module.ts';
export type { ModuleInit, StrataModule } from './module.ts';
export { configPage, servicesPage } from './process-pages.ts';
