// How many partitions the tenants' series are spread over, refreshed in the
// background: per-tenant global limits are divided by it. A failed refresh
// keeps the last count. While the first fetch fails (Kafka unreachable or
// refusing this process) it is retried every 5 s and the count is 1: the
// ingester cannot consume meanwhile either.

import type { Logger } from '@strata/service';

export interface PartitionCountOptions {
  /** The topic's partition count (Kafka metadata), or the partition ring's active partitions. */
  fetch: () => Promise<number>;
  refreshMs?: number;
  logger: Logger;
}

const FIRST_RETRY_MS = 5000;

export class PartitionCount {
  private count = 1;
  private stopped = false;
  /** The first fetch's last failure, logged once. */
  private lastError: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  private readonly opts: PartitionCountOptions;

  constructor(opts: PartitionCountOptions) {
    this.opts = opts;
  }

  get value(): number {
    return this.count;
  }

  /** Resolves after the first attempt; until one succeeds, attempts repeat every FIRST_RETRY_MS. */
  async start(): Promise<void> {
    let count: number;
    try {
      count = await this.fetch();
    } catch (err) {
      if (this.stopped) return;
      const message = (err as Error).message;
      if (message !== this.lastError) this.opts.logger.warn({ err: message }, `reading the partition count failed; retrying every ${FIRST_RETRY_MS / 1000}s`);
      this.lastError = message;
      this.timer = setTimeout(() => void this.start(), FIRST_RETRY_MS);
      this.timer.unref();
      return;
    }
    if (this.stopped) return;
    this.count = count;
    this.opts.logger.info({ partitions: this.count }, `per-tenant limits are split over ${this.count} partition(s)`);
    this.timer = setInterval(() => void this.refresh(), this.opts.refreshMs ?? 30_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // Node's timers clear either way: the first-fetch retry or the refresh.
    clearInterval(this.timer);
  }

  private async refresh(): Promise<void> {
    try {
      const n = await this.fetch();
      if (n !== this.count) this.opts.logger.info({ from: this.count, to: n }, `partition count changed to ${n}; per-tenant limits re-split`);
      this.count = n;
    } catch (err) {
      this.opts.logger.warn({ err: (err as Error).message, partitions: this.count }, 'refreshing the partition count failed; keeping the last one');
    }
  }

  private async fetch(): Promise<number> {
    const n = await this.opts.fetch();
    if (!Number.isInteger(n) || n < 1) throw new Error(`partition count ${n} is not a positive integer`);
    return n;
  }
}
