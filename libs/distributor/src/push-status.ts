// The push edge's tables: what a failed remote write or OTLP push is answered
// with, by error kind. One row per kind; the libs below only ever say the kind.

import type { ErrorKind } from '@strata/errors';

/**
 * Remote write: the HTTP status (the body is one line of text). Prometheus
 * retries 5xx and 429 and drops the batch on any other 4xx, so only what a
 * retry can fix is 5xx or 429.
 */
export const REMOTE_WRITE_STATUS: Readonly<Record<ErrorKind, number>> = {
  'bad-input': 400,
  unauthorized: 401,
  'too-large': 413,
  'unsupported-media-type': 415,
  limit: 429,
  unprocessable: 422,
  'not-found': 404,
  conflict: 409,
  // Mimir's answer to a non-elected HA replica: accepted, so the sender neither retries nor alerts.
  deduplicated: 202,
  unavailable: 503,
  timeout: 503,
  // nginx's "client closed request": nobody reads it, the metrics and logs do.
  canceled: 499,
  internal: 500,
};

/** OTLP/HTTP: the HTTP status and the gRPC code inside the google.rpc.Status body. */
export interface OtlpAnswer {
  http: number;
  grpc: number;
}

/**
 * OTLP: exporters retry only 429, 502, 503 and 504, so every server-side
 * failure is a 503 (UNAVAILABLE), as Mimir answers. gRPC codes: INVALID_ARGUMENT 3,
 * RESOURCE_EXHAUSTED 8, UNAUTHENTICATED 16, UNAVAILABLE 14 (google.rpc.Code).
 */
export const OTLP_STATUS: Readonly<Record<ErrorKind, OtlpAnswer>> = {
  'bad-input': { http: 400, grpc: 3 },
  unauthorized: { http: 401, grpc: 16 },
  'too-large': { http: 413, grpc: 8 },
  'unsupported-media-type': { http: 415, grpc: 3 },
  limit: { http: 429, grpc: 8 },
  unprocessable: { http: 422, grpc: 9 }, // FAILED_PRECONDITION
  'not-found': { http: 404, grpc: 5 }, // NOT_FOUND
  conflict: { http: 409, grpc: 10 }, // ABORTED
  // UNKNOWN, as before the kinds: no exporter reads the code of a 2xx answer.
  deduplicated: { http: 202, grpc: 2 },
  unavailable: { http: 503, grpc: 14 },
  timeout: { http: 503, grpc: 14 },
  canceled: { http: 499, grpc: 1 }, // CANCELLED
  internal: { http: 503, grpc: 14 },
};
