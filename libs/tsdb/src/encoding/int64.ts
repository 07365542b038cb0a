// 64-bit integers as JS numbers (exact within ±2^53) and as uint32 halves, plus
// Go-compatible varints over both. No BigInt: halves are exact and much cheaper.

const TWO_32 = 4294967296;

/** Upper 32 bits (as uint32) of the int64 two's complement of a safe integer. */
export function int64Hi(n: number): number {
  return Math.floor(n / TWO_32) >>> 0;
}

/** Lower 32 bits (as uint32) of the int64 two's complement of a safe integer. */
export function int64Lo(n: number): number {
  return (n - Math.floor(n / TWO_32) * TWO_32) >>> 0;
}

/** The signed value of an int64 given as halves; exact when within ±2^53. */
function int64FromHalves(hi: number, lo: number): number {
  return (hi | 0) * TWO_32 + (lo >>> 0);
}

function uint64FromHalves(hi: number, lo: number): number {
  return (hi >>> 0) * TWO_32 + (lo >>> 0);
}

export interface ByteSink {
  writeByte(b: number): void;
}

export interface ByteInput {
  readByte(): number;
}

/** Unsigned LEB128 (Go's binary.PutUvarint) of the uint64 hi:lo. */
function writeUvarint64(sink: ByteSink, hi: number, lo: number): void {
  hi >>>= 0;
  lo >>>= 0;
  while (hi !== 0 || lo >= 0x80) {
    sink.writeByte((lo & 0x7f) | 0x80);
    lo = ((lo >>> 7) | (hi << 25)) >>> 0;
    hi >>>= 7;
  }
  sink.writeByte(lo);
}

/** Uvarint of uint64(n) for a safe integer n (negative n wraps as Go's uint64(int64) does). */
export function writeUvarintNumber(sink: ByteSink, n: number): void {
  if (n >= 0 && n < 0x80000000) {
    while (n >= 0x80) {
      sink.writeByte((n & 0x7f) | 0x80);
      n >>>= 7;
    }
    sink.writeByte(n);
    return;
  }
  writeUvarint64(sink, int64Hi(n), int64Lo(n));
}

/** Zig-zag varint (Go's binary.PutVarint) of a safe integer. */
export function writeVarintNumber(sink: ByteSink, n: number): void {
  if (n >= 0 && n < 0x40000000) {
    writeUvarintNumber(sink, n * 2);
    return;
  }
  const hi = int64Hi(n) | 0;
  const lo = int64Lo(n);
  const sign = hi >> 31;
  writeUvarint64(sink, ((hi << 1) | (lo >>> 31)) ^ sign, (lo << 1) ^ sign);
}

/** Reads a uvarint into out.hi/out.lo (uint32 halves). Throws on overlong input. */
function readUvarint64(src: ByteInput, out: { hi: number; lo: number }): void {
  let lo = 0;
  let hi = 0;
  for (let shift = 0; shift < 70; shift += 7) {
    const b = src.readByte();
    const bits = b & 0x7f;
    if (shift < 32) {
      lo |= bits << shift;
      if (shift > 25) hi |= bits >>> (32 - shift);
    } else {
      hi |= bits << (shift - 32);
    }
    if (b < 0x80) {
      if (shift === 63 && b > 1) break;
      out.hi = hi >>> 0;
      out.lo = lo >>> 0;
      return;
    }
  }
  throw new RangeError('varint overflows 64 bits');
}

const scratch = { hi: 0, lo: 0 };

/** Reads a uvarint as a number; throws if it exceeds 2^53. */
export function readUvarintNumber(src: ByteInput): number {
  readUvarint64(src, scratch);
  if (scratch.hi >= 0x200000) throw new RangeError('uvarint exceeds 2^53');
  return uint64FromHalves(scratch.hi, scratch.lo);
}

/** Reads a uvarint and reinterprets it as int64 (Go's int64(uint64)); exact within ±2^53. */
export function readUvarintAsInt64(src: ByteInput): number {
  readUvarint64(src, scratch);
  return checkedInt64(scratch.hi, scratch.lo);
}

/** Reads a zig-zag varint as a number; throws outside ±2^53. */
export function readVarintNumber(src: ByteInput): number {
  readUvarint64(src, scratch);
  const { hi, lo } = scratch;
  const sign = -(lo & 1);
  return checkedInt64((hi >>> 1) ^ sign, ((lo >>> 1) | (hi << 31)) ^ sign);
}

function checkedInt64(hi: number, lo: number): number {
  const n = int64FromHalves(hi, lo);
  if (n > Number.MAX_SAFE_INTEGER || n < -Number.MAX_SAFE_INTEGER) {
    throw new RangeError('int64 value outside ±2^53 cannot be represented exactly');
  }
  return n;
}
