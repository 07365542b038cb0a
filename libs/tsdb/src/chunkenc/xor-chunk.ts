// Gorilla/XOR float chunks, byte for byte in Prometheus' encoding (chunk encoding 1).
// Values travel as raw IEEE-754 bits so NaN payloads (stale markers) are never
// canonicalised; timestamps are integer ms within ±2^51 so all deltas stay exact.

import { BitReader } from './bit-stream.ts';
import { int64Hi, int64Lo, readUvarintAsInt64, readVarintNumber, writeUvarintNumber, writeVarintNumber } from '../encoding/int64.ts';

/** The sample count is a uint16 in the chunk header. */
export const MAX_XOR_CHUNK_SAMPLES = 0xffff;
/** |t| bound that keeps every delta and delta-of-delta an exact JS number. */
export const MAX_ABS_TIMESTAMP = 2 ** 51;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
/** Index of the high / low 32-bit word of a float64 inside a Uint32Array view. */
export const HI_WORD = LITTLE_ENDIAN ? 1 : 0;
export const LO_WORD = LITTLE_ENDIAN ? 0 : 1;

const EMPTY = new Uint8Array(0);
const scratchF64 = new Float64Array(1);
const scratchI32 = new Int32Array(scratchF64.buffer);
/** appendBits' time and value words, handed to appendAt. */
const scratchT = new Float64Array(1);
const scratchW = new Int32Array(2);

function ctz32(x: number): number {
  return 31 - Math.clz32(x & -x);
}

export class XorChunkEncoder {
  // The bit stream lives in the encoder itself (not a BitWriter) to keep the
  // hot path free of an extra object hop: whole 32-bit words go to `buf`,
  // pending bits wait in `acc`. The chunk occupies buf[base, limit): bytes
  // base..base+1 are the sample count; `pos` is absolute. A subclass may place
  // chunks in shared slabs by overriding grow() (the head does, per series).
  protected buf: Uint8Array;
  protected base = 0;
  protected limit: number;
  protected pos = 2;
  private acc = 0;
  private accBits = 0;

  private n = 0;
  /** Last sample (kept across reset(): a new chunk's first sample does not depend on it). */
  protected t = 0;
  private tDelta = 0;
  private vHi = 0;
  private vLo = 0;
  private leading = 0xff;
  private trailing = 0;
  /**
   * Prometheus' bstream writes whole bytes with writeByte, which leaves an empty
   * trailing byte when the stream ends byte-aligned after one. We mirror that so
   * our chunks are byte-identical to Prometheus' (readers ignore the byte).
   */
  private endsWithByte = false;

  /** The default capacity holds 120 samples of almost any data without growing; 0 leaves allocation to grow(). */
  constructor(capacityBytes = 1024) {
    this.buf = capacityBytes > 0 ? new Uint8Array(Math.max(capacityBytes, 16)) : EMPTY;
    this.limit = this.buf.length;
  }

  /** Starts a new, empty chunk in the same space (views from bytes() become invalid). */
  reset(): void {
    this.pos = this.base + 2;
    this.acc = 0;
    this.accBits = 0;
    this.n = 0;
    this.leading = 0xff;
    this.trailing = 0;
    this.endsWithByte = false;
  }

  get numSamples(): number {
    return this.n;
  }

  /** Time of the last appended sample (also after reset()). */
  get lastTimestamp(): number {
    return this.t;
  }

  /** High / low 32 bits (int32) of the last appended value (also after reset()). */
  get lastValueHi(): number {
    return this.vHi;
  }

  get lastValueLo(): number {
    return this.vLo;
  }

  /** Appends (t, value) with the value given as its raw 64 bits in two 32-bit halves (int32 or uint32). */
  appendBits(t: number, hi: number, lo: number): void {
    scratchT[0] = t;
    scratchW[HI_WORD] = hi;
    scratchW[LO_WORD] = lo;
    this.appendAt(scratchT, 0, scratchW, 0);
  }

