// Distinct byte strings in one pool, each with an id in the order first seen: for tables
// that meet the same label names and values over and over (the distributor's symbols,
// an ingester's record symbols) and should find them without making a string each time.

/** Distinct byte strings, each with an id in the order first seen. */
export class ByteStrings {
  count = 0;
  /** Whether the last id() added its string. */
  added = false;
  private pool = new Uint8Array(16 * 1024);
  private poolLen = 0;
  private starts = new Int32Array(1024);
  private ends = new Int32Array(1024);
  private hashes = new Int32Array(1024);
  /** Open addressing: id + 1, 0 = empty. */
  private slots = new Int32Array(2048);
  /** Views for equals(): of the pool, and of the last input's buffer (request bodies reuse theirs). */
  private poolView = new DataView(this.pool.buffer);
  private inputView: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));

  reset(): void {
    this.slots.fill(0);
    this.count = 0;
    this.poolLen = 0;
  }

  /** The id of bytes [start, end) of `b`, added when new. */
  id(b: Uint8Array, start: number, end: number): number {
    const h = hashBytes(b, start, end);
    const len = end - start;
    const mask = this.slots.length - 1;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const s = this.slots[slot];
      if (s === 0) break;
      const r = s - 1;
      if (this.hashes[r] !== h) continue;
      const from = this.starts[r];
      if (this.ends[r] - from !== len) continue;
      const pool = this.pool;
      let i = 0;
      while (i < len && pool[from + i] === b[start + i]) i++;
      if (i === len) {
        this.added = false;
        return r;
      }
    }
    this.added = true;
    return this.add(b, start, end, h);
  }

  /** Whether string `id` is bytes [start, end) of `b`: compared four bytes a step. */
  equals(id: number, b: Uint8Array, start: number, end: number): boolean {
    const from = this.starts[id];
    const len = end - start;
    if (this.ends[id] - from !== len) return false;
    if (this.poolView.buffer !== this.pool.buffer) this.poolView = new DataView(this.pool.buffer);
    if (this.inputView.buffer !== b.buffer) this.inputView = new DataView(b.buffer);
    const pv = this.poolView;
    const iv = this.inputView;
    const at = b.byteOffset + start;
    let i = 0;
    for (; i + 4 <= len; i += 4) if (pv.getInt32(from + i, true) !== iv.getInt32(at + i, true)) return false;
    const pool = this.pool;
    for (; i < len; i++) if (pool[from + i] !== b[start + i]) return false;
    return true;
  }

  get bytesUsed(): number {
    return this.poolLen;
  }

  /** The length of string `id`. */
  length(id: number): number {
    return this.ends[id] - this.starts[id];
  }

  /** Copies string `id` into `out` at `pos`; returns the position after it. */
  copy(id: number, out: Uint8Array, pos: number): number {
    const pool = this.pool;
    for (let i = this.starts[id], end = this.ends[id]; i < end; i++) out[pos++] = pool[i];
    return pos;
  }

  private add(b: Uint8Array, start: number, end: number, h: number): number {
    const len = end - start;
    if (this.poolLen + len > this.pool.length) this.pool = grown(this.pool, this.poolLen + len);
    this.pool.set(b.subarray(start, end), this.poolLen);
    const r = this.count++;
    if (r === this.starts.length) {
      this.starts = grown(this.starts, r + 1);
      this.ends = grown(this.ends, r + 1);
      this.hashes = grown(this.hashes, r + 1);
    }
    this.starts[r] = this.poolLen;
    this.ends[r] = this.poolLen + len;
    this.hashes[r] = h;
    this.poolLen += len;
    if (this.count * 2 > this.slots.length) this.rehash();
    else this.place(r);
    return r;
  }

  private place(r: number): void {
    const mask = this.slots.length - 1;
    let slot = this.hashes[r] & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = r + 1;
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    for (let r = 0; r < this.count; r++) this.place(r);
  }
}

/** A 32-bit hash of bytes [start, end), four bytes a step (only for finding equal strings: any collision is compared). */
function hashBytes(b: Uint8Array, start: number, end: number): number {
  let h = (end - start) ^ 0x9747b28c;
  let i = start;
  for (; i + 4 <= end; i += 4) h = Math.imul(h ^ (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)), 0x5bd1e995) ^ (h >>> 13);
  for (; i < end; i++) h = Math.imul(h ^ b[i], 0x01000193);
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  return h ^ (h >>> 13);
}

/** A copy of `a` at least `atLeast` long (doubling), for arrays that grow with their input. */
export function grown<T extends Uint8Array | Int32Array | Uint32Array | Float64Array>(a: T, atLeast: number): T {
  let n = a.length * 2;
  while (n < atLeast) n *= 2;
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}
