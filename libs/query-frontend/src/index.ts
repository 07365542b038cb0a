export { registerQueryFrontend, READ_ENDPOINTS } from './frontend.ts';
export type { QueryFrontendOptions } from './frontend.ts';
export { queryFrontendConfigShape } from './config.ts';
export type { QueryFrontendConfig } from './config.ts';
