// How a reader gives up when its caller did (a query timed out or was
// canceled): one error and one check, so every loop over series stops alike.

/** The caller's AbortSignal fired; whatever was being read is not wanted any more. */
export class QueryAbortedError extends Error {
  override readonly name = 'AbortError';

  constructor(where: string, reason?: unknown) {
    super(`query aborted while ${where}`, reason === undefined ? undefined : { cause: reason });
  }
}

/** Throws QueryAbortedError if the signal fired; `where` says what was stopped (e.g. 'selecting head series'). */
export function throwIfAborted(signal: AbortSignal | undefined, where: string): void {
  if (signal?.aborted) throw new QueryAbortedError(where, signal.reason);
}
