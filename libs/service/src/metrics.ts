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

/** Request latency buckets (seconds) of every push and query histogram, so dashboards compare like with like. */
export const REQUEST_LATENCY_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
