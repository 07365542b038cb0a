// The snappy *block* format (not the framed one): a varint of the uncompressed length,
// then elements, each a literal (tag 00) or a back-reference with a 1-, 2- or 4-byte
// offset (tags 01, 10, 11), as remote write bodies use it.
//
// Remote-write bodies are decompressed here rather than by the native `snappy` package:
// its call measured 455 ns a sample on node-exporter-like bodies of 64-shard senders, the
// JavaScript loop below 190–340 ns into a reused buffer, the same loop as WebAssembly
// (wasm-uncompress.ts) 52 ns, copies in and out included. Kafka records keep the native
// one (docs/benchmarks.md, "Snappy").

import { WasmUncompress } from './wasm-uncompress.ts';

/** Largest block the compressor matches within (offsets stay below 2^16). */
const BLOCK = 1 << 16;
const HASH_BITS = 14;
/** Bytes at the end of a block never searched for a match (a match needs 4 to compare). */
const INPUT_MARGIN = 15;
/** Below this a block is one literal. */
const MIN_MATCHED_BLOCK = 17;

/**
 * The length `src` declares and where its elements start, or undefined when the header
 * is missing or malformed (snappy caps the length at 32 bits).
 */
export function uncompressedLength(src: Uint8Array): { length: number; start: number } | undefined {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 5 && i < src.length; i++) {
    const b = src[i];
    v += (b & 0x7f) * mul;
    if (b < 0x80) return v > 0xffffffff ? undefined : { length: v, start: i + 1 };
    mul *= 128;
  }
  return undefined;
}

/** Sizes above this take the JavaScript loop, so the wasm memory (which never shrinks) stays below about twice it. */
const WASM_MAX_BYTES = 16 << 20;
let wasm: WasmUncompress | undefined;

/**
 * Decodes the elements of `src` from `pos` into out[0, n) (n: the declared length, which
 * `out` must hold). Answers what was wrong, or undefined when exactly n bytes came out.
 */
export function uncompress(src: Uint8Array, pos: number, out: Uint8Array, n: number): string | undefined {
  if (n > WASM_MAX_BYTES || src.length - pos > WASM_MAX_BYTES) return uncompressScalar(src, pos, out, n);
  wasm ??= new WasmUncompress();
  return wasm.uncompress(src, pos, out, n);
}

/** uncompress as a JavaScript loop. */
export function uncompressScalar(src: Uint8Array, pos: number, out: Uint8Array, n: number): string | undefined {
  const end = src.length;
  let d = 0;
  while (pos < end) {
    const tag = src[pos++];
    const kind = tag & 3;
    if (kind === 0) {
      let len = tag >>> 2;
      if (len >= 60) {
        const extra = len - 59;
        if (pos + extra > end) return 'truncated literal length';
        len = 0;
        for (let i = 0; i < extra; i++) len += src[pos++] * 2 ** (8 * i);
      }
      len += 1;
      if (len > end - pos) return 'literal past the end of the input';
      if (len > n - d) return 'longer than its declared length';
      if (len < 16) for (let i = 0; i < len; i++) out[d + i] = src[pos + i];
      else out.set(src.subarray(pos, pos + len), d);
      pos += len;
      d += len;
      continue;
    }
    let len: number;
    let offset: number;
    if (kind === 1) {
      if (pos + 1 > end) return 'truncated copy';
      len = 4 + ((tag >>> 2) & 7);
      offset = ((tag >>> 5) << 8) | src[pos++];
    } else if (kind === 2) {
      if (pos + 2 > end) return 'truncated copy';
      len = 1 + (tag >>> 2);
      offset = src[pos] | (src[pos + 1] << 8);
      pos += 2;
    } else {
      if (pos + 4 > end) return 'truncated copy';
      len = 1 + (tag >>> 2);
      offset = (src[pos] | (src[pos + 1] << 8) | (src[pos + 2] << 16) | (src[pos + 3] << 24)) >>> 0;
      pos += 4;
    }
    if (offset === 0 || offset > d) return 'copy offset out of range';
    if (len > n - d) return 'longer than its declared length';
    let from = d - offset;
    // A copy may overlap what it writes (a run): byte by byte then.
    if (offset >= len && len > 32) {
      out.copyWithin(d, from, from + len);
      d += len;
    } else {
      for (let i = 0; i < len; i++) out[d++] = out[from++];
    }
  }
  return d === n ? undefined : `${d} bytes decoded, ${n} declared`;
}

