// Serves a Querier (the ingester's head) over gRPC, plus the optional
// exemplar, metadata and wait-for-offset capabilities when the served object
// has them. Binds where it is told; never answers for a tenant other than the
// one in the request. A call the client cancels (its query timed out) aborts
// the read it started.

import * as grpc from '@grpc/grpc-js';
import type { ExemplarQuerier, MetadataQuerier, Querier } from '@strata/model';
import { exemplarSeriesToWire, exemplarsQueryFromWire, loadIngesterService, queryFromWire, seriesToWire } from './proto.ts';
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
  private readonly tracer: Tracer;

  private readonly opts: IngesterServerOptions;

  constructor(opts: IngesterServerOptions) {
    this.opts = opts;
    this.tracer = opts.tracer ?? defaultTracer();
    this.server.addService(loadIngesterService().service, {
      QueryStream: (call: grpc.ServerWritableStream<WireQuery, unknown>) => this.queryStream(call),
      LabelNames: (call: grpc.ServerUnaryCall<WireQuery, unknown>, cb: grpc.sendUnaryData<unknown>) => this.labelNames(call, cb),
      LabelValues: (call: grpc.ServerUnaryCall<WireLabelValuesQuery, unknown>, cb: grpc.sendUnaryData<unknown>) => this.labelValues(call, cb),
      Exemplars: (call: grpc.ServerUnaryCall<WireExemplarsQuery, unknown>, cb: grpc.sendUnaryData<unknown>) => this.exemplars(call, cb),
      Metadata: (call: grpc.ServerUnaryCall<WireMetadataQuery, unknown>, cb: grpc.sendUnaryData<unknown>) => this.metadata(call, cb),
      WaitForOffset: (call: grpc.ServerUnaryCall<WireWaitForOffset, unknown>, cb: grpc.sendUnaryData<unknown>) => this.waitForOffset(call, cb),
    });
  }

  /** Each call runs in an `ingester.<Method>` span continuing the caller's trace; it ends when the answer is sent. */
  private traced(method: string, call: { metadata: grpc.Metadata }, tenant: string | undefined, fn: () => Promise<unknown>): void {
    void inSpan(
      this.tracer,
      `ingester.${method}`,
      { kind: SpanKind.SERVER, attributes: { 'rpc.method': method, ...(tenant ? { tenant } : {}) } },
      extractTraceContext(call.metadata.getMap()),
      fn,
    ).catch(() => undefined);
  }

  private queryStream(call: grpc.ServerWritableStream<WireQuery, unknown>): void {
    this.traced('QueryStream', call, call.request.tenant, async () => {
      try {
        const series = await this.opts.querier.select({ ...queryFromWire(call.request), signal: cancelSignal(call) });
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
  }

  private labelNames(call: grpc.ServerUnaryCall<WireQuery, unknown>, cb: grpc.sendUnaryData<unknown>): void {
    const q = this.opts.querier;
    this.traced('LabelNames', call, call.request.tenant, () =>
      answer(cb, q.labelNames({ ...queryFromWire(call.request), signal: cancelSignal(call) }), (names) => ({ names })),
    );
  }

  private labelValues(call: grpc.ServerUnaryCall<WireLabelValuesQuery, unknown>, cb: grpc.sendUnaryData<unknown>): void {
    const q = this.opts.querier;
    this.traced('LabelValues', call, call.request.query?.tenant, () =>
      answer(cb, q.labelValues({ ...queryFromWire(call.request.query), name: call.request.label_name, signal: cancelSignal(call) }), (values) => ({ values })),
    );
  }

  private exemplars(call: grpc.ServerUnaryCall<WireExemplarsQuery, unknown>, cb: grpc.sendUnaryData<unknown>): void {
    const q = this.opts.querier;
    // An ingester without exemplar storage has none to give: an empty answer, not an error.
    if (!q.exemplars) return cb(null, { series: [] });
    const exemplars = q.exemplars.bind(q);
    this.traced('Exemplars', call, call.request.tenant, () =>
      answer(cb, exemplars(exemplarsQueryFromWire(call.request)), (series) => ({ series: series.map(exemplarSeriesToWire) })),
    );
  }

  private metadata(call: grpc.ServerUnaryCall<WireMetadataQuery, unknown>, cb: grpc.sendUnaryData<unknown>): void {
    const q = this.opts.querier;
    if (!q.metadata) return cb(null, { metadata: [] });
    const metadata = q.metadata.bind(q);
    this.traced('Metadata', call, call.request.tenant, () =>
      answer(cb, metadata({ tenant: call.request.tenant, metric: call.request.metric || undefined }), (entries) => ({
        metadata: entries.map((m) => ({ metric_family_name: m.metricFamilyName, type: m.type, help: m.help, unit: m.unit })),
      })),
    );
  }

  private waitForOffset(call: grpc.ServerUnaryCall<WireWaitForOffset, unknown>, cb: grpc.sendUnaryData<unknown>): void {
    const q = this.opts.querier;
    if (!q.waitForOffset) return cb({ code: grpc.status.UNIMPLEMENTED, details: 'this server cannot wait for Kafka offsets' });
    const wait = q.waitForOffset.bind(q);
    this.traced('WaitForOffset', call, undefined, () =>
      answer(cb, wait(BigInt(call.request.offset), Number(call.request.timeout_ms)), (consumed) => ({ consumed_offset: Number(consumed) })),
    );
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

type WireLabelValuesQuery = { query: WireQuery; label_name: string };
type WireMetadataQuery = { tenant: string; metric: string };
type WireWaitForOffset = { offset: number; timeout_ms: number };

/** A unary call's answer: `work`'s result as `message` makes it, or its error as a gRPC status (the error fails the span too). */
function answer<T>(cb: grpc.sendUnaryData<unknown>, work: Promise<T>, message: (v: T) => unknown): Promise<void> {
  return work.then(
    (v) => cb(null, message(v)),
    (err: Error) => {
      cb(toGrpcStatus(err));
      throw err;
    },
  );
}

/** Fires when the client cancels the call or its deadline passes. */
function cancelSignal(call: { on(event: 'cancelled', listener: () => void): unknown }): AbortSignal {
  const ac = new AbortController();
  call.on('cancelled', () => ac.abort());
  return ac.signal;
}
