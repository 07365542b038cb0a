export { registerQueryFrontend, READ_ENDPOINTS } from './frontend.ts';
export type { QueryFrontendOptions } from './frontend.ts';
