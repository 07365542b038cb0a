// A Querier backed by one remote ingester. Every call has a deadline so a
// hung ingester turns into an error the querier can fail over on, and is
// cancelled when the caller's signal fires, so the ingester stops reading too.

import * as grpc from '@grpc/grpc-js';
import {
  QueryAbortedError,
  type ExemplarParams,
  type ExemplarQuerier,
  type ExemplarSeries,
  type LabelValuesParams,
  type MetadataParams,
  type MetadataQuerier,
  type MetricMetadataEntry,
  type Querier,
  type SelectParams,
  type Series,
} from '@strata/model';
import { exemplarSeriesFromWire, exemplarsQueryToWire, loadIngesterService, queryToWire, seriesFromWire } from './proto.ts';
import type { WireExemplarSeries, WireSeries } from './wire-types.ts';
import type { OffsetWaiter } from './server.ts';
import { traceContextHeaders } from '@strata/tracing';
import { fromGrpcError } from './grpc-status.ts';
import { SampleArena } from '@strata/tsdb';

export interface IngesterClientOptions {
  /** Instance id, e.g. ingester-zone-a-0; used in error messages. */
  id: string;
  address: string;
  timeoutMs: number;
}

// The generated client's methods, as @grpc/proto-loader builds them.
type StreamMethod = (req: unknown, metadata: grpc.Metadata, options: grpc.CallOptions) => grpc.ClientReadableStream<{ series: WireSeries[] }>;
type UnaryMethod = (
  req: unknown,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (err: grpc.ServiceError | null, res: unknown) => void,
) => grpc.ClientUnaryCall;

export class IngesterClient implements Querier, ExemplarQuerier, MetadataQuerier, OffsetWaiter {
  private readonly client: grpc.Client & Record<string, unknown>;

  readonly opts: IngesterClientOptions;

  constructor(opts: IngesterClientOptions) {
    this.opts = opts;
    const Service = loadIngesterService();
    this.client = new Service(opts.address, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 256 << 20,
      'grpc.initial_reconnect_backoff_ms': 200,
      'grpc.max_reconnect_backoff_ms': 2000,
    }) as grpc.Client & Record<string, unknown>;
  }

  select(p: SelectParams): Promise<Series[]> {
    return new Promise((resolve, reject) => {
      if (p.signal?.aborted) return reject(this.aborted(p.signal));
      const out: Series[] = [];
      const arena = new SampleArena();
      const queryStream = this.client.QueryStream as StreamMethod;
      const stream = queryStream.call(this.client, queryToWire(p, true), traceMetadata(), { deadline: this.deadline() });
      const release = onAbort(p.signal, () => stream.cancel());
      stream.on('data', (msg: { series: WireSeries[] }) => {
        for (const s of msg.series) out.push(seriesFromWire(s, p.mint, p.maxt, arena));
      });
      stream.on('error', (err: Error) => {
        release();
        reject(p.signal?.aborted ? this.aborted(p.signal) : this.wrap(err));
      });
      stream.on('end', () => {
        release();
        resolve(out);
      });
    });
  }

  labelNames(p: SelectParams): Promise<string[]> {
    return this.unary<{ names: string[] }>('LabelNames', queryToWire(p), this.opts.timeoutMs, p.signal).then((r) => r.names);
  }

  labelValues(p: LabelValuesParams): Promise<string[]> {
    return this.unary<{ values: string[] }>('LabelValues', { query: queryToWire(p), label_name: p.name }, this.opts.timeoutMs, p.signal).then((r) => r.values);
  }

  exemplars(p: ExemplarParams): Promise<ExemplarSeries[]> {
    return this.unary<{ series: WireExemplarSeries[] }>('Exemplars', exemplarsQueryToWire(p)).then((r) => r.series.map(exemplarSeriesFromWire));
  }

  metadata(p: MetadataParams): Promise<MetricMetadataEntry[]> {
    return this.unary<{ metadata: { metric_family_name: string; type: string; help: string; unit: string }[] }>('Metadata', {
      tenant: p.tenant,
      metric: p.metric ?? '',
    }).then((r) => r.metadata.map((m) => ({ metricFamilyName: m.metric_family_name, type: m.type, help: m.help, unit: m.unit })));
  }

  /** Waits (up to timeoutMs, plus the call's own deadline) until the ingester consumed `offset`. */
  waitForOffset(offset: bigint, timeoutMs: number): Promise<bigint> {
    return this.unary<{ consumed_offset: number }>('WaitForOffset', { offset: Number(offset), timeout_ms: timeoutMs }, timeoutMs + this.opts.timeoutMs).then(
      (r) => BigInt(r.consumed_offset),
    );
  }

  close(): void {
    this.client.close();
  }

  private unary<T>(method: string, req: unknown, timeoutMs = this.opts.timeoutMs, signal?: AbortSignal): Promise<T> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(this.aborted(signal));
      let release = () => {};
      const unaryMethod = this.client[method] as UnaryMethod;
      const call = unaryMethod.call(this.client, req, traceMetadata(), { deadline: new Date(Date.now() + timeoutMs) }, (err, res) => {
        release();
        if (err) reject(signal?.aborted ? this.aborted(signal) : this.wrap(err));
        else resolve(res as T);
      });
      release = onAbort(signal, () => call.cancel());
    });
  }

  private aborted(signal: AbortSignal): QueryAbortedError {
    return new QueryAbortedError(`asking ${this.opts.id} (${this.opts.address})`, signal.reason);
  }

  private deadline(): Date {
    return new Date(Date.now() + this.opts.timeoutMs);
  }

  /** A StrataError of the kind the gRPC status says, naming this ingester. */
  private wrap(err: Error): Error {
    return fromGrpcError(err, `${this.opts.id} (${this.opts.address})`);
  }
}

/** Runs `fn` when the signal fires; returns the function that stops listening. */
function onAbort(signal: AbortSignal | undefined, fn: () => void): () => void {
  if (!signal) return () => {};
  signal.addEventListener('abort', fn, { once: true });
  return () => signal.removeEventListener('abort', fn);
}

/** The caller's trace context (`traceparent`) as gRPC metadata, so the ingester's span joins the query's trace. */
function traceMetadata(): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(traceContextHeaders())) md.set(k, v);
  return md;
}
