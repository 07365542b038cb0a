// For tests of the scheduler protocol's users: a gRPC server bound on loopback.

import * as grpc from '@grpc/grpc-js';

/** Binds `server` on a free loopback port; resolves with its host:port. */
export function listenOnLoopback(server: grpc.Server): Promise<string> {
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(`127.0.0.1:${port}`))),
  );
}
