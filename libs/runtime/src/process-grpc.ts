// The process' own gRPC server on -server.grpc-listen-address:port, shared by the modules that
// serve gRPC besides the ingester (query-scheduler, query-frontend): each adds its services when
// built, and the first to start binds it once for all.

import * as grpc from '@grpc/grpc-js';

/** Query answers cross it whole. */
const MAX_MESSAGE_BYTES = 256 << 20;

export class ProcessGrpc {
  readonly server = new grpc.Server({ 'grpc.max_send_message_length': MAX_MESSAGE_BYTES, 'grpc.max_receive_message_length': MAX_MESSAGE_BYTES });
  private bound: Promise<number> | undefined;
  private readonly host: string;
  private readonly port: number;

  constructor(host: string, port: number) {
    this.host = host;
    this.port = port;
  }

  /** Binds the server (once) and resolves with its port. */
  start(): Promise<number> {
    this.bound ??= new Promise<number>((resolve, reject) =>
      this.server.bindAsync(`${this.host}:${this.port}`, grpc.ServerCredentials.createInsecure(), (err, port) =>
        err ? reject(new Error(`gRPC server could not listen on ${this.host}:${this.port}: ${err.message}`)) : resolve(port),
      ),
    );
    return this.bound;
  }

  stop(): Promise<void> {
    if (this.bound === undefined) return Promise.resolve();
    return new Promise((resolve) => this.server.tryShutdown(() => resolve()));
  }
}