/** The most bytes compress may write for `n` input bytes. */
export function maxCompressedLength(n: number): number {
  return 32 + n + Math.floor(n / 6);
}

/** Position of each 4-byte sequence's last sighting, by hash, within the current block. */
const table = new Uint16Array(1 << HASH_BITS);

/** Compresses `src` (any length below 2^32) into a new Buffer. */
export function compress(src: Uint8Array): Buffer {
  const n = src.length;
  const out = Buffer.allocUnsafe(maxCompressedLength(n));
  let o = putVarint(out, 0, n);
  for (let start = 0; start < n; start += BLOCK) o = compressBlock(src, start, Math.min(n, start + BLOCK), out, o);
  return out.subarray(0, o);
}

function load32(b: Uint8Array, i: number): number {
  return b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
}

function hash4(x: number): number {
  return Math.imul(x, 0x1e35a7bd) >>> (32 - HASH_BITS);
}

/**
 * One block: look each position's next 4 bytes up in the table; on a match, emit the
 * bytes since the last element as a literal, then extend the match as far as it goes.
 * Positions that keep missing are stepped over faster (1 more byte every 32 misses).
 */
function compressBlock(src: Uint8Array, start: number, end: number, out: Uint8Array, o: number): number {
  let literalFrom = start;
  if (end - start >= MIN_MATCHED_BLOCK) {
    table.fill(0);
    const limit = end - INPUT_MARGIN;
    let s = start + 1;
    let nextHash = hash4(load32(src, s));
    search: for (;;) {
      let misses = 32;
      let next = s;
      let candidate: number;
      do {
        s = next;
        next = s + (misses++ >>> 5);
        if (next > limit) break search;
        candidate = start + table[nextHash];
        table[nextHash] = s - start;
        nextHash = hash4(load32(src, next));
      } while (load32(src, s) !== load32(src, candidate));
      o = putLiteral(out, o, src, literalFrom, s);
      // Matches back to back: copy after copy without a literal between.
      do {
        const matchStart = s;
        let i = candidate + 4;
        s += 4;
        while (s < end && src[i] === src[s]) {
          i++;
          s++;
        }
        o = putCopy(out, o, matchStart - candidate, s - matchStart);
        literalFrom = s;
        if (s >= limit) break search;
        table[hash4(load32(src, s - 1))] = s - 1 - start;
        const h = hash4(load32(src, s));
        candidate = start + table[h];
        table[h] = s - start;
      } while (load32(src, s) === load32(src, candidate));
      s++;
      nextHash = hash4(load32(src, s));
    }
  }
  return literalFrom < end ? putLiteral(out, o, src, literalFrom, end) : o;
}

function putLiteral(out: Uint8Array, o: number, src: Uint8Array, from: number, to: number): number {
  const len = to - from;
  const n = len - 1;
  if (n < 60) {
    out[o++] = n << 2;
  } else {
    let bytes = 1;
    while (bytes < 4 && n >= 2 ** (8 * bytes)) bytes++;
    out[o++] = (59 + bytes) << 2;
    for (let i = 0, v = n; i < bytes; i++, v = Math.floor(v / 256)) out[o++] = v & 0xff;
  }
  if (len < 16) for (let i = 0; i < len; i++) out[o + i] = src[from + i];
  else out.set(src.subarray(from, to), o);
  return o + len;
}

/** A back-reference of `len` (≥ 4) bytes at `offset` (< 2^16), split into elements of at most 64. */
function putCopy(out: Uint8Array, o: number, offset: number, len: number): number {
  while (len >= 68) {
    o = putCopy2(out, o, offset, 64);
    len -= 64;
  }
  // Leaves at least 4 for the last element.
  if (len > 64) {
    o = putCopy2(out, o, offset, 60);
    len -= 60;
  }
  if (len >= 12 || offset >= 2048) return putCopy2(out, o, offset, len);
  out[o++] = ((offset >>> 8) << 5) | ((len - 4) << 2) | 1;
  out[o++] = offset & 0xff;
  return o;
}

function putCopy2(out: Uint8Array, o: number, offset: number, len: number): number {
  out[o++] = ((len - 1) << 2) | 2;
  out[o++] = offset & 0xff;
  out[o++] = offset >>> 8;
  return o;
}

function putVarint(b: Uint8Array, pos: number, v: number): number {
  while (v >= 0x80) {
    b[pos++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  b[pos++] = v;
  return pos;
}
