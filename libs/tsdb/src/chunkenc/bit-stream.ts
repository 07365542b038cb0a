// MSB-first bit streams over byte buffers, the layout Prometheus' bstream uses
// for XOR chunks. Bits move as int32 (V8 keeps those unboxed); never BigInt here.

export class BitWriter {
  buf: Uint8Array;
  /** Bytes fully written; pending bits wait in `acc`. */
  private pos: number;
  private acc = 0;
  private accBits = 0;
  private readonly reserved: number;

  /** `reservedBytes` leading bytes are left for the owner (e.g. a chunk header). */
  constructor(capacity = 128, reservedBytes = 0) {
    this.buf = new Uint8Array(Math.max(capacity, reservedBytes + 16));
    this.reserved = reservedBytes;
    this.pos = reservedBytes;
  }

  get bitLength(): number {
    return this.pos * 8 + this.accBits;
  }

  get byteLength(): number {
    return this.pos + ((this.accBits + 7) >>> 3);
  }

  reset(): void {
    this.pos = this.reserved;
    this.acc = 0;
    this.accBits = 0;
  }

  /** Writes the low `n` bits of `v` (1 <= n <= 32); higher bits of `v` are ignored. */
  writeBits(v: number, n: number): void {
    const free = 32 - this.accBits;
    if (n < free) {
      this.acc = (this.acc << n) | (v & ((1 << n) - 1));
      this.accBits += n;
      return;
    }
    const rest = n - free;
    const word = free === 32 ? v : (this.acc << free) | ((v >>> rest) & ((1 << free) - 1));
    let pos = this.pos;
    if (pos + 8 > this.buf.length) this.grow();
    const buf = this.buf;
    buf[pos] = word >>> 24;
    buf[pos + 1] = word >>> 16;
    buf[pos + 2] = word >>> 8;
    buf[pos + 3] = word;
    this.pos = pos + 4;
    this.acc = rest === 0 ? 0 : v & ((1 << rest) - 1);
    this.accBits = rest;
  }

  writeBit(bit: number): void {
    this.writeBits(bit, 1);
  }

  writeByte(b: number): void {
    this.writeBits(b, 8);
  }

  /** The written bytes, last byte zero-padded (a view valid until the next write). */
  bytes(): Uint8Array {
    const n = this.accBits;
    if (n > 0) {
      if (this.pos + 4 > this.buf.length) this.grow();
      const word = this.acc << (32 - n);
      const buf = this.buf;
      for (let k = 0; k * 8 < n; k++) buf[this.pos + k] = word >>> (24 - 8 * k);
    }
    return this.buf.subarray(0, this.byteLength);
  }

  /** bytes() plus one zero byte (for byte-exact compatibility with Go's bstream). */
  bytesWithTrailingZero(): Uint8Array {
    const n = this.byteLength;
    if (n + 1 > this.buf.length) this.grow();
    this.bytes();
    this.buf[n] = 0;
    return this.buf.subarray(0, n + 1);
  }

  private grow(): void {
    const next = new Uint8Array(this.buf.length * 2);
    next.set(this.buf);
    this.buf = next;
  }
}

export class BitReader {
  readonly buf: Uint8Array;
  /** Next bit to read, counted from the start of `buf`. */
  pos: number;
  private readonly end: number;
  private readonly endBits: number;

  constructor(buf: Uint8Array, startByte = 0, endByte = buf.length) {
    this.buf = buf;
    this.end = endByte;
    this.pos = startByte * 8;
    this.endBits = endByte * 8;
  }

  get remainingBits(): number {
    return this.endBits - this.pos;
  }

  readBit(): number {
    const pos = this.pos;
    if (pos >= this.endBits) throw new RangeError('bit stream: unexpected end of data');
    this.pos = pos + 1;
    return (this.buf[pos >>> 3] >>> (7 - (pos & 7))) & 1;
  }

  /** Reads `n` bits (1 <= n <= 32): non-negative for n < 32, an int32 for n = 32. */
  readBits(n: number): number {
    const pos = this.pos;
    if (pos + n > this.endBits) throw new RangeError('bit stream: unexpected end of data');
    this.pos = pos + n;
    const idx = pos >>> 3;
    const shift = pos & 7;
    const buf = this.buf;
    let x: number;
    if (idx + 5 <= this.end) {
      // A 40-bit window holds any 32 bits at any alignment.
      x = (buf[idx] << 24) | (buf[idx + 1] << 16) | (buf[idx + 2] << 8) | buf[idx + 3];
      if (shift !== 0) x = (x << shift) | (buf[idx + 4] >>> (8 - shift));
    } else {
      x = 0;
      for (let k = 0; k < 5; k++) {
        const i = idx + k;
        x = k < 4 ? (x << 8) | (i < this.end ? buf[i] : 0) : shift === 0 ? x : (x << shift) | ((i < this.end ? buf[i] : 0) >>> (8 - shift));
      }
    }
    return n === 32 ? x : x >>> (32 - n);
  }

  readByte(): number {
    return this.readBits(8);
  }
}
