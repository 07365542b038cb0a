// Protobuf wire primitives over Uint8Array for the remote_write hot path.
// Must never allocate per field: positions are plain numbers, strings are sliced
// straight out of the input, and every bound is checked against the enclosing message.

import { isUtf8 } from 'node:buffer';
import { badProtobuf, type RemoteWriteError } from './errors.ts';

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
const WIRE_START_GROUP = 3;
const WIRE_END_GROUP = 4;
export const WIRE_FIXED32 = 5;

const WIRE_NAMES = ['varint', 'fixed64', 'length-delimited', 'start-group', 'end-group', 'fixed32'];

/** Deeper group nesting than this is an attack, not a message. */
const MAX_GROUP_DEPTH = 100;

/** Protobuf is little-endian; Float64Array uses the platform's order. */
export const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// Buffer#utf8Slice is what Buffer#toString('utf8') calls after its argument
// checks; on ~9-byte label strings it measured ~80 ns a string against ~100 ns
// for toString and ~130-150 ns for a shared TextDecoder (bench/decode.bench.ts).
// Fall back to toString if a Node release drops it.
type Utf8Slice = (this: Buffer, start: number, end: number) => string;
const utf8Slice: Utf8Slice =
  typeof (Buffer.prototype as unknown as { utf8Slice?: Utf8Slice }).utf8Slice === 'function'
    ? (Buffer.prototype as unknown as { utf8Slice: Utf8Slice }).utf8Slice
    : function (this: Buffer, start: number, end: number) {
        return this.toString('utf8', start, end);
      };

// A direct-mapped table of recently decoded short ASCII strings, shared by all
// readers: bounded (16Ki entries of at most 64 bytes), and a hit skips the native
// call and hands back the same string, which is what interning is for.
const INTERN_MAX_BYTES = 64;
const INTERN_MASK = (1 << 14) - 1;
const internTable: string[] = new Array<string>(INTERN_MASK + 1).fill('');
/** int64()'s result, read back from int64Into. */
const int64Scratch = new Float64Array(1);

/** Reads protobuf fields from one buffer; one instance per request, positions are absolute. */
export class ProtoReader {
  readonly buf: Buffer;
  /** The same bytes as a plain Uint8Array, for cheap views. */
  readonly bytes: Uint8Array;
  pos = 0;
  /** Where the field whose tag was read last starts; error messages point here. */
  fieldStart = 0;
  /** Set when a string held bytes that are not valid UTF-8 (it was decoded with U+FFFD). */
  invalidUtf8 = false;

  constructor(input: Uint8Array) {
    this.buf = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    this.bytes = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  }

  /** Reads a tag: `field << 3 | wireType`. Callers switch on the whole tag. */
  tag(end: number, msg: string): number {
    const pos = this.pos;
    this.fieldStart = pos;
    if (pos < end) {
      const b = this.buf[pos];
      if (b < 0x80) {
        if (b < 8) throw this.fail(`invalid field number 0 in ${msg}`, pos);
        this.pos = pos + 1;
        return b;
      }
    }
    const tag = this.uvarint(end, 0, msg);
    if (tag > 0xffffffff) throw this.fail(`tag ${tag} out of range in ${msg}`, pos);
    if (tag < 8) throw this.fail(`invalid field number 0 in ${msg}`, pos);
    return tag;
  }