  /**
   * Appends timestamps[i] with the value whose two words are at words[w] (HI_WORD, LO_WORD order).
   * The hot paths append this way: a double (or an int32 outside the small-integer range) passed
   * to a call that is not inlined is boxed on the heap, so times and value words stay in arrays.
   */
  appendAt(timestamps: Float64Array, i: number, words: Int32Array, w: number): void {
    const t = timestamps[i];
    if (!(t >= -MAX_ABS_TIMESTAMP && t <= MAX_ABS_TIMESTAMP) || Math.floor(t) !== t) {
      throw new RangeError(`timestamp ${t} is not an integer within ±2^51 ms`);
    }
    const n = this.n;
    if (n === MAX_XOR_CHUNK_SAMPLES) throw new RangeError('XOR chunk is full (65535 samples)');
    if (n >= 2) {
      const d = t - this.t;
      const dod = d - this.tDelta;
      // Bucket bounds are Prometheus' bitRange: -(2^(n-1)-1) <= dod <= 2^(n-1).
      if (dod === 0) {
        this.put(0, 1);
      } else if (dod >= -8191 && dod <= 8192) {
        this.put((0b10 << 14) | (dod & 0x3fff), 16);
      } else if (dod >= -65535 && dod <= 65536) {
        this.put((0b110 << 17) | (dod & 0x1ffff), 20);
      } else if (dod >= -524287 && dod <= 524288) {
        this.put((0b1110 << 20) | (dod & 0xfffff), 24);
      } else {
        this.put(0b1111, 4);
        this.put(int64Hi(dod), 32);
        this.put(int64Lo(dod), 32);
      }
      this.tDelta = d;
      this.putValue(words, w);
    } else if (n === 0) {
      writeVarintNumber(this, t);
      this.put(words[w + HI_WORD], 32);
      this.put(words[w + LO_WORD], 32);
      this.endsWithByte = true;
    } else {
      const d = t - this.t;
      writeUvarintNumber(this, d);
      this.tDelta = d;
      this.putValue(words, w);
    }
    this.t = t;
    this.vHi = words[w + HI_WORD];
    this.vLo = words[w + LO_WORD];
    this.n = n + 1;
  }

  /**
   * Appends a JS number. Bit-exact for any value that reached here without
   * passing through a JS Array (V8 canonicalises NaNs stored in arrays); prefer
   * appendBits / appendRange when NaN payloads matter.
   */
  append(t: number, v: number): void {
    scratchF64[0] = v;
    this.appendBits(t, scratchI32[HI_WORD], scratchI32[LO_WORD]);
  }

  /** Appends samples [from, to) of typed arrays, copying value bits exactly. */
  appendRange(timestamps: Float64Array, values: Float64Array, from: number, to: number): void {
    const words = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
    for (let i = from; i < to; i++) this.appendAt(timestamps, i, words, 2 * i);
  }

  /** The chunk bytes including the 2-byte sample count (a view valid until the next append or reset). */
  bytes(): Uint8Array {
    if (this.pos + 9 > this.limit) this.grow();
    const buf = this.buf;
    buf[this.base] = this.n >>> 8;
    buf[this.base + 1] = this.n & 0xff;
    let len = this.pos;
    const k = this.accBits;
    if (k > 0) {
      const word = this.acc << (32 - k);
      for (let b = 0; b * 8 < k; b++) buf[len++] = word >>> (24 - 8 * b);
    }
    if ((k & 7) === 0 && this.endsWithByte) buf[len++] = 0;
    return buf.subarray(this.base, len);
  }

  /** ByteSink for the header varints (the encoder is its own sink: no extra object per encoder). */
  writeByte(b: number): void {
    this.put(b, 8);
  }

  /** Writes the low `n` bits of `v` (1 <= n <= 32). */
  private put(v: number, n: number): void {
    const free = 32 - this.accBits;
    if (n < free) {
      this.acc = (this.acc << n) | (v & ((1 << n) - 1));
      this.accBits += n;
      return;
    }
    const rest = n - free;
    const word = free === 32 ? v : (this.acc << free) | ((v >>> rest) & ((1 << free) - 1));
    if (this.pos + 13 > this.limit) this.grow();
    const pos = this.pos;
    const buf = this.buf;
    buf[pos] = word >>> 24;
    buf[pos + 1] = word >>> 16;
    buf[pos + 2] = word >>> 8;
    buf[pos + 3] = word;
    this.pos = pos + 4;
    this.acc = rest === 0 ? 0 : v & ((1 << rest) - 1);
    this.accBits = rest;
  }

