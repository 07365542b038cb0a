// One series' samples in growable typed arrays (no per-sample objects).
// Appends must be in time order; the head decides what to reject.

const INITIAL_CAPACITY = 16;

export class MemorySeries {
  timestamps = new Float64Array(INITIAL_CAPACITY);
  values = new Float64Array(INITIAL_CAPACITY);
  private valueBits = new Uint32Array(this.values.buffer);
  length = 0;

  constructor(
    readonly id: number,
    readonly labels: { name: string; value: string }[],
  ) {}

  get lastTimestamp(): number {
    return this.length > 0 ? this.timestamps[this.length - 1] : -Infinity;
  }

  /** True if the last sample's value has exactly the bits of `values[i]`. */
  lastValueEquals(values: Float64Array, i: number): boolean {
    const other = new Uint32Array(values.buffer, values.byteOffset + i * 8, 2);
    const last = (this.length - 1) * 2;
    return this.valueBits[last] === other[0] && this.valueBits[last + 1] === other[1];
  }

  /** Copies sample i of `values` bit-exactly (stale markers survive). */
  push(t: number, values: Float64Array, i: number): void {
    if (this.length === this.timestamps.length) this.grow();
    this.timestamps[this.length] = t;
    const src = new Uint32Array(values.buffer, values.byteOffset + i * 8, 2);
    this.valueBits[this.length * 2] = src[0];
    this.valueBits[this.length * 2 + 1] = src[1];
    this.length++;
  }

  /** Index range [from, to) of samples with mint <= t <= maxt. */
  range(mint: number, maxt: number): [number, number] {
    return [lowerBound(this.timestamps, this.length, mint), lowerBound(this.timestamps, this.length, maxt + 1)];
  }

  private grow(): void {
    const cap = this.timestamps.length * 2;
    const ts = new Float64Array(cap);
    ts.set(this.timestamps);
    const vs = new Float64Array(cap);
    new Uint32Array(vs.buffer).set(this.valueBits);
    this.timestamps = ts;
    this.values = vs;
    this.valueBits = new Uint32Array(vs.buffer);
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
