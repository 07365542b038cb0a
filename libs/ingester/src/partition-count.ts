// How many partitions the tenants' series are spread over, refreshed in the
// background: per-tenant global limits are divided by it. A failed refresh
// keeps the last count; only the first fetch (at start) must succeed.

import type { Logger } from '@strata/service';

export interface PartitionCountOptions {
  /** The topic's partition count (Kafka metadata), or the partition ring's active partitions. */
  fetch: () => Promise<number>;
  refreshMs?: number;
  logger: Logger;
}

export class PartitionCount {
  private count = 1;
  private timer: NodeJS.Timeout | undefined;

  private readonly opts: PartitionCountOptions;

  constructor(opts: PartitionCountOptions) {
    this.opts = opts;
  }

  get value(): number {
    return this.count;
  }

  async start(): Promise<void> {
    this.count = await this.fetch();
    this.opts.logger.info({ partitions: this.count }, `per-tenant limits are split over ${this.count} partition(s)`);
    this.timer = setInterval(() => void this.refresh(), this.opts.refreshMs ?? 30_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
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
