// A tenant's ingestion rate as Mimir's ingester reports it in user_stats: an
// exponentially weighted moving average of samples per second, ticked every
// 15s with alpha 0.2 (the first tick takes the instant rate as it is).

export const INGESTION_RATE_TICK_MS = 15_000;

export class EwmaRate {
  private pending = 0;
  private value = 0;
  private primed = false;

  private readonly intervalMs: number;
  private readonly alpha: number;

  constructor(intervalMs = INGESTION_RATE_TICK_MS, alpha = 0.2) {
    this.intervalMs = intervalMs;
    this.alpha = alpha;
  }

  add(samples: number): void {
    this.pending += samples;
  }

  tick(): void {
    const instant = this.pending / (this.intervalMs / 1000);
    this.pending = 0;
    this.value = this.primed ? this.value + this.alpha * (instant - this.value) : instant;
    this.primed = true;
  }

  /** Samples per second. */
  rate(): number {
    return this.value;
  }
}
