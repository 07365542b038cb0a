// The Prometheus API's own metrics (Mimir keeps a component's metrics in their own file and struct).

import { Counter, Histogram, type Registry } from 'prom-client';
import { REQUEST_LATENCY_BUCKETS, exemplarsEnabled } from '@strata/service';

export class ApiMetrics {
  readonly latency: Histogram<'endpoint' | 'status'>;
  readonly canceled: Counter<'endpoint'>;

  constructor(registry: Registry) {
    this.latency = new Histogram({
      name: 'strata_querier_request_duration_seconds',
      help: 'Query API latency by endpoint and status code.',
      labelNames: ['endpoint', 'status'],
      buckets: [...REQUEST_LATENCY_BUCKETS],
      enableExemplars: exemplarsEnabled(registry),
      registers: [registry],
    });
    this.canceled = new Counter({
      name: 'strata_querier_queries_canceled_total',
      help: 'Queries stopped before they answered because their client went away; downstream reads are canceled with them.',
      labelNames: ['endpoint'],
      registers: [registry],
    });
  }
}
