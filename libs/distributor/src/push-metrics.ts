// The push routes' latency histograms (a component's metrics in their own file, as Mimir keeps them).

import { Histogram, type Registry } from 'prom-client';
import { REQUEST_LATENCY_BUCKETS, exemplarsEnabled } from '@strata/service';

export class PushMetrics {
  readonly latency: Histogram<'status'>;
  readonly otlpLatency: Histogram<'status'>;

  constructor(registry: Registry) {
    this.latency = new Histogram({
      name: 'strata_distributor_push_duration_seconds',
      help: 'Push request latency by status code.',
      labelNames: ['status'],
      buckets: [...REQUEST_LATENCY_BUCKETS],
      enableExemplars: exemplarsEnabled(registry),
      registers: [registry],
    });
    this.otlpLatency = new Histogram({
      name: 'strata_distributor_otlp_push_duration_seconds',
      help: 'OTLP metrics push latency by status code.',
      labelNames: ['status'],
      buckets: [...REQUEST_LATENCY_BUCKETS],
      enableExemplars: exemplarsEnabled(registry),
      registers: [registry],
    });
  }
}
