// Serves a Querier (the ingester's head) over gRPC. Binds where it is told;
// never answers for a tenant other than the one in the request.

import * as grpc from '@grpc/grpc-js';
import type { Querier } from '@strata/model';
import { loadIngesterService, queryFromWire, seriesToWire, type WireQuery } from './proto.ts';

const SERIES_PER_MESSAGE = 256;

export interface IngesterServerOptions {
  querier: Querier;
  /** host:port; port 0 picks a free one. */
  address: string;
}

export class IngesterServer {
  private readonly server = new grpc.Server({ 'grpc.max_send_message_length': 64 << 20 });
  private boundPort = 0;

  constructor(private readonly opts: IngesterServerOptions) {
    const service = loadIngesterService();
    const q = opts.querier;
    this.server.addService(service.service, {
      QueryStream: (call: grpc.ServerWritableStream<WireQuery, unknown>) => {
        q.select(queryFromWire(call.request))
          .then((series) => {
            for (let i = 0; i < series.length && !call.cancelled; i += SERIES_PER_MESSAGE) {
              call.write({ series: series.slice(i, i + SERIES_PER_MESSAGE).map(seriesToWire) });
            }
            call.end();
          })
          .catch((err: Error) => call.destroy(Object.assign(new Error(err.message), toStatus(err))));
      },
      LabelNames: (call: grpc.ServerUnaryCall<WireQuery, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        q.labelNames(queryFromWire(call.request)).then(
          (names) => cb(null, { names }),
          (err: Error) => cb(toStatus(err)),
        );
      },
      LabelValues: (
        call: grpc.ServerUnaryCall<{ query: WireQuery; label_name: string }, unknown>,
        cb: grpc.sendUnaryData<unknown>,
      ) => {
        q.labelValues({ ...queryFromWire(call.request.query), name: call.request.label_name }).then(
          (values) => cb(null, { values }),
          (err: Error) => cb(toStatus(err)),
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

function toStatus(err: Error): Partial<grpc.StatusObject> {
  return { code: grpc.status.INTERNAL, details: err.message };
}
