// The frontend's end of the queue protocol (Mimir's frontend v2): one FrontendLoop stream to
// the scheduler that enqueues and cancels queries, and the FrontendForQuerier service the
// queriers send answers to. roundTrip() is one query: enqueue, wait for its answer.

import * as grpc from '@grpc/grpc-js';
import { StrataError } from '@strata/errors';
import {
  CHANNEL_OPTIONS,
  schedulerServices,
  type FrontendToScheduler,
  type QueryResultRequest,
  type SchedulerToFrontend,
  type WireHttpRequest,
  type WireHttpResponse,
} from './wire.ts';

export interface FrontendTransportOptions {
  /** host:port of the query-scheduler. */
  schedulerAddress: string;
  /** host:port queriers reach this frontend's gRPC server at (asked per query: known once the server is bound). */
  frontendAddress: string | (() => string);
}

export interface RoundTripOptions {
  /** The tenant's max queriers (-query-frontend.max-queriers-per-tenant); 0: all. */
  maxQueriers?: number;
  statsEnabled?: boolean;
  signal?: AbortSignal;
}

/** A query's answer and where it ran. */
export interface RoundTripResult {
  response: WireHttpResponse;
  querierId: string;
  queueTimeMs: number;
}

type LoopClient = grpc.Client & { FrontendLoop(): grpc.ClientDuplexStream<FrontendToScheduler, SchedulerToFrontend> };

interface Pending {
  tenant: string;
  enqueued(reply: SchedulerToFrontend): void;
  answered(r: RoundTripResult): void;
  failed(err: Error): void;
}

export class FrontendTransport {
  private readonly opts: FrontendTransportOptions;
  private readonly client: LoopClient;
  private stream: grpc.ClientDuplexStream<FrontendToScheduler, SchedulerToFrontend> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private stopped = false;

  constructor(opts: FrontendTransportOptions) {
    this.opts = opts;
    this.client = new (schedulerServices().SchedulerForFrontend)(
      opts.schedulerAddress,
      grpc.credentials.createInsecure(),
      CHANNEL_OPTIONS,
    ) as unknown as LoopClient;
  }

  /** Adds FrontendForQuerier (where queriers send answers) to this frontend's gRPC server. */
  addTo(server: grpc.Server): void {
    server.addService(schedulerServices().FrontendForQuerier.service, {
      QueryResult: (call: grpc.ServerUnaryCall<QueryResultRequest, object>, cb: grpc.sendUnaryData<object>) => {
        const r = call.request;
        this.pending.get(r.query_id)?.answered({ response: r.http_response, querierId: r.querier_id, queueTimeMs: r.queue_time_ms });
        cb(null, {});
      },
    });
  }

  /** Enqueues `request` for `tenant` and resolves with the answer a querier sends. */
  roundTrip(tenant: string, request: WireHttpRequest, o: RoundTripOptions = {}): Promise<RoundTripResult> {
    if (this.stopped) return Promise.reject(new StrataError('frontend-stopping', 'unavailable', 'the query-frontend is shutting down'));
    const id = this.nextId++;
    return new Promise<RoundTripResult>((resolve, reject) => {
      const done = () => {
        this.pending.delete(id);
        o.signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        done();
        this.send({ ...this.message('CANCEL', id, tenant), http_request: null });
        // The signal's own reason when it is one (a timeout), else: the client went away.
        const reason: unknown = o.signal?.reason;
        reject(reason instanceof StrataError ? reason : new StrataError('query-canceled', 'canceled', 'the query was canceled before a querier answered it'));
      };
      this.pending.set(id, {
        tenant,
        enqueued: (reply) => {
          if (reply.status === 'OK') return;
          done();
          reject(enqueueRefusal(reply));
        },
        answered: (r) => {
          done();
          resolve(r);
        },
        failed: (err) => {
          done();
          reject(err);
        },
      });
      o.signal?.addEventListener('abort', onAbort, { once: true });
      this.send({ ...this.message('ENQUEUE', id, tenant), http_request: request, stats_enabled: o.statsEnabled ?? false, max_queriers: o.maxQueriers ?? 0 });
    });
  }

  /** Queries waiting for an answer. */
  inflight(): number {
    return this.pending.size;
  }

  stop(): void {
    this.stopped = true;
    this.stream?.end();
    this.client.close();
    this.failAll(new StrataError('frontend-stopping', 'unavailable', 'the query-frontend is shutting down'));
  }

  private message(type: FrontendToScheduler['type'], id: number, tenant: string): FrontendToScheduler {
    const address = this.opts.frontendAddress;
    return { type, frontend_address: typeof address === 'string' ? address : address(), query_id: id, user_id: tenant, stats_enabled: false, max_queriers: 0 };
  }

  private send(m: FrontendToScheduler): void {
    this.loop().write(m);
  }

  /** The stream to the scheduler, opened when first needed and again after it broke. */
  private loop(): grpc.ClientDuplexStream<FrontendToScheduler, SchedulerToFrontend> {
    if (this.stream !== undefined) return this.stream;
    const stream = this.client.FrontendLoop();
    this.stream = stream;
    stream.on('data', (reply: SchedulerToFrontend) => this.pending.get(reply.query_id)?.enqueued(reply));
    const broken = (err?: Error) => {
      if (this.stream === stream) this.stream = undefined;
      if (!this.stopped) {
        const why = err?.message ?? 'the scheduler closed the stream';
        this.failAll(
          new StrataError('scheduler-unavailable', 'unavailable', `lost the query-scheduler at ${this.opts.schedulerAddress} (${why}); retry the query`),
        );
      }
    };
    stream.on('error', broken);
    stream.on('end', () => broken());
    stream.write({ ...this.message('INIT', 0, ''), http_request: null });
    return stream;
  }

  private failAll(err: Error): void {
    for (const p of [...this.pending.values()]) p.failed(err);
  }
}

function enqueueRefusal(reply: SchedulerToFrontend): StrataError {
  if (reply.status === 'TOO_MANY_REQUESTS_PER_TENANT') return new StrataError('too-many-outstanding-requests', 'limit', reply.error);
  if (reply.status === 'SHUTTING_DOWN') return new StrataError('scheduler-stopping', 'unavailable', 'the query-scheduler is shutting down; retry the query');
  return new StrataError('scheduler-error', 'unavailable', `the query-scheduler refused the query: ${reply.error}`);
}
