// Out-of-order samples of one head series: kept sorted in typed arrays (value
// bits in two int32 words, so NaN payloads survive) and merged with the
// in-order chunks on read and when a block is cut. Only series that received
// an out-of-order sample inside the tenant's window have one.

import { HI_WORD, LO_WORD } from '../chunkenc/xor-chunk.ts';

export type OooInsert = 'added' | 'duplicate' | 'conflict';

export class OooSamples {
  ts = new Float64Array(4);
  /** words[2i] = high 32 bits, words[2i+1] = low 32 bits of value i. */
  words = new Int32Array(8);
  length = 0;

  get minTime(): number {
    return this.length > 0 ? this.ts[0] : Infinity;
  }

  get maxTime(): number {
    return this.length > 0 ? this.ts[this.length - 1] : -Infinity;
  }

  insert(t: number, hi: number, lo: number): OooInsert {
    const i = lowerBound(this.ts, this.length, t);
    if (i < this.length && this.ts[i] === t) {
      return this.words[2 * i] === (hi | 0) && this.words[2 * i + 1] === (lo | 0) ? 'duplicate' : 'conflict';
    }
    if (this.length === this.ts.length) this.grow();
    this.ts.copyWithin(i + 1, i, this.length);
    this.words.copyWithin(2 * i + 2, 2 * i, 2 * this.length);
    this.ts[i] = t;
    this.words[2 * i] = hi;
    this.words[2 * i + 1] = lo;
    this.length++;
    return 'added';
  }

  /** Index range [from, to) of samples with mint <= t <= maxt. */
  range(mint: number, maxt: number): [number, number] {
    return [lowerBound(this.ts, this.length, mint), lowerBound(this.ts, this.length, maxt + 1)];
  }

  /** Drops samples with t < mint. */
  truncateBefore(mint: number): void {
    const k = lowerBound(this.ts, this.length, mint);
    if (k === 0) return;
    this.ts.copyWithin(0, k, this.length);
    this.words.copyWithin(0, 2 * k, 2 * this.length);
    this.length -= k;
  }

  /** Copies sample i's value bits into values[j]. */
  copyValue(i: number, values: Int32Array, j: number): void {
    values[2 * j + HI_WORD] = this.words[2 * i];
    values[2 * j + LO_WORD] = this.words[2 * i + 1];
  }

  private grow(): void {
    const ts = new Float64Array(this.ts.length * 2);
    ts.set(this.ts);
    const words = new Int32Array(this.words.length * 2);
    words.set(this.words);
    this.ts = ts;
    this.words = words;
  }
}

function lowerBound(a: Float64Array, n: number, x: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