  /** Makes room for at least 13 more bytes: moves the chunk so far to a larger space. */
  protected grow(): void {
    const used = this.pos - this.base;
    const next = new Uint8Array(Math.max(64, (this.limit - this.base) * 2));
    next.set(this.buf.subarray(this.base, this.pos));
    this.buf = next;
    this.base = 0;
    this.pos = used;
    this.limit = next.length;
  }

  /** Moves the chunk so far into buf[base, limit) of another buffer (for subclasses' grow()). */
  protected moveTo(buf: Uint8Array, base: number, limit: number): void {
    const used = this.pos - this.base;
    if (used > 0) buf.set(this.buf.subarray(this.base, this.pos), base);
    this.buf = buf;
    this.base = base;
    this.pos = base + used;
    this.limit = limit;
  }

  /** Gives up the space of an empty chunk (just reset()): the next append calls grow() first. */
  protected detach(): void {
    this.buf = EMPTY;
    this.pos -= this.base;
    this.base = 0;
    this.limit = 0;
  }

  /** The XOR of the value at words[w] with the last one (see appendAt). */
  private putValue(words: Int32Array, w: number): void {
    const xh = words[w + HI_WORD] ^ this.vHi;
    const xl = words[w + LO_WORD] ^ this.vLo;
    if (xh === 0 && xl === 0) {
      this.put(0, 1);
      this.endsWithByte = false;
      return;
    }
    let leading = xh !== 0 ? Math.clz32(xh) : 32 + Math.clz32(xl);
    const trailing = xl !== 0 ? ctz32(xl) : 32 + ctz32(xh);
    // Prometheus clamps leading zeros so they fit the 5-bit field.
    if (leading >= 32) leading = 31;
    let shift: number;
    let sig: number;
    if (this.leading !== 0xff && leading >= this.leading && trailing >= this.trailing) {
      this.put(0b10, 2);
      shift = this.trailing;
      sig = 64 - this.leading - shift;
    } else {
      this.leading = leading;
      this.trailing = trailing;
      shift = trailing;
      sig = 64 - leading - trailing;
      // 64 significant bits do not fit in 6 bits; they are written as 0 and read back as 64.
      this.put((0b11 << 11) | (leading << 6) | (sig & 63), 13);
    }
    if (shift === 0) {
      if (sig > 32) {
        this.put(xh, sig - 32);
        this.put(xl, 32);
      } else {
        this.put(xl, sig);
      }
    } else if (shift < 32) {
      const sl = (xl >>> shift) | (xh << (32 - shift));
      if (sig > 32) {
        this.put(xh >>> shift, sig - 32);
        this.put(sl, 32);
      } else {
        this.put(sl, sig);
      }
    } else {
      this.put(shift === 32 ? xh : xh >>> (shift - 32), sig);
    }
    this.endsWithByte = (sig & 7) === 0;
  }
}

/** Number of samples in an XOR chunk (its 2-byte big-endian header). */
export function xorChunkNumSamples(chunk: Uint8Array): number {
  if (chunk.length < 2) throw new RangeError('XOR chunk shorter than its 2-byte header');
  return (chunk[0] << 8) | chunk[1];
}

/** The chunk being decoded as big-endian 32-bit words, then PAD_WORDS zero words (one sample reads at most ~150 bits past the last check). */
let words32 = new Int32Array(1024);
const PAD_WORDS = 6;

/** Loads `chunk` into words32 (one pass, a fraction of the decoding: a 120-sample chunk is ~50 words). */
function loadWords(chunk: Uint8Array): Int32Array {
  const len = chunk.length;
  const n = (len + 3) >>> 2;
  if (words32.length < n + PAD_WORDS) words32 = new Int32Array(Math.max(n + PAD_WORDS, words32.length * 2));
  const w = words32;
  const whole = len >>> 2;
  for (let i = 0, b = 0; i < whole; i++, b += 4) w[i] = (chunk[b] << 24) | (chunk[b + 1] << 16) | (chunk[b + 2] << 8) | chunk[b + 3];
  if (whole < n) {
    let x = 0;
    for (let b = whole * 4; b < whole * 4 + 4; b++) x = (x << 8) | (b < len ? chunk[b] : 0);
    w[whole] = x;
  }
  for (let i = n; i < n + PAD_WORDS; i++) w[i] = 0;
  return w;
}

