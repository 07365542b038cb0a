// The drill's record of every sample a distributor acknowledged (2xx), and nothing else.
// Sends are ordered per series, so each series' acked samples are a prefix of what was
// generated, in timestamp and in ack-time order; "settled" data is defined on that prefix.

export interface LedgerSample {
  series: number;
  t: number;
  v: number;
}

class SeriesLedger {
  readonly ts: number[] = [];
  readonly vs: number[] = [];
  readonly ackedAt: number[] = [];
  /** Timestamps a distributor refused with a non-retriable 4xx: may or may not be stored. */
  readonly rejected = new Set<number>();
}

export class Ledger {
  private readonly perSeries: SeriesLedger[];
  private ackedCount = 0;
  private rejectedCount = 0;

  readonly seriesCount: number;

  constructor(seriesCount: number) {
    this.seriesCount = seriesCount;
    this.perSeries = Array.from({ length: seriesCount }, () => new SeriesLedger());
  }

  get acked(): number {
    return this.ackedCount;
  }

  get rejected(): number {
    return this.rejectedCount;
  }

  /** Records a batch the distributor answered 2xx for, at wall-clock time `at`. */
  ack(samples: readonly LedgerSample[], at: number): void {
    for (const s of samples) {
      const l = this.perSeries[s.series];
      const last = l.ts.length > 0 ? l.ts[l.ts.length - 1] : -Infinity;
      if (s.t <= last) throw new Error(`ledger: series ${s.series} acked ${s.t} after ${last}; sends must be ordered per series`);
      l.ts.push(s.t);
      l.vs.push(s.v);
      l.ackedAt.push(at);
    }
    this.ackedCount += samples.length;
  }

  reject(samples: readonly LedgerSample[]): void {
    for (const s of samples) this.perSeries[s.series].rejected.add(s.t);
    this.rejectedCount += samples.length;
  }

  isRejected(series: number, t: number): boolean {
    return this.perSeries[series].rejected.has(t);
  }

  /** Newest timestamp of `series` whose sample (and so every earlier one) was acked at or before `at`. */
  settledUpTo(series: number, at: number): number | undefined {
    const l = this.perSeries[series];
    const i = upperBound(l.ackedAt, at) - 1;
    return i >= 0 ? l.ts[i] : undefined;
  }

  /** Acked samples of `series` with fromExclusive < t <= toInclusive, optionally only those acked by `ackedBy`. */
  samples(series: number, fromExclusive = -Infinity, toInclusive = Infinity, ackedBy = Infinity): { t: number; v: number }[] {
    const l = this.perSeries[series];
    const out: { t: number; v: number }[] = [];
    for (let i = upperBound(l.ts, fromExclusive); i < l.ts.length && l.ts[i] <= toInclusive; i++) {
      if (l.ackedAt[i] <= ackedBy) out.push({ t: l.ts[i], v: l.vs[i] });
    }
    return out;
  }

  /** [oldest, newest] acked timestamp over all series, or undefined when nothing was acked. */
  timeRange(): [number, number] | undefined {
    let lo = Infinity;
    let hi = -Infinity;
    for (const l of this.perSeries) {
      if (l.ts.length === 0) continue;
      lo = Math.min(lo, l.ts[0]);
      hi = Math.max(hi, l.ts[l.ts.length - 1]);
    }
    return lo <= hi ? [lo, hi] : undefined;
  }
}

/** First index whose value is > x in an ascending array. */
function upperBound(a: readonly number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
