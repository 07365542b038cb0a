// Errors of the KV and the partition ring, each with a stable code, an HTTP
// status and whether the caller should retry.

export class RingError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly retriable = status >= 500,
  ) {
    super(message);
  }
}

/** The KV store could not be reached or did not answer in time. */
export class KvUnavailableError extends RingError {
  constructor(message: string) {
    super('err-strata-kv-unavailable', 503, message);
  }
}

/** Too many concurrent writers on one key; the caller may retry. */
export class KvConflictError extends RingError {
  constructor(message: string) {
    super('err-strata-kv-conflict', 503, message);
  }
}

export const ringErrors = {
  partitionMissing: (partition: number) =>
    new RingError('err-strata-partition-missing', 500, `partition ${partition} is not in the ring; the ingester re-registers it on its next heartbeat, retry shortly`),
  downscalePending: (partition: number) =>
    new RingError(
      'err-strata-partition-pending',
      409,
      `partition ${partition} is PENDING and cannot be prepared for downscale (a cancelled downscale could not tell PENDING from ACTIVE); wait until it is ACTIVE`,
    ),
  stateChangeNotAllowed: (partition: number, from: string, to: string) =>
    new RingError('err-strata-partition-state-change', 409, `partition ${partition} cannot change from ${from} to ${to}`),
  notRunning: () => new RingError('err-strata-lifecycler-not-running', 503, 'the ingester is starting or stopping; retry when it is running'),
};
