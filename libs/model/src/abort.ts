// How a reader gives up when its caller did (a query timed out or was
// canceled): one error and one check, so every loop over series stops alike.

import { StrataError } from '@strata/errors';

/** The caller's AbortSignal fired (a timeout, a client gone); whatever was being read is not wanted any more. */
export class QueryAbortedError extends StrataError {
  constructor(where: string, reason?: unknown) {
    super('query-aborted', 'canceled', `query aborted while ${where}`, reason === undefined ? undefined : { cause: reason });
  }
}

/** Throws QueryAbortedError if the signal fired; `where` says what was stopped (e.g. 'selecting head series'). */
export function throwIfAborted(signal: AbortSignal | undefined, where: string): void {
  if (signal?.aborted) throw new QueryAbortedError(where, signal.reason);
}
