// One prom-client registry per process, passed to every part that records metrics. It is an
// OpenMetrics registry so latency histograms can carry exemplars; /metrics renders it in
// whichever format the scraper asks for (exposition.ts).

import { Registry, collectDefaultMetrics, type OpenMetricsContentType } from 'prom-client';

export function createMetricsRegistry(labels: Record<string, string> = {}): Registry {
  const registry = new Registry();
  // Typed as the plain Registry every lib takes; only the content type (checked at runtime) differs.
  (registry as unknown as Registry<OpenMetricsContentType>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  registry.setDefaultLabels(labels);
  collectDefaultMetrics({ register: registry });
  return registry;
}
