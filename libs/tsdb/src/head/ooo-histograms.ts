// Out-of-order native histogram samples of one head series, kept sorted as
// they came (integer or float counts) beside the float OooSamples. Read back
// as Prometheus reads its out-of-order head chunks: encoded into histogram
// chunks (the first chunk's counter-reset header "unknown"), then decoded.
// Only series that received a histogram inside the tenant's window have one.

import type { NativeHistogram } from '@strata/model';
import { FLOAT_HISTOGRAM_ENCODING, HISTOGRAM_ENCODING } from '../chunkenc/chunk-encoding.ts';
import { HistogramChunkEncoder } from '../chunkenc/histogram-chunk.ts';
import { sameHistogram } from '../chunkenc/histogram-layout.ts';
import { decodeHistogramSamples, encodeHistogramChunks, type HistogramSample } from './histogram-series.ts';
import type { OooInsert } from './ooo-samples.ts';

export class OooHistograms {
  private readonly items: HistogramSample[] = [];

  get length(): number {
    return this.items.length;
  }

  get minTime(): number {
    return this.items.length > 0 ? this.items[0].timestamp : Infinity;
  }

  get maxTime(): number {
    return this.items.length > 0 ? this.items[this.items.length - 1].timestamp : -Infinity;
  }

  /**
   * Inserts in time order. The same timestamp with an identical histogram is
   * a duplicate, with another one a conflict. A sample no chunk could hold
   * (buckets not matching spans, fractional counts in an integer histogram)
   * throws here, at append, as the in-order path throws, not later on a read.
   */
  insert(t: number, h: NativeHistogram, float: boolean): OooInsert {
    const i = this.lowerBound(t);
    const at = this.items[i] as HistogramSample | undefined;
    if (at !== undefined && at.timestamp === t) return sameHistogram(at.histogram, h) ? 'duplicate' : 'conflict';
    new HistogramChunkEncoder(float ? FLOAT_HISTOGRAM_ENCODING : HISTOGRAM_ENCODING).append(t, h);
    this.items.splice(i, 0, { timestamp: t, histogram: h, float });
    return 'added';
  }

  /** The sample at t as it was appended, or null. */
  at(t: number): HistogramSample | null {
    const s = this.items[this.lowerBound(t)] as HistogramSample | undefined;
    return s !== undefined && s.timestamp === t ? s : null;
  }

  hasDataIn(mint: number, maxt: number): boolean {
    const s = this.items[this.lowerBound(mint)] as HistogramSample | undefined;
    return s !== undefined && s.timestamp <= maxt;
  }

  /** Samples with mint <= t <= maxt as a read of out-of-order chunks gives them (hints from the chunks' encoding). */
  read(mint: number, maxt: number, perChunk: number): HistogramSample[] {
    const from = this.lowerBound(mint);
    const to = this.lowerBound(maxt + 1);
    if (from === to) return [];
    return decodeHistogramSamples(encodeHistogramChunks(this.items.slice(from, to), perChunk), mint, maxt);
  }

  /** Drops samples with t < mint. */
  truncateBefore(mint: number): void {
    const k = this.lowerBound(mint);
    if (k > 0) this.items.splice(0, k);
  }

  private lowerBound(t: number): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid].timestamp < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
