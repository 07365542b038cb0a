// Per-tenant token buckets for the ingestion rate limit, Mimir's "local"
// strategy: every distributor allows the tenant's full rate and burst on its
// own, so N distributors admit up to N x the limit. Rate and burst are passed on
// every call, so a changed override applies to the next request.

interface Bucket {
  tokens: number;
  /** ms of the last refill. */
  at: number;
  rate: number;
  burst: number;
}

export type RateDecision = 'allowed' | 'rate-limited' | 'larger-than-burst';

export class LocalRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /**
   * Takes `n` tokens from the tenant's bucket if it holds them; otherwise takes
   * nothing. A new bucket, and one whose rate or burst changed, starts full.
   */
  allow(tenant: string, n: number, rate: number, burst: number): RateDecision {
    const now = this.now();
    let b = this.buckets.get(tenant);
    if (b === undefined) {
      b = { tokens: burst, at: now, rate, burst };
      this.buckets.set(tenant, b);
    } else if (rate !== b.rate || burst !== b.burst) {
      // Changed overrides: when they changed is unknown, so start afresh (full) rather than
      // refill the time since the last request at the old rate: a raised limit applies at once.
      b.tokens = burst;
      b.at = now;
      b.rate = rate;
      b.burst = burst;
    } else {
      b.tokens = Math.min(burst, b.tokens + (Math.max(0, now - b.at) / 1000) * rate);
      b.at = now;
    }
    if (n <= 0) return 'allowed';
    if (n > burst) return 'larger-than-burst';
    if (n > b.tokens) return 'rate-limited';
    b.tokens -= n;
    return 'allowed';
  }
}
