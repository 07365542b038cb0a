// The bit-level encodings of Prometheus' histogram chunks (tsdb/docs/format/chunks.md):
// varbit ints and uints (buckets of 1, 3, 6, 9, 12, 18, 25, 56 or 64 bits after
// a unary prefix), Gorilla XOR of float bits, the zero threshold byte and custom
// bounds. 64-bit quantities travel as JS numbers exact within ±2^53, or as two
// uint32 halves for raw float bits; never BigInt.

import type { BitReader, BitWriter } from './bit-stream.ts';
import { int64Hi, int64Lo } from '../encoding/int64.ts';

const TWO_32 = 4294967296;
const scratchF64 = new Float64Array(1);
const scratchU32 = new Uint32Array(scratchF64.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const HI = LITTLE_ENDIAN ? 1 : 0;
const LO = LITTLE_ENDIAN ? 0 : 1;

/** Prometheus' stale marker bits (value.StaleNaN). */
export const STALE_NAN_HI = 0x7ff00000;
export const STALE_NAN_LO = 0x00000002;
export const STALE_NAN = floatFromBits(STALE_NAN_HI, STALE_NAN_LO);

export function floatHi(v: number): number {
  scratchF64[0] = v;
  return scratchU32[HI];
}

export function floatLo(v: number): number {
  scratchF64[0] = v;
  return scratchU32[LO];
}

export function floatFromBits(hi: number, lo: number): number {
  scratchU32[HI] = hi;
  scratchU32[LO] = lo;
  return scratchF64[0];
}

/**
 * Whether v is Prometheus' stale marker. V8 may quiet a signalling NaN it
 * copies through some paths (array elements), so the quieted form counts too.
 */
export function isStaleNaN(v: number): boolean {
  if (v === v) return false;
  scratchF64[0] = v;
  return scratchU32[LO] === STALE_NAN_LO && (scratchU32[HI] === STALE_NAN_HI || scratchU32[HI] === 0x7ff80000);
}

/** Prometheus' bitRange: -(2^(n-1)-1) <= x <= 2^(n-1). */
function inRange(x: number, n: number): boolean {
  const h = 2 ** (n - 1);
  return x >= -(h - 1) && x <= h;
}

/** Writes the low n bits (n <= 64) of the int64 two's complement of a safe integer. */
function writeWide(w: BitWriter, x: number, n: number): void {
  if (n <= 32) {
    w.writeBits(int64Lo(x), n);
    return;
  }
  w.writeBits(int64Hi(x), n - 32);
  w.writeBits(int64Lo(x), 32);
}

export function putVarbitInt(w: BitWriter, x: number): void {
  if (x === 0) w.writeBits(0, 1);
  else if (inRange(x, 3)) {
    w.writeBits(0b10, 2);
    w.writeBits(x, 3);
  } else if (inRange(x, 6)) {
    w.writeBits(0b110, 3);
    w.writeBits(x, 6);
  } else if (inRange(x, 9)) {
    w.writeBits(0b1110, 4);
    w.writeBits(x, 9);
  } else if (inRange(x, 12)) {
    w.writeBits(0b11110, 5);
    w.writeBits(x, 12);
  } else if (inRange(x, 18)) {
    w.writeBits(0b111110, 6);
    w.writeBits(x, 18);
  } else if (inRange(x, 25)) {
    w.writeBits(0b1111110, 7);
    w.writeBits(x, 25);
  } else if (inRange(x, 56)) {
    w.writeBits(0b11111110, 8);
    writeWide(w, x, 56);
  } else {
    w.writeBits(0b11111111, 8);
    writeWide(w, x, 64);
  }
}

export function putVarbitUint(w: BitWriter, x: number): void {
  if (x < 0) throw new RangeError(`varbit uint of negative ${x}`);
  if (x === 0) w.writeBits(0, 1);
  else if (x < 2 ** 3) {
    w.writeBits(0b10, 2);
    w.writeBits(x, 3);
  } else if (x < 2 ** 6) {
    w.writeBits(0b110, 3);
    w.writeBits(x, 6);
  } else if (x < 2 ** 9) {
    w.writeBits(0b1110, 4);
    w.writeBits(x, 9);
  } else if (x < 2 ** 12) {
    w.writeBits(0b11110, 5);
    w.writeBits(x, 12);
  } else if (x < 2 ** 18) {
    w.writeBits(0b111110, 6);
    w.writeBits(x, 18);
  } else if (x < 2 ** 25) {
    w.writeBits(0b1111110, 7);
    w.writeBits(x, 25);
  } else if (x < 2 ** 56) {
    w.writeBits(0b11111110, 8);
    writeWide(w, x, 56);
  } else {
    w.writeBits(0b11111111, 8);
    writeWide(w, x, 64);
  }
}

const SIZES = [0, 3, 6, 9, 12, 18, 25, 56, 64];

/** The unary prefix: how many 1 bits (0..8) before a 0 (8 ones need no terminating 0). */
function readPrefix(r: BitReader): number {
  let k = 0;
  while (k < 8 && r.readBit() === 1) k++;
  return k;
}

function readWide(r: BitReader, n: number): { hi: number; lo: number } {
  if (n <= 32) return { hi: 0, lo: r.readBits(n) >>> 0 };
  const hi = r.readBits(n - 32) >>> 0;
  return { hi, lo: r.readBits(32) >>> 0 };
}

function checked(x: number): number {
  if (!Number.isSafeInteger(x)) throw new RangeError('histogram chunk: varbit value outside ±2^53');
  return x;
}

export function readVarbitInt(r: BitReader): number {
  const sz = SIZES[readPrefix(r)];
  if (sz === 0) return 0;
  const { hi, lo } = readWide(r, sz);
  if (sz === 64) return checked((hi | 0) * TWO_32 + lo);
  if (sz > 32) {
    const hb = sz - 32;
    const v = hi * TWO_32 + lo;
    // Negative when above 2^(sz-1) (Prometheus: bits > 1<<(sz-1)).
    if (hi >= 2 ** (hb - 1) && v > 2 ** (sz - 1)) return checked((hi - 2 ** hb) * TWO_32 + lo);
    return checked(v);
  }
  return lo > 2 ** (sz - 1) ? lo - 2 ** sz : lo;
}

export function readVarbitUint(r: BitReader): number {
  const sz = SIZES[readPrefix(r)];
  if (sz === 0) return 0;
  const { hi, lo } = readWide(r, sz);
  return checked(hi * TWO_32 + lo);
}

/** Gorilla XOR state of one float field: the previous value's bits and the leading/trailing window. */
export interface XorState {
  hi: number;
  lo: number;
  leading: number;
  trailing: number;
}

export function newXorState(hi = 0, lo = 0): XorState {
  return { hi: hi | 0, lo: lo | 0, leading: 0xff, trailing: 0 };
}

function ctz32(x: number): number {
  return 31 - Math.clz32(x & -x);
}

/** Writes the XOR of (hi, lo) against the state's previous value, as the XOR chunk does, and updates the state. */
export function xorWrite(w: BitWriter, s: XorState, hi: number, lo: number): void {
  hi |= 0;
  lo |= 0;
  const xh = hi ^ s.hi;
  const xl = lo ^ s.lo;
  s.hi = hi;
  s.lo = lo;
  if (xh === 0 && xl === 0) {
    w.writeBits(0, 1);
    return;
  }
  let leading = xh !== 0 ? Math.clz32(xh) : 32 + Math.clz32(xl);
  const trailing = xl !== 0 ? ctz32(xl) : 32 + ctz32(xh);
  if (leading >= 32) leading = 31;
  let shift: number;
  let sig: number;
  if (s.leading !== 0xff && leading >= s.leading && trailing >= s.trailing) {
    w.writeBits(0b10, 2);
    shift = s.trailing;
    sig = 64 - s.leading - shift;
  } else {
    s.leading = leading;
    s.trailing = trailing;
    shift = trailing;
    sig = 64 - leading - trailing;
    w.writeBits((0b11 << 11) | (leading << 6) | (sig & 63), 13);
  }
  // The significant bits: (xh:xl) >> shift, sig bits wide.
  let sh: number;
  let sl: number;
  if (shift === 0) {
    sh = xh;
    sl = xl;
  } else if (shift < 32) {
    sh = xh >>> shift;
    sl = (xl >>> shift) | (xh << (32 - shift));
  } else {
    sh = 0;
    sl = shift === 32 ? xh : xh >>> (shift - 32);
  }
  if (sig > 32) {
    w.writeBits(sh, sig - 32);
    w.writeBits(sl, 32);
  } else {
    w.writeBits(sl, sig);
  }
}

/** Reads one XOR-encoded value into the state (s.hi, s.lo hold the new bits). */
export function xorRead(r: BitReader, s: XorState): void {
  if (r.readBit() === 0) return;
  if (r.readBit() === 1) {
    s.leading = r.readBits(5);
    let sig = r.readBits(6);
    if (sig === 0) sig = 64;
    s.trailing = 64 - s.leading - sig;
    if (s.trailing < 0) throw new RangeError('histogram chunk corrupt: leading + significant bits exceed 64');
  }
  const sig = 64 - s.leading - s.trailing;
  let sh = 0;
  let sl: number;
  if (sig > 32) {
    sh = r.readBits(sig - 32);
    sl = r.readBits(32);
  } else {
    sl = r.readBits(sig);
  }
  const t = s.trailing;
  if (t === 0) {
    s.hi ^= sh;
    s.lo ^= sl;
  } else if (t < 32) {
    s.hi ^= (sh << t) | (sl >>> (32 - t));
    s.lo ^= sl << t;
  } else {
    s.hi ^= sl << (t - 32);
  }
}

export function putFloatBits(w: BitWriter, v: number): void {
  w.writeBits(floatHi(v), 32);
  w.writeBits(floatLo(v), 32);
}

function readFloatBits(r: BitReader): number {
  const hi = r.readBits(32);
  return floatFromBits(hi, r.readBits(32));
}

/** One byte for 0 and powers of two in [2^-243, 2^10]; 255 and the float bits otherwise. */
export function putZeroThreshold(w: BitWriter, v: number): void {
  if (v === 0) {
    w.writeByte(0);
    return;
  }
  const e = frexpExponent(v);
  if (e === null || e < -242 || e > 11) {
    w.writeByte(255);
    putFloatBits(w, v);
    return;
  }
  w.writeByte(e + 243);
}

export function readZeroThreshold(r: BitReader): number {
  const b = r.readByte();
  if (b === 0) return 0;
  if (b === 255) return readFloatBits(r);
  return 0.5 * 2 ** (b - 243);
}

/** The exponent e with v = 0.5 * 2^e when v is a positive power of two (Go's Frexp frac 0.5); null otherwise. */
function frexpExponent(v: number): number | null {
  if (!(v > 0) || !Number.isFinite(v)) return null;
  const e = Math.round(Math.log2(v)) + 1;
  return 0.5 * 2 ** e === v ? e : null;
}

/** A custom bucket bound: bound*1000+1 as a varbit uint when that is a whole number in range, else a 0 bit and the float. */
export function putCustomBound(w: BitWriter, f: number): void {
  const tf = f * 1000;
  if (tf < 0 || tf > 33554430 || Math.round(tf) / 1000 !== f || Number.isNaN(tf)) {
    w.writeBits(0, 1);
    putFloatBits(w, f);
    return;
  }
  putVarbitUint(w, Math.round(tf) + 1);
}

export function readCustomBound(r: BitReader): number {
  const b = readVarbitUint(r);
  return b === 0 ? readFloatBits(r) : (b - 1) / 1000;
}
