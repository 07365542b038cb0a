// A querier's workers (Mimir's querier worker): -querier.max-concurrent streams to the
// scheduler, each saying it is ready, running the one query it is sent, answering the
// frontend that enqueued it directly, and saying it is ready again. A broken stream is
// opened again with backoff; connected() tells /ready whether the scheduler is reachable.

import * as grpc from '@grpc/grpc-js';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CHANNEL_OPTIONS,
  schedulerServices,
  type QuerierToScheduler,
  type QueryResultRequest,
  type SchedulerToQuerier,
  type WireHttpRequest,
  type WireHttpResponse,
} from './wire.ts';

/** Runs one query's HTTP request for `tenant` and returns the answer (never throws for a query's own failure). */
export type QueryHandler = (tenant: string, request: WireHttpRequest) => Promise<WireHttpResponse>;

export interface QuerierWorkerOptions {
  /** host:port of the query-scheduler, or of a frontend that queues itself. */
  schedulerAddress: string;
  querierId: string;
  /** Queries this querier runs at once (-querier.max-concurrent): one stream each. */
  maxConcurrent: number;
  handle: QueryHandler;
  logger?: { warn(obj: object, msg: string): void };
}

const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5_000;

type QuerierLoopClient = grpc.Client & { QuerierLoop(): grpc.ClientDuplexStream<QuerierToScheduler, SchedulerToQuerier> };
type ResultClient = grpc.Client & {
  QueryResult(r: QueryResultRequest, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null) => void): void;
};

export class QuerierWorker {
  private readonly opts: QuerierWorkerOptions;
  private readonly client: QuerierLoopClient;
  private readonly frontends = new Map<string, ResultClient>();
  private readonly streams = new Set<grpc.ClientDuplexStream<QuerierToScheduler, SchedulerToQuerier>>();
  /** Streams running a query: stop() lets them finish it. */
  private readonly busy = new Set<grpc.ClientDuplexStream<QuerierToScheduler, SchedulerToQuerier>>();
  private stopped = false;
  private loops: Promise<void>[] = [];

  constructor(opts: QuerierWorkerOptions) {
    this.opts = opts;
    this.client = new (schedulerServices().SchedulerForQuerier)(
      opts.schedulerAddress,
      grpc.credentials.createInsecure(),
      CHANNEL_OPTIONS,
    ) as unknown as QuerierLoopClient;
  }

  start(): void {
    this.loops = Array.from({ length: this.opts.maxConcurrent }, () => this.loop());
  }

  /** Whether the connection to the scheduler is up. */
  connected(): boolean {
    return this.client.getChannel().getConnectivityState(true) === grpc.connectivityState.READY;
  }

  /** Takes no more queries; the running ones finish and answer (for `drainMs` at most) before the streams close. */
  async stop(drainMs = 30_000): Promise<void> {
    this.stopped = true;
    for (const s of this.streams) if (!this.busy.has(s)) s.end();
    const drained = Promise.all(this.loops);
    const timer = setTimeout(() => {
      for (const s of this.streams) s.end();
    }, drainMs);
    await drained;
    clearTimeout(timer);
    this.client.close();
    for (const c of this.frontends.values()) c.close();
  }

  private async loop(): Promise<void> {
    let backoff = BACKOFF_MIN_MS;
    while (!this.stopped) {
      const began = Date.now();
      try {
        await this.runStream();
      } catch (err) {
        if (!this.stopped)
          this.opts.logger?.warn(
            { scheduler: this.opts.schedulerAddress, err: (err as Error).message },
            'querier worker stream to the scheduler broke; reconnecting',
          );
      }
      if (this.stopped) return;
      backoff = Date.now() - began > BACKOFF_MAX_MS ? BACKOFF_MIN_MS : Math.min(backoff * 2, BACKOFF_MAX_MS);
      await sleep(backoff);
    }
  }

  /** One stream until it ends: ready, a query, its answer to the frontend, ready again. */
  private runStream(): Promise<void> {
    return new Promise((resolve, reject) => {
      const call = this.client.QuerierLoop();
      this.streams.add(call);
      const ready = () => {
        if (!this.stopped) call.write({ querier_id: this.opts.querierId });
        else call.end();
      };
      call.on('data', (m: SchedulerToQuerier) => {
        this.busy.add(call);
        void this.run(m).finally(() => {
          this.busy.delete(call);
          ready();
        });
      });
      call.on('error', (err) => {
        this.streams.delete(call);
        reject(err);
      });
      call.on('end', () => {
        this.streams.delete(call);
        resolve();
      });
      ready();
    });
  }

  private async run(m: SchedulerToQuerier): Promise<void> {
    const response = await this.opts.handle(m.user_id, m.http_request).catch((err: Error): WireHttpResponse => ({
      code: 500,
      headers: [{ key: 'content-type', values: ['application/json'] }],
      body: Buffer.from(JSON.stringify({ status: 'error', errorType: 'internal', error: err.message })),
    }));
    const result: QueryResultRequest = { query_id: m.query_id, http_response: response, querier_id: this.opts.querierId, queue_time_ms: m.queue_time_ms };
    await new Promise<void>((resolve) =>
      this.frontend(m.frontend_address).QueryResult(result, { deadline: Date.now() + 30_000 }, (err) => {
        if (err) this.opts.logger?.warn({ frontend: m.frontend_address, err: err.message }, 'could not send a query result to its frontend');
        resolve();
      }),
    );
  }

  private frontend(address: string): ResultClient {
    let c = this.frontends.get(address);
    if (c === undefined) {
      c = new (schedulerServices().FrontendForQuerier)(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS) as unknown as ResultClient;
      this.frontends.set(address, c);
    }
    return c;
  }
}
