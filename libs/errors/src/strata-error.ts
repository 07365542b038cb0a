// The one base error of Strata: a stable code for logs and metrics
// (`err-strata-<name>`), a transport-neutral kind, and a message that says what
// was wrong and what to do. Libs throw these; only the protocol edges turn a
// kind into a status.

import { isRetriable, type ErrorKind } from './kinds.ts';

export interface StrataErrorOptions {
  cause?: unknown;
  /** When to come back, for a retriable error that knows better than the edge's default (a rate limit's refill time). */
  retryAfterSeconds?: number;
}

export class StrataError extends Error {
  /** `err-strata-<name>`: stable, users grep logs and alert on it. */
  readonly code: string;
  readonly kind: ErrorKind;
  readonly retryAfterSeconds: number | undefined;

  /** `name` is the code without its `err-strata-` prefix, e.g. `sample-out-of-order`. */
  constructor(name: string, kind: ErrorKind, message: string, options?: StrataErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = `err-strata-${name}`;
    this.kind = kind;
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }

  /** Whether sending the same request again may succeed. */
  get retriable(): boolean {
    return isRetriable(this.kind);
  }
}

/**
 * The error as an edge answers it: a StrataError as it is; anything else is a
 * bug and becomes `internal`, its message kept (after `prefix`) so the answer still says what broke.
 */
export function asStrataError(err: unknown, prefix = ''): StrataError {
  if (err instanceof StrataError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new StrataError('internal', 'internal', prefix + message, { cause: err });
}
