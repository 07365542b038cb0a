// One prom-client registry per process, passed to every part that records metrics.

import { Registry, collectDefaultMetrics } from 'prom-client';

export function createMetricsRegistry(labels: Record<string, string> = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels(labels);
  collectDefaultMetrics({ register: registry });
  return registry;
}
