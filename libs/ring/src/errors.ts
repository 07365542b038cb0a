// Errors of the KV and the partition ring, each a StrataError with a stable
// code and a kind; the admin endpoints and the push edge map kinds to statuses.

import { StrataError, type ErrorKind } from '@strata/errors';

export class RingError extends StrataError {
  constructor(name: string, kind: ErrorKind, message: string) {
    super(name, kind, message);
  }
}

/** The KV store could not be reached or did not answer in time. */
export class KvUnavailableError extends RingError {
  constructor(message: string) {
    super('kv-unavailable', 'unavailable', message);
  }
}

/** Too many concurrent writers on one key; the caller may retry. */
export class KvConflictError extends RingError {
  constructor(message: string) {
    super('kv-conflict', 'unavailable', message);
  }
}

export const ringErrors = {
  partitionMissing: (partition: number) =>
    new RingError(
      'partition-missing',
      'internal',
      `partition ${partition} is not in the ring; the ingester re-registers it on its next heartbeat, retry shortly`,
    ),
  downscalePending: (partition: number) =>
    new RingError(
      'partition-pending',
      'conflict',
      `partition ${partition} is PENDING and cannot be prepared for downscale (a cancelled downscale could not tell PENDING from ACTIVE); wait until it is ACTIVE`,
    ),
  stateChangeNotAllowed: (partition: number, from: string, to: string) =>
    new RingError('partition-state-change', 'conflict', `partition ${partition} cannot change from ${from} to ${to}`),
  notRunning: () => new RingError('lifecycler-not-running', 'unavailable', 'the ingester is starting or stopping; retry when it is running'),
};
