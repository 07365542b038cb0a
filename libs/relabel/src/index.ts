// Public surface of @strata/relabel: Prometheus' relabel_configs, parsed and applied to label sets.
export { relabel } from './relabel.ts';
export type { RelabelRule, RelabelAction } from './relabel.ts';
export { relabelConfigsSchema } from './config.ts';
