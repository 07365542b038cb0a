// The query-scheduler (Mimir's): frontends enqueue queries over FrontendLoop, querier workers
// pull them over QuerierLoop, one at a time per worker connection, tenants served round-robin
// (RequestQueue). The answer goes from the querier straight to the frontend; the scheduler
// only tells a frontend itself when a query it handed out can no longer be answered.

import * as grpc from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import { RequestQueue } from './request-queue.ts';
import { SchedulerMetrics } from './scheduler-metrics.ts';
import {
  CHANNEL_OPTIONS,
  schedulerServices,
  type FrontendToScheduler,
  type QuerierToScheduler,
  type QueryResultRequest,
  type SchedulerToFrontend,
  type SchedulerToQuerier,
  type WireHttpRequest,
} from './wire.ts';
import { StrataError } from '@strata/errors';

export interface QueuedQuery {
  frontendAddress: string;
  queryId: number;
  tenant: string;
  request: WireHttpRequest;
  statsEnabled: boolean;
}

export interface SchedulerOptions {
  /** -query-scheduler.max-outstanding-requests-per-tenant; 0: no limit. */
  maxOutstandingPerTenant: number;
  registry: Registry;
  logger?: { warn(obj: object, msg: string): void };
}

/** The scheduler's services, to add to a gRPC server (its own, or the frontend's when queriers connect to the frontend). */
export class QueryScheduler {
  readonly queue: RequestQueue<QueuedQuery>;
  private readonly metrics: SchedulerMetrics;
  private readonly opts: SchedulerOptions;
  private readonly frontends = new Map<string, grpc.Client>();
  private stopping = false;

  constructor(opts: SchedulerOptions) {
    this.opts = opts;
    this.queue = new RequestQueue<QueuedQuery>({ maxOutstandingPerTenant: opts.maxOutstandingPerTenant });
    this.metrics = new SchedulerMetrics(opts.registry);
  }

  /** Adds SchedulerForFrontend and SchedulerForQuerier to `server`. */
  addTo(server: grpc.Server): void {
    const s = schedulerServices();
    server.addService(s.SchedulerForFrontend.service, {
      FrontendLoop: (call: grpc.ServerDuplexStream<FrontendToScheduler, SchedulerToFrontend>) => this.frontendLoop(call),
    });
    server.addService(s.SchedulerForQuerier.service, {
      QuerierLoop: (call: grpc.ServerDuplexStream<QuerierToScheduler, SchedulerToQuerier>) => this.querierLoop(call),
    });
  }

  /** Refuses new queries, tells the frontends of every queued one to send it elsewhere, closes its clients. */
  stop(): void {
    this.stopping = true;
    for (const d of this.queue.stop()) {
      this.metrics.discarded.inc({ user: d.tenant, reason: 'shutdown' });
      this.answerWithError(d.item, 503, 'unavailable', 'the query-scheduler shut down before a querier took the query; retry it');
    }
    for (const c of this.frontends.values()) c.close();
    this.frontends.clear();
  }

  private frontendLoop(call: grpc.ServerDuplexStream<FrontendToScheduler, SchedulerToFrontend>): void {
    const addresses = new Set<string>();
    call.on('data', (m: FrontendToScheduler) => {
      if (m.frontend_address !== '') addresses.add(m.frontend_address);
      if (m.type === 'ENQUEUE') call.write(this.enqueue(m));
      else if (m.type === 'CANCEL') call.write(this.cancel(m));
      else call.write({ status: this.stopping ? 'SHUTTING_DOWN' : 'OK', error: '', query_id: 0 });
    });
    const gone = () => {
      for (const address of addresses) this.cancelFrontend(address);
    };
    call.on('end', () => {
      gone();
      call.end();
    });
    call.on('error', gone);
  }

  private enqueue(m: FrontendToScheduler): SchedulerToFrontend {
    const reply = (status: SchedulerToFrontend['status'], error = ''): SchedulerToFrontend => ({ status, error, query_id: m.query_id });
    if (this.stopping) return reply('SHUTTING_DOWN', 'the query-scheduler is shutting down');
    if (!m.http_request || m.user_id === '') return reply('ERROR', 'an enqueued query needs a tenant and a request');
    const q: QueuedQuery = {
      frontendAddress: m.frontend_address,
      queryId: m.query_id,
      tenant: m.user_id,
      request: m.http_request,
      statsEnabled: m.stats_enabled,
    };
    try {
      this.queue.enqueue(q.tenant, q, m.max_queriers);
    } catch (err) {
      if (err instanceof StrataError && err.kind === 'limit') {
        this.metrics.discarded.inc({ user: q.tenant, reason: 'too-many-outstanding' });
        return reply('TOO_MANY_REQUESTS_PER_TENANT', err.message);
      }
      return reply('ERROR', (err as Error).message);
    }
    this.updateQueueLength(q.tenant);
    return reply('OK');
  }

  private cancel(m: FrontendToScheduler): SchedulerToFrontend {
    const removed = this.queue.cancel(m.user_id, (q) => q.queryId === m.query_id && q.frontendAddress === m.frontend_address);
    if (removed) {
      this.metrics.discarded.inc({ user: m.user_id, reason: 'canceled' });
      this.updateQueueLength(m.user_id);
    }
    return { status: 'OK', error: '', query_id: m.query_id };
  }

