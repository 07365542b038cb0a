// What went wrong, in words no transport owns: every StrataError has one kind,
// and each protocol edge has one table from kind to its own status. Never add
// an HTTP status or gRPC code here; add the kind, then a row to every edge table.

export const ERROR_KINDS = [
  /** The request is malformed or names something invalid; sending it again cannot succeed. */
  'bad-input',
  /** No or wrong credentials or tenant id. */
  'unauthorized',
  /** The request (or a part of it) is larger than a limit allows. */
  'too-large',
  /** The body's Content-Type or Content-Encoding is one Strata does not speak. */
  'unsupported-media-type',
  /** A rate or concurrency limit of the tenant was hit; later may succeed. */
  'limit',
  /** Well-formed, but cannot be carried out (a PromQL evaluation error, a per-query limit). */
  'unprocessable',
  /** The thing asked for does not exist. */
  'not-found',
  /** The target's current state does not allow the change (a partition state transition). */
  'conflict',
  /** Not a failure for the sender: the data is accepted from another HA replica and this copy is dropped. */
  'deduplicated',
  /** A dependency (Kafka, the KV store, an ingester) is down or overloaded; retry with backoff. */
  'unavailable',
  /** The work ran past its deadline. */
  'timeout',
  /** The caller gave up (its request was aborted) before the work finished. */
  'canceled',
  /** A bug or a broken invariant on Strata's side. */
  'internal',
] as const;

export type ErrorKind = (typeof ERROR_KINDS)[number];

/** Whether the same request, sent again later, may succeed: follows from the kind alone. */
const RETRIABLE: Readonly<Record<ErrorKind, boolean>> = {
  'bad-input': false,
  unauthorized: false,
  'too-large': false,
  'unsupported-media-type': false,
  limit: true,
  unprocessable: false,
  'not-found': false,
  conflict: false,
  deduplicated: false,
  unavailable: true,
  timeout: true,
  canceled: true,
  internal: false,
};

export function isRetriable(kind: ErrorKind): boolean {
  return RETRIABLE[kind];
}