  /** Unsigned varint of up to 10 bytes as a number; exact below 2^53. */
  uvarint(end: number, field: number, msg: string): number {
    const buf = this.buf;
    let pos = this.pos;
    if (pos < end) {
      const b = buf[pos];
      if (b < 0x80) {
        this.pos = pos + 1;
        return b;
      }
    }
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (pos >= end) throw this.truncated('varint', field, msg);
      const b = buf[pos++];
      if (i === 9 && b > 1) break;
      v += (b & 0x7f) * mul;
      if (b < 0x80) {
        this.pos = pos;
        return v;
      }
      mul *= 128;
    }
    throw this.fail(`varint overflows 64 bits in field ${field} of ${msg}`, this.fieldStart);
  }

  /** int64 varint as a number (see int64Into). */
  int64(end: number, field: number, msg: string): number {
    this.int64Into(int64Scratch, 0, end, field, msg);
    return int64Scratch[0];
  }

  /**
   * int64 varint as a number, exact for |v| < 2^53, written to out[index]. Negative values are
   * sign-extended to 10 bytes on the wire, so they take the split 32-bit path. A hot loop that
   * stores a timestamp this way allocates nothing, where a double returned from a call that is
   * not inlined is boxed on the heap.
   */
  int64Into(out: Float64Array, index: number, end: number, field: number, msg: string): void {
    const buf = this.buf;
    let pos = this.pos;
    const fastEnd = end < pos + 7 ? end : pos + 7;
    let v = 0;
    let mul = 1;
    while (pos < fastEnd) {
      const b = buf[pos++];
      v += (b & 0x7f) * mul;
      if (b < 0x80) {
        this.pos = pos;
        out[index] = v;
        return;
      }
      mul *= 128;
    }
    out[index] = this.int64Slow(end, field, msg);
  }

  private int64Slow(end: number, field: number, msg: string): number {
    const buf = this.buf;
    let pos = this.pos;
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (pos >= end) throw this.truncated('varint', field, msg);
      const b = buf[pos++];
      const bits = b & 0x7f;
      if (i < 4) lo |= bits << (7 * i);
      else if (i === 4) {
        lo |= (bits & 0x0f) << 28;
        hi |= bits >> 4;
      } else {
        if (i === 9 && b > 1) break;
        hi |= bits << (7 * i - 32);
      }
      if (b < 0x80) {
        this.pos = pos;
        return (hi | 0) * 4294967296 + (lo >>> 0);
      }
    }
    throw this.fail(`varint overflows 64 bits in field ${field} of ${msg}`, this.fieldStart);
  }

  /**
   * Reads the length of a length-delimited field, checks it fits in the
   * enclosing message, leaves `pos` at the payload and returns the payload's end.
   */
  len(end: number, field: number, msg: string): number {
    const n = this.uvarint(end, field, msg);
    if (n > end - this.pos) {
      throw this.fail(`truncated length-delimited field ${field} of ${msg}: declares ${n} bytes, ${end - this.pos} left`, this.fieldStart);
    }
    return this.pos + n;
  }

  /** Skips 8 bytes of a fixed64 field. */
  fixed64(end: number, field: number, msg: string): void {
    if (end - this.pos < 8) throw this.truncated('fixed64', field, msg);
    this.pos += 8;
  }

  /**
   * Decodes [start, end) as UTF-8. Invalid bytes become U+FFFD and flag `invalidUtf8`.
   * Short ASCII strings come from the intern table when the same bytes were seen
   * recently: label names and most values repeat from request to request.
   */
  string(start: number, end: number): string {
    const len = end - start;
    if (len === 0) return '';
    const buf = this.buf;
    if (len <= INTERN_MAX_BYTES) {
      let h = len;
      let bits = 0;
      for (let i = start; i < end; i++) {
        const b = buf[i];
        bits |= b;
        h = Math.imul(h ^ b, 0x01000193);
      }
      if (bits < 0x80) {
        const slot = (h ^ (h >>> 16)) & INTERN_MASK;
        const cached = internTable[slot];
        if (cached.length === len) {
          let i = 0;
          while (i < len && cached.charCodeAt(i) === buf[start + i]) i++;
          if (i === len) return cached;
        }
        const s = utf8Slice.call(buf, start, end);
        internTable[slot] = s;
        return s;
      }
    }
    const s = utf8Slice.call(buf, start, end);
    if (s.indexOf('\ufffd') !== -1 && !isUtf8(buf.subarray(start, end))) this.invalidUtf8 = true;
    return s;
  }

  /**
   * Skips a field the caller did not handle. `wireTypes[field]` is the wire
   * type of each field the message defines: a known field sent with another wire
   * type is an encoder bug and is rejected (as gogo/protobuf in Prometheus and
   * Mimir does) rather than silently dropped.
   */
  skip(tag: number, end: number, msg: string, wireTypes?: readonly number[]): void {
    const field = tag >>> 3;
    const wt = tag & 7;
    if (wt > WIRE_FIXED32) throw this.fail(`invalid wire type ${wt} for field ${field} in ${msg}`, this.fieldStart);
    if (wt === WIRE_END_GROUP) throw this.fail(`unexpected end-group for field ${field} in ${msg}`, this.fieldStart);
    if (wireTypes !== undefined && field < wireTypes.length) {
      const want = wireTypes[field];
      if (want >= 0 && want !== wt) {
        throw this.fail(`field ${field} of ${msg} has wire type ${wireName(wt)}, expected ${wireName(want)}`, this.fieldStart);
      }
    }
    switch (wt) {
      case WIRE_VARINT:
        this.uvarint(end, field, msg);
        return;
      case WIRE_FIXED64:
        this.fixed64(end, field, msg);
        return;
      case WIRE_LEN:
        this.pos = this.len(end, field, msg);
        return;
      case WIRE_FIXED32:
        if (end - this.pos < 4) throw this.truncated('fixed32', field, msg);
        this.pos += 4;
        return;
      default: // WIRE_START_GROUP
        this.skipGroup(field, end, msg);
    }
  }

  // Deprecated proto2 groups: skipped iteratively so a hostile nesting cannot blow the stack.
  private skipGroup(field: number, end: number, msg: string): void {
    const groupStart = this.fieldStart;
    const open = [field];
    while (open.length > 0) {
      if (this.pos >= end) {
        throw this.fail(`unterminated group field ${open[open.length - 1]} in ${msg}`, groupStart);
      }
      const tag = this.tag(end, msg);
      const f = tag >>> 3;
      const wt = tag & 7;
      if (wt === WIRE_END_GROUP) {
        if (f !== open[open.length - 1]) {
          throw this.fail(`end-group for field ${f} closes group field ${open[open.length - 1]} in ${msg}`, this.fieldStart);
        }
        open.pop();
      } else if (wt === WIRE_START_GROUP) {
        if (open.length >= MAX_GROUP_DEPTH) throw this.fail(`groups nested deeper than ${MAX_GROUP_DEPTH} in ${msg}`, this.fieldStart);
        open.push(f);
      } else {
        this.skip(tag, end, msg);
      }
    }
  }

  private truncated(kind: string, field: number, msg: string): RemoteWriteError {
    return this.fail(`truncated ${kind} in field ${field} of ${msg}`, this.fieldStart);
  }

  fail(reason: string, at: number): RemoteWriteError {
    return badProtobuf(`${reason} at byte ${at}`);
  }
}

