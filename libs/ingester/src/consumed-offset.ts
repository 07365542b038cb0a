// The last Kafka offset whose records are in the head, and waiting for it to
// reach a target: what read-after-write consistency asks an ingester for.

import { StrataError } from '@strata/errors';

export class OffsetWaitTimeoutError extends StrataError {
  constructor(message: string) {
    super('offset-wait-timeout', 'timeout', message);
    // The name the DOM and Node give a timed-out wait (AbortSignal.timeout).
    this.name = 'TimeoutError';
  }
}

export class ConsumedOffset {
  /** -1 until the first record was consumed. */
  private current = -1n;
  private readonly waiters = new Set<{ target: bigint; done: () => void }>();

  get value(): bigint {
    return this.current;
  }

  /** Records up to and including `offset` are queryable now. */
  advance(offset: bigint): void {
    if (offset <= this.current) return;
    this.current = offset;
    for (const w of [...this.waiters]) if (w.target <= offset) w.done();
  }

  /** Resolves with the consumed offset once it is >= target; rejects after timeoutMs. */
  wait(target: bigint, timeoutMs: number, describe: () => string): Promise<bigint> {
    if (target <= this.current) return Promise.resolve(this.current);
    return new Promise((resolve, reject) => {
      const waiter = {
        target,
        done: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(this.current);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new OffsetWaitTimeoutError(`${describe()}: offset ${target} not consumed within ${timeoutMs}ms (consumed up to ${this.current})`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }
}