/** Up to 32 bits at bit position `pos` of loaded words: two loads at any alignment. */
function peek(w: Int32Array, pos: number, n: number): number {
  const i = pos >>> 5;
  const s = pos & 31;
  const x = s === 0 ? w[i] : (w[i] << s) | (w[i + 1] >>> (32 - s));
  return n === 32 ? x : x >>> (32 - n);
}

/** A delta of delta of `bits` (14, 17 or 20) at `pos`: Prometheus' two's complement, where the lowest value stands for the highest. */
function dodField(buf: Int32Array, pos: number, bits: number): number {
  const dod = peek(buf, pos, bits);
  return dod > 1 << (bits - 1) ? dod - (1 << bits) : dod;
}

/** A 64-bit delta of delta (after the '1111' prefix at `pos`): timestamps too far apart for 20 bits. */
function readDod64(buf: Int32Array, pos: number): number {
  return peek(buf, pos + 4, 32) * 4294967296 + (peek(buf, pos + 36, 32) >>> 0);
}

/** The trailing zero bits of a value XOR from its control block's leading zeros and significant bits (0 stands for 64). */
function trailingBits(leading: number, significant: number): number {
  const trailing = 64 - leading - (significant === 0 ? 64 : significant);
  if (trailing < 0) throw new RangeError('XOR chunk corrupt: leading + significant bits exceed 64');
  return trailing;
}

/** What readHeader read: the first timestamp and delta; the first value's high and low words and the bit position after the header. */
const headerTimes = new Float64Array(2);
const headerWords = new Int32Array(3);

/**
 * Reads a chunk's first sample and first delta into headerTimes and headerWords. Apart from the
 * loop, so that V8's inlining budget for decodeXorChunkInto goes to the loop's helpers.
 */
function readHeader(chunk: Uint8Array, total: number): void {
  const r = new BitReader(chunk, 2);
  headerTimes[0] = readVarintNumber(r);
  headerWords[0] = r.readBits(32);
  headerWords[1] = r.readBits(32);
  headerTimes[1] = total > 1 ? readUvarintAsInt64(r) : 0;
  headerWords[2] = r.pos;
}

function checkRoom(total: number, timestamps: Float64Array, values: Float64Array, offset: number): void {
  if (offset + total > timestamps.length || offset + total > values.length) {
    throw new RangeError(`output arrays too small for ${total} samples at offset ${offset}`);
  }
}

/** Writes sample `out` (its value as two words of the values array); returns the next index. */
function putSample(timestamps: Float64Array, words: Int32Array, out: number, t: number, vHi: number, vLo: number): number {
  timestamps[out] = t;
  words[2 * out + HI_WORD] = vHi;
  words[2 * out + LO_WORD] = vLo;
  return out + 1;
}

/**
 * Decodes the samples of an XOR chunk with mint <= t <= maxt into
 * timestamps/values starting at `offset`; returns how many were written. The
 * arrays need room for xorChunkNumSamples(chunk) samples. Value bits are copied
 * exactly. The loop keeps its state in locals and calls only functions V8 inlines
 * (readDod64 aside, for gaps beyond 20 bits): a call per sample costs a tenth of it.
 */
