// Serves a Querier (the ingester's head) over gRPC, plus the optional
// exemplar, metadata and wait-for-offset capabilities when the served object
// has them. Binds where it is told; never answers for a tenant other than the
// one in the request. A call the client cancels (its query timed out) aborts
// the read it started.

import * as grpc from '@grpc/grpc-js';
import type { ExemplarQuerier, MetadataQuerier, Querier } from '@strata/model';
import {
  exemplarSeriesToWire,
  exemplarsQueryFromWire,
  loadIngesterService,
  queryFromWire,
  seriesToWire,
} from './proto.ts';
import type { WireExemplarsQuery, WireQuery } from './wire-types.ts';
import { SpanKind, defaultTracer, extractTraceContext, inSpan, type Tracer } from '@strata/tracing';
import { toGrpcStatus } from './grpc-status.ts';

const SERIES_PER_MESSAGE = 256;

/** Read-after-write: resolves with the consumed offset once `offset` has been consumed. */
export interface OffsetWaiter {
  waitForOffset(offset: bigint, timeoutMs: number): Promise<bigint>;
}

/** What an ingester serves: a Querier, and whichever optional capabilities it has. */
export type ServedQuerier = Querier & Partial<ExemplarQuerier & MetadataQuerier & OffsetWaiter>;

export interface IngesterServerOptions {
  querier: ServedQuerier;
  /** host:port; port 0 picks a free one. */
  address: string;
  /** A span per call, child of the querier's span (gRPC metadata `traceparent`). Default: the global (no-op) tracer. */
  tracer?: Tracer;
}

export class IngesterServer {
  private readonly server = new grpc.Server({ 'grpc.max_send_message_length': 64 << 20 });
  private boundPort = 0;

  private readonly opts: IngesterServerOptions;

  constructor(opts: IngesterServerOptions) {
    this.opts = opts;
    const service = loadIngesterService();
    const q = opts.querier;
    const tracer = opts.tracer ?? defaultTracer();
    // Each call runs in an `ingester.<Method>` span continuing the caller's trace; it ends when the answer is sent.
    const traced = <T>(method: string, call: { metadata: grpc.Metadata }, tenant: string | undefined, fn: () => Promise<T>): void => {
      void inSpan(tracer, `ingester.${method}`, { kind: SpanKind.SERVER, attributes: { 'rpc.method': method, ...(tenant ? { tenant } : {}) } }, extractTraceContext(call.metadata.getMap()), fn).catch(
        () => undefined,
      );
    };
    this.server.addService(service.service, {
      QueryStream: (call: grpc.ServerWritableStream<WireQuery, unknown>) => {
        traced('QueryStream', call, call.request.tenant, async () => {
          try {
            const series = await q.select({ ...queryFromWire(call.request), signal: cancelSignal(call) });
            for (let i = 0; i < series.length && !call.cancelled; i += SERIES_PER_MESSAGE) {
              call.write({ series: series.slice(i, i + SERIES_PER_MESSAGE).map(seriesToWire) });
            }
            call.end();
          } catch (err) {
            // grpc-js ends a server stream with a status on 'error'; destroy() would drop the status and leave the client waiting for its deadline.
            call.emit('error', Object.assign(new Error((err as Error).message), toGrpcStatus(err)));
            throw err;
          }
        });
      },
      LabelNames: (call: grpc.ServerUnaryCall<WireQuery, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        traced('LabelNames', call, call.request.tenant, () =>
          q.labelNames({ ...queryFromWire(call.request), signal: cancelSignal(call) }).then(
            (names) => cb(null, { names }),
            (err: Error) => {
              cb(toGrpcStatus(err));
              throw err;
            },
          ),
        );
      },
      LabelValues: (
        call: grpc.ServerUnaryCall<{ query: WireQuery; label_name: string }, unknown>,
        cb: grpc.sendUnaryData<unknown>,
      ) => {
        traced('LabelValues', call, call.request.query?.tenant, () =>
          q.labelValues({ ...queryFromWire(call.request.query), name: call.request.label_name, signal: cancelSignal(call) }).then(
            (values) => cb(null, { values }),
            (err: Error) => {
              cb(toGrpcStatus(err));
              throw err;
            },
          ),
        );
      },
      Exemplars: (call: grpc.ServerUnaryCall<WireExemplarsQuery, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        // An ingester without exemplar storage has none to give: an empty answer, not an error.
        if (!q.exemplars) return cb(null, { series: [] });
        const exemplars = q.exemplars.bind(q);
        traced('Exemplars', call, call.request.tenant, () =>
          exemplars(exemplarsQueryFromWire(call.request)).then(
            (series) => cb(null, { series: series.map(exemplarSeriesToWire) }),
            (err: Error) => {
              cb(toGrpcStatus(err));
              throw err;
            },
          ),
        );
      },
      Metadata: (call: grpc.ServerUnaryCall<{ tenant: string; metric: string }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        if (!q.metadata) return cb(null, { metadata: [] });
        const metadata = q.metadata.bind(q);
        traced('Metadata', call, call.request.tenant, () =>
          metadata({ tenant: call.request.tenant, metric: call.request.metric || undefined }).then(
            (entries) =>
              cb(null, {
                metadata: entries.map((m) => ({ metric_family_name: m.metricFamilyName, type: m.type, help: m.help, unit: m.unit })),
              }),
            (err: Error) => {
              cb(toGrpcStatus(err));
              throw err;
            },
          ),
        );
      },
      WaitForOffset: (call: grpc.ServerUnaryCall<{ offset: number; timeout_ms: number }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        if (!q.waitForOffset) return cb({ code: grpc.status.UNIMPLEMENTED, details: 'this server cannot wait for Kafka offsets' });
        const wait = q.waitForOffset.bind(q);
        traced('WaitForOffset', call, undefined, () =>
          wait(BigInt(call.request.offset), Number(call.request.timeout_ms)).then(
            (consumed) => cb(null, { consumed_offset: Number(consumed) }),
            (err: Error) => {
              cb(toGrpcStatus(err));
              throw err;
            },
          ),
        );
      },
    });
  }

  get port(): number {
    return this.boundPort;
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.bindAsync(this.opts.address, grpc.ServerCredentials.createInsecure(), (err, port) => {
        if (err) return reject(new Error(`ingester gRPC: cannot listen on ${this.opts.address}: ${err.message}`));
        this.boundPort = port;
        resolve();
      });
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.server.forceShutdown(), 5000);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** Fires when the client cancels the call or its deadline passes. */
function cancelSignal(call: { on(event: 'cancelled', listener: () => void): unknown }): AbortSignal {
  const ac = new AbortController();
  call.on('cancelled', () => ac.abort());
  return ac.signal;
}
