// A Querier backed by one remote ingester. Every call has a deadline so a
// hung ingester turns into an error the querier can fail over on.

import * as grpc from '@grpc/grpc-js';
import type { LabelValuesParams, Querier, SelectParams, Series } from '@strata/model';
import { loadIngesterService, queryToWire, seriesFromWire, type WireSeries } from './proto.ts';

export interface IngesterClientOptions {
  /** Instance id, e.g. ingester-zone-a-0; used in error messages. */
  id: string;
  address: string;
  timeoutMs: number;
}

export class IngesterClient implements Querier {
  private readonly client: grpc.Client & Record<string, Function>;

  constructor(readonly opts: IngesterClientOptions) {
    const Service = loadIngesterService();
    this.client = new Service(opts.address, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 256 << 20,
      'grpc.initial_reconnect_backoff_ms': 200,
      'grpc.max_reconnect_backoff_ms': 2000,
    }) as grpc.Client & Record<string, Function>;
  }

  select(p: SelectParams): Promise<Series[]> {
    return new Promise((resolve, reject) => {
      const out: Series[] = [];
      const stream = this.client.QueryStream(queryToWire(p), { deadline: this.deadline() }) as grpc.ClientReadableStream<{
        series: WireSeries[];
      }>;
      stream.on('data', (msg) => {
        for (const s of msg.series) out.push(seriesFromWire(s));
      });
      stream.on('error', (err: Error) => reject(this.wrap(err)));
      stream.on('end', () => resolve(out));
    });
  }

  labelNames(p: SelectParams): Promise<string[]> {
    return this.unary<{ names: string[] }>('LabelNames', queryToWire(p)).then((r) => r.names);
  }

  labelValues(p: LabelValuesParams): Promise<string[]> {
    return this.unary<{ values: string[] }>('LabelValues', { query: queryToWire(p), label_name: p.name }).then(
      (r) => r.values,
    );
  }

  close(): void {
    this.client.close();
  }

  private unary<T>(method: string, req: unknown): Promise<T> {
    return new Promise((resolve, reject) => {
      this.client[method](req, { deadline: this.deadline() }, (err: Error | null, res: T) =>
        err ? reject(this.wrap(err)) : resolve(res),
      );
    });
  }

  private deadline(): Date {
    return new Date(Date.now() + this.opts.timeoutMs);
  }

  private wrap(err: Error): Error {
    return new Error(`${this.opts.id} (${this.opts.address}): ${err.message}`, { cause: err });
  }
}