function wireName(wt: number): string {
  return WIRE_NAMES[wt] ?? `#${wt}`;
}

export function uvarintSize(v: number): number {
  let n = 1;
  while (v >= 128) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/** Writes a non-negative safe integer as a varint; returns the position after it. */
export function putUvarint(buf: Uint8Array, pos: number, v: number): number {
  while (v >= 128) {
    buf[pos++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[pos++] = v;
  return pos;
}

const scratchF64 = new Float64Array(1);
const scratchBytes = new Uint8Array(scratchF64.buffer);

/** Appends protobuf fields to a growing Buffer. */
export class ProtoWriter {
  buf: Buffer;
  pos = 0;

  constructor(initialSize = 1024) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  tag(field: number, wireType: number): void {
    this.uvarint(field * 8 + wireType);
  }

  uvarint(v: number): void {
    this.ensure(10);
    this.pos = putUvarint(this.buf, this.pos, v);
  }

  /** Signed int64 from a safe integer; negatives are sign-extended to 10 bytes as protobuf requires. */
  int64(v: number): void {
    if (!Number.isSafeInteger(v)) throw new RangeError(`int64 field needs a safe integer, got ${v}`);
    if (v >= 0) {
      this.uvarint(v);
      return;
    }
    this.ensure(10);
    const buf = this.buf;
    let pos = this.pos;
    let hi = Math.floor(v / 4294967296);
    let lo = (v - hi * 4294967296) >>> 0;
    hi = hi >>> 0;
    while (hi !== 0) {
      buf[pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    while (lo > 0x7f) {
      buf[pos++] = (lo & 0x7f) | 0x80;
      lo >>>= 7;
    }
    buf[pos++] = lo;
    this.pos = pos;
  }

  /** A double's 8 bytes, little-endian, copied from a Float64Array so NaN payloads are kept as far as the number kept them. */
  double(v: number): void {
    scratchF64[0] = v;
    this.bytes8(scratchBytes, 0, LITTLE_ENDIAN);
  }

  /** 8 bytes in `src` at `offset`; `littleEndian` says their order (protobuf wants little-endian). */
  bytes8(src: Uint8Array, offset: number, littleEndian: boolean): void {
    this.ensure(8);
    const buf = this.buf;
    const p = this.pos;
    if (littleEndian) for (let i = 0; i < 8; i++) buf[p + i] = src[offset + i];
    else for (let i = 0; i < 8; i++) buf[p + i] = src[offset + 7 - i];
    this.pos = p + 8;
  }

  string(field: number, s: string): void {
    this.tag(field, WIRE_LEN);
    if (s.length <= 42) {
      // At most 126 UTF-8 bytes: the length fits the one byte reserved for it.
      this.ensure(1 + s.length * 3);
      const n = this.buf.write(s, this.pos + 1, 'utf8');
      this.buf[this.pos] = n;
      this.pos += 1 + n;
      return;
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.uvarint(n);
    this.ensure(n);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** A length-delimited field holding `bytes` verbatim. */
  bytes(field: number, bytes: Uint8Array): void {
    this.tag(field, WIRE_LEN);
    this.uvarint(bytes.length);
    this.raw(bytes);
  }

  /** Bytes copied as they are, no framing. */
  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** Opens a nested message; returns the body's start for `end`. One length byte is reserved and moved over if too short. */
  begin(field: number): number {
    this.tag(field, WIRE_LEN);
    this.ensure(1);
    this.pos += 1;
    return this.pos;
  }

  end(bodyStart: number): void {
    const len = this.pos - bodyStart;
    if (len < 128) {
      this.buf[bodyStart - 1] = len;
      return;
    }
    const n = uvarintSize(len);
    this.ensure(n - 1);
    this.buf.copyWithin(bodyStart - 1 + n, bodyStart, this.pos);
    putUvarint(this.buf, bodyStart - 1, len);
    this.pos += n - 1;
  }

  /** The bytes written so far (a view, not a copy). */
  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}
