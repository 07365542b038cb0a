// The query-scheduler's metrics (Mimir's cortex_query_scheduler_* under Strata's prefix).

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export class SchedulerMetrics {
  readonly queueLength: Gauge<'user'>;
  readonly queueDuration: Histogram<'user'>;
  readonly inflight: Gauge<'user'>;
  readonly connectedQueriers: Gauge;
  readonly discarded: Counter<'user' | 'reason'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.queueLength = new Gauge({
      name: 'strata_query_scheduler_queue_length',
      help: 'Queries waiting in the queue, per tenant.',
      labelNames: ['user'],
      registers,
    });
    this.queueDuration = new Histogram({
      name: 'strata_query_scheduler_queue_duration_seconds',
      help: 'Time a query waited in the queue before a querier took it, per tenant.',
      labelNames: ['user'],
      buckets: [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.inflight = new Gauge({
      name: 'strata_query_scheduler_inflight_requests',
      help: 'Queries a querier took and has not answered yet, per tenant.',
      labelNames: ['user'],
      registers,
    });
    this.connectedQueriers = new Gauge({
      name: 'strata_query_scheduler_connected_querier_clients',
      help: 'Querier worker connections (a querier holds -querier.max-concurrent of them).',
      registers,
    });
    this.discarded = new Counter({
      name: 'strata_query_scheduler_discarded_requests_total',
      help: 'Queries refused or dropped by the scheduler, per tenant and reason (too-many-outstanding, canceled, querier-gone, shutdown).',
      labelNames: ['user', 'reason'],
      registers,
    });
  }
}