export function decodeXorChunkInto(
  chunk: Uint8Array,
  timestamps: Float64Array,
  values: Float64Array,
  offset: number,
  mint = -Infinity,
  maxt = Infinity,
): number {
  const total = xorChunkNumSamples(chunk);
  if (total === 0) return 0;
  checkRoom(total, timestamps, values, offset);
  const words = new Int32Array(values.buffer, values.byteOffset, values.length * 2);

  // The header varints go through a checked reader (readHeader); the bit-packed rest reads
  // from a zero-padded copy so the hot loop needs no bounds checks.
  readHeader(chunk, total);
  let t = headerTimes[0];
  let tDelta = headerTimes[1];
  let vHi = headerWords[0];
  let vLo = headerWords[1];
  let pos = headerWords[2];
  const buf = loadWords(chunk);
  const endBits = chunk.length * 8;

  let out = offset;
  if (t >= mint && t <= maxt) out = putSample(timestamps, words, out, t, vHi, vLo);
  let leading = 0;
  let trailing = 0;
  for (let i = 1; i < total; i++) {
    if (i > 1) {
      const ctl = peek(buf, pos, 4);
      if (ctl < 8) {
        pos += 1;
      } else if (ctl < 12) {
        tDelta += dodField(buf, pos + 2, 14);
        pos += 16;
      } else if (ctl < 14) {
        tDelta += dodField(buf, pos + 3, 17);
        pos += 20;
      } else if (ctl === 14) {
        tDelta += dodField(buf, pos + 4, 20);
        pos += 24;
      } else {
        tDelta += readDod64(buf, pos);
        pos += 68;
      }
    }
    t += tDelta;

    const vctl = peek(buf, pos, 2);
    if (vctl < 2) {
      pos += 1;
    } else {
      if (vctl === 3) {
        const c = peek(buf, pos + 2, 11);
        leading = c >>> 6;
        trailing = trailingBits(leading, c & 63);
      }
      pos += vctl === 3 ? 13 : 2;
      // The significant bits: the low 32 (or all) in sl, any more in sh.
      const sig = 64 - leading - trailing;
      const sh = sig > 32 ? peek(buf, pos, sig - 32) : 0;
      const sl = sig > 32 ? peek(buf, pos + sig - 32, 32) : peek(buf, pos, sig);
      pos += sig;
      if (trailing === 0) {
        vHi ^= sh;
        vLo ^= sl;
      } else if (trailing < 32) {
        vHi ^= (sh << trailing) | (sl >>> (32 - trailing));
        vLo ^= sl << trailing;
      } else {
        vHi ^= sl << (trailing - 32);
      }
    }
    if (pos > endBits) throw new RangeError('XOR chunk corrupt: data ends before its sample count');
    if (t >= mint && t <= maxt) out = putSample(timestamps, words, out, t, vHi, vLo);
    else if (t > maxt) break;
  }
  return out - offset;
}

/** Decodes a whole XOR chunk into fresh arrays. */
export function decodeXorChunk(chunk: Uint8Array): { timestamps: Float64Array; values: Float64Array } {
  const n = xorChunkNumSamples(chunk);
  const timestamps = new Float64Array(n);
  const values = new Float64Array(n);
  decodeXorChunkInto(chunk, timestamps, values, 0);
  return { timestamps, values };
}

/** Sample-at-a-time iteration over a chunk (decodes the chunk once up front). */
export class XorChunkIterator {
  private timestamps = new Float64Array(0);
  private values = new Float64Array(0);
  private n = 0;
  private i = -1;

  constructor(chunk?: Uint8Array) {
    if (chunk) this.reset(chunk);
  }

  reset(chunk: Uint8Array): void {
    const n = xorChunkNumSamples(chunk);
    if (this.timestamps.length < n) {
      this.timestamps = new Float64Array(n);
      this.values = new Float64Array(n);
    }
    this.n = decodeXorChunkInto(chunk, this.timestamps, this.values, 0);
    this.i = -1;
  }

  next(): boolean {
    if (this.i + 1 >= this.n) return false;
    this.i++;
    return true;
  }

  /** Advances to the first sample with t' >= t. */
  seek(t: number): boolean {
    if (this.i < 0) this.i = 0;
    while (this.i < this.n && this.timestamps[this.i] < t) this.i++;
    return this.i < this.n;
  }

  get t(): number {
    return this.timestamps[this.i];
  }

  get v(): number {
    return this.values[this.i];
  }

  /** The current value's raw bits written into values[index] (exact, unlike `v` through an Array). */
  copyValueTo(values: Float64Array, index: number): void {
    const src = new Uint32Array(this.values.buffer, this.i * 8, 2);
    const dst = new Uint32Array(values.buffer, values.byteOffset + index * 8, 2);
    dst[0] = src[0];
    dst[1] = src[1];
  }
}
