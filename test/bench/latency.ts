// Per-request push outcomes as a growing log (end time, latency, samples, ok),
// so any time slice (a step, a soak minute) gets exact percentiles by sorting.

export class RequestLog {
  private end = new Float64Array(1024);
  private latency = new Float64Array(1024);
  private samples = new Uint32Array(1024);
  private ok = new Uint8Array(1024);
  length = 0;

  record(endMs: number, latencyMs: number, samples: number, ok: boolean): void {
    if (this.length === this.end.length) this.grow();
    const i = this.length++;
    this.end[i] = endMs;
    this.latency[i] = latencyMs;
    this.samples[i] = samples;
    this.ok[i] = ok ? 1 : 0;
  }

  private grow(): void {
    const n = this.end.length * 2;
    const g = <T extends Float64Array | Uint32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.end = g(this.end, (k) => new Float64Array(k));
    this.latency = g(this.latency, (k) => new Float64Array(k));
    this.samples = g(this.samples, (k) => new Uint32Array(k));
    this.ok = g(this.ok, (k) => new Uint8Array(k));
  }

  /** Successful requests' latencies and counts for requests that ended in [from, to). */
  slice(from = -Infinity, to = Infinity, fromIndex = 0): SliceStats {
    const lat: number[] = [];
    let okSamples = 0;
    let failed = 0;
    let failedSamples = 0;
    for (let i = fromIndex; i < this.length; i++) {
      const t = this.end[i];
      if (t < from || t >= to) continue;
      if (this.ok[i]) {
        lat.push(this.latency[i]);
        okSamples += this.samples[i];
      } else {
        failed++;
        failedSamples += this.samples[i];
      }
    }
    return { latencies: Float64Array.from(lat).sort(), okRequests: lat.length, okSamples, failedRequests: failed, failedSamples };
  }
}

export interface SliceStats {
  /** Sorted ascending, ms. */
  latencies: Float64Array;
  okRequests: number;
  okSamples: number;
  failedRequests: number;
  failedSamples: number;
}

/** Nearest-rank percentile of a sorted array; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}