  /** A frontend went away: its queued queries have nobody to answer to. */
  private cancelFrontend(address: string): void {
    for (const tenant of this.queue.lengths().keys()) {
      while (this.queue.cancel(tenant, (q) => q.frontendAddress === address)) this.metrics.discarded.inc({ user: tenant, reason: 'canceled' });
      this.updateQueueLength(tenant);
    }
  }

  private querierLoop(call: grpc.ServerDuplexStream<QuerierToScheduler, SchedulerToQuerier>): void {
    const worker = new WorkerConnection(this, call);
    call.on('data', (m: QuerierToScheduler) => worker.ready(m.querier_id));
    call.on('end', () => {
      worker.close();
      call.end();
    });
    call.on('error', () => worker.close());
    call.on('cancelled', () => worker.close());
  }

  /** @internal A worker took `q` after it waited `waitedMs`. */
  handedOut(q: QueuedQuery, waitedMs: number): void {
    this.metrics.queueDuration.observe({ user: q.tenant }, waitedMs / 1000);
    this.metrics.inflight.inc({ user: q.tenant });
    this.updateQueueLength(q.tenant);
  }

  /** @internal The worker that took `q` is ready again (it answered), or went away without answering. */
  finished(q: QueuedQuery, answered: boolean, querierId: string): void {
    this.metrics.inflight.dec({ user: q.tenant });
    if (answered) return;
    this.metrics.discarded.inc({ user: q.tenant, reason: 'querier-gone' });
    this.answerWithError(q, 503, 'unavailable', `querier ${querierId} went away while running the query; retry it`);
  }

  /** @internal */
  connected(delta: number): void {
    this.metrics.connectedQueriers.inc(delta);
  }

  private updateQueueLength(tenant: string): void {
    this.metrics.queueLength.set({ user: tenant }, this.queue.lengths().get(tenant) ?? 0);
  }

  /** Tells the frontend waiting for `q` that it will get no answer from a querier (Prometheus' error JSON). */
  private answerWithError(q: QueuedQuery, code: number, errorType: string, error: string): void {
    const body = Buffer.from(JSON.stringify({ status: 'error', errorType, error }));
    const result: QueryResultRequest = {
      query_id: q.queryId,
      http_response: { code, headers: [{ key: 'content-type', values: ['application/json'] }], body },
      querier_id: '',
      queue_time_ms: 0,
    };
    const client = this.frontendClient(q.frontendAddress) as unknown as {
      QueryResult(r: QueryResultRequest, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null) => void): void;
    };
    client.QueryResult(result, { deadline: Date.now() + 10_000 }, (err) => {
      if (err) this.opts.logger?.warn({ frontend: q.frontendAddress, err: err.message }, 'could not tell the frontend its query failed');
    });
  }

  private frontendClient(address: string): grpc.Client {
    let c = this.frontends.get(address);
    if (c === undefined) {
      c = new (schedulerServices().FrontendForQuerier)(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
      this.frontends.set(address, c);
    }
    return c;
  }
}

/** One querier worker's stream: each ready message takes the next query this querier may run. */
class WorkerConnection {
  private querierId: string | undefined;
  private current: QueuedQuery | undefined;
  private readonly abort = new AbortController();
  private closed = false;
  private readonly scheduler: QueryScheduler;
  private readonly call: grpc.ServerDuplexStream<QuerierToScheduler, SchedulerToQuerier>;

  constructor(scheduler: QueryScheduler, call: grpc.ServerDuplexStream<QuerierToScheduler, SchedulerToQuerier>) {
    this.scheduler = scheduler;
    this.call = call;
  }

  ready(querierId: string): void {
    if (this.closed) return;
    if (this.current !== undefined) {
      this.scheduler.finished(this.current, true, querierId);
      this.current = undefined;
    }
    if (this.querierId === undefined) {
      this.querierId = querierId;
      this.scheduler.queue.registerQuerier(querierId);
      this.scheduler.connected(1);
    }
    this.scheduler.queue.next(querierId, this.abort.signal).then(
      (d) => this.send(d.item, d.waitedMs),
      (err: Error) => {
        // Aborted: the stream is gone already. Stopped: tell the worker to look for another scheduler.
        if (!this.closed) this.call.emit('error', Object.assign(new Error(err.message), { code: grpc.status.UNAVAILABLE }));
      },
    );
  }

  private send(q: QueuedQuery, waitedMs: number): void {
    this.scheduler.handedOut(q, waitedMs);
    this.current = q;
    if (this.closed) {
      this.close();
      return;
    }
    this.call.write({
      query_id: q.queryId,
      http_request: q.request,
      frontend_address: q.frontendAddress,
      user_id: q.tenant,
      stats_enabled: q.statsEnabled,
      queue_time_ms: Math.round(waitedMs),
    });
  }

  close(): void {
    const first = !this.closed;
    this.closed = true;
    this.abort.abort(new Error('the querier worker disconnected'));
    if (this.current !== undefined) {
      this.scheduler.finished(this.current, false, this.querierId ?? 'unknown');
      this.current = undefined;
    }
    if (first && this.querierId !== undefined) {
      this.scheduler.queue.unregisterQuerier(this.querierId);
      this.scheduler.connected(-1);
    }
  }
}
