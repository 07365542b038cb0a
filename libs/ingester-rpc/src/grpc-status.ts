// The gRPC edge between querier and ingester: one table from error kind to the
// gRPC status the server answers, and one back from a gRPC status to the kind
// the client throws, so a kind survives the hop (as far as gRPC's codes tell kinds apart).

import * as grpc from '@grpc/grpc-js';
import { StrataError, asStrataError, isRetriable, type ErrorKind } from '@strata/errors';

/** Server side: what an error of each kind is answered with. */
export const GRPC_STATUS: Readonly<Record<ErrorKind, grpc.status>> = {
  'bad-input': grpc.status.INVALID_ARGUMENT,
  unauthorized: grpc.status.UNAUTHENTICATED,
  'too-large': grpc.status.RESOURCE_EXHAUSTED,
  'unsupported-media-type': grpc.status.INVALID_ARGUMENT,
  limit: grpc.status.RESOURCE_EXHAUSTED,
  unprocessable: grpc.status.FAILED_PRECONDITION,
  'not-found': grpc.status.NOT_FOUND,
  conflict: grpc.status.ABORTED,
  deduplicated: grpc.status.ALREADY_EXISTS,
  unavailable: grpc.status.UNAVAILABLE,
  timeout: grpc.status.DEADLINE_EXCEEDED,
  canceled: grpc.status.CANCELLED,
  internal: grpc.status.INTERNAL,
};

/** Client side: the kind of a failed call, from its gRPC status (the transport's own failures included). */
export const KIND_OF_GRPC_STATUS: Readonly<Record<grpc.status, ErrorKind>> = {
  [grpc.status.OK]: 'internal',
  [grpc.status.CANCELLED]: 'canceled',
  [grpc.status.UNKNOWN]: 'internal',
  [grpc.status.INVALID_ARGUMENT]: 'bad-input',
  [grpc.status.DEADLINE_EXCEEDED]: 'timeout',
  [grpc.status.NOT_FOUND]: 'not-found',
  [grpc.status.ALREADY_EXISTS]: 'deduplicated',
  [grpc.status.PERMISSION_DENIED]: 'unauthorized',
  // A rate limit, or a message over the size limit: either way not worth retrying at once, but later.
  [grpc.status.RESOURCE_EXHAUSTED]: 'limit',
  [grpc.status.FAILED_PRECONDITION]: 'unprocessable',
  [grpc.status.ABORTED]: 'conflict',
  [grpc.status.OUT_OF_RANGE]: 'bad-input',
  // The ingester is older or newer than the querier: a deployment problem, not the query's.
  [grpc.status.UNIMPLEMENTED]: 'internal',
  [grpc.status.INTERNAL]: 'internal',
  [grpc.status.UNAVAILABLE]: 'unavailable',
  [grpc.status.DATA_LOSS]: 'internal',
  [grpc.status.UNAUTHENTICATED]: 'unauthorized',
};

/** The status a server call fails with: the error's kind through GRPC_STATUS, its message as details. */
export function toGrpcStatus(err: unknown): Partial<grpc.StatusObject> {
  const e = asStrataError(err);
  return { code: GRPC_STATUS[e.kind], details: e.message };
}

/** A failed call as the client throws it: the kind read back from the gRPC status, `who` (the ingester) in the message. */
export function fromGrpcError(err: Error & { code?: number; details?: string }, who: string): StrataError {
  const kind = KIND_OF_GRPC_STATUS[err.code as grpc.status] ?? 'internal';
  // The ingester's verdict on the query itself (a budget, a bad matcher) reaches the user in its own words.
  if (!isRetriable(kind) && kind !== 'internal' && err.details) return new StrataError('ingester-call-failed', kind, err.details, { cause: err });
  return new StrataError('ingester-call-failed', kind, `${who}: ${err.message}`, { cause: err });
}
