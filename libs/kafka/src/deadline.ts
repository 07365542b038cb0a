// Bounds a promise by a deadline. The underlying operation is not cancelled: callers must
// discard whatever client was running it.

import { StrataError } from '@strata/errors';

class DeadlineExceededError extends StrataError {
  constructor(what: string, ms: number) {
    super('kafka-deadline-exceeded', 'timeout', `${what} did not finish within ${ms}ms`);
    this.name = 'DeadlineExceededError';
  }
}

export async function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceededError(what, ms)), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
