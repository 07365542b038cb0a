// The ingester's instance limits (Mimir's -ingester.instance-limits.*). Every record in Kafka was
// acknowledged to a sender, so an ingester over a limit still appends all of it; it tells the
// distributors instead (through its partition ring entry), and they refuse writes to its partition
// with 503 until it is back under. What overshoots is bounded by the records in flight then.

import { getHeapStatistics } from 'node:v8';

export interface InstanceLimits {
  /** -ingester.instance-limits.max-series: series in all heads; 0: no limit. */
  maxSeries: number;
  /** V8 heap in use, as a share of its limit, past which writes are refused; 0: no limit. */
  maxHeapShare: number;
}

/** Past this share of the V8 heap limit the process is near its end: V8 GCs back to back, then aborts. */
export const DEFAULT_MAX_HEAP_SHARE = 0.85;

/** Judges the limits after each batch of records and calls `onChange` when the verdict changes. */
export class InstanceLimitGate {
  private verdict: string | undefined;

  private readonly limits: InstanceLimits;
  private readonly numSeries: () => number;
  private readonly onChange: (reason: string | undefined) => void;
  private readonly heap: () => { used_heap_size: number; heap_size_limit: number };

  constructor(opts: {
    limits: InstanceLimits;
    numSeries: () => number;
    onChange: (reason: string | undefined) => void;
    heap?: () => { used_heap_size: number; heap_size_limit: number };
  }) {
    this.limits = opts.limits;
    this.numSeries = opts.numSeries;
    this.onChange = opts.onChange;
    this.heap = opts.heap ?? getHeapStatistics;
  }

  /** Why writes should be refused now; undefined when under every limit. */
  get reason(): string | undefined {
    return this.verdict;
  }

  check(): void {
    const reason = this.judge();
    if (reason === this.verdict) return;
    this.verdict = reason;
    this.onChange(reason);
  }

  private judge(): string | undefined {
    const { maxSeries, maxHeapShare } = this.limits;
    const series = maxSeries > 0 ? this.numSeries() : 0;
    if (maxSeries > 0 && series >= maxSeries) {
      return `${series} series in memory, at the limit of ${maxSeries} (err-strata-ingester-max-series; -ingester.instance-limits.max-series, by default from -server.memory-limit)`;
    }
    if (maxHeapShare <= 0) return undefined;
    const h = this.heap();
    if (h.used_heap_size < h.heap_size_limit * maxHeapShare) return undefined;
    return (
      `V8 heap ${Math.round(h.used_heap_size / 2 ** 20)} MiB in use of its ${Math.round(h.heap_size_limit / 2 ** 20)} MiB limit, over ${maxHeapShare * 100}% ` +
      '(err-strata-ingester-max-heap; the heap is sized from -server.memory-limit)'
    );
  }
}
