// Byte-level encode/decode buffers for the TSDB index and chunk files (the
// roles of Prometheus' tsdb/encoding Encbuf/Decbuf) and UTF-8 decoding.

import { BlockFormatError } from '../block/block-errors.ts';
import { readUvarintNumber, readVarintNumber, writeUvarintNumber, writeVarintNumber } from './int64.ts';

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

export class Encbuf {
  buf: Uint8Array;
  len = 0;

  constructor(capacity = 4096) {
    this.buf = new Uint8Array(capacity);
  }

  reset(): void {
    this.len = 0;
  }

  /** The encoded bytes (a view valid until the next write). */
  get(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  writeByte(b: number): void {
    this.ensure(1);
    this.buf[this.len++] = b;
  }

  putByte(b: number): void {
    this.writeByte(b);
  }

  putBytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  putZeros(n: number): void {
    this.ensure(n);
    this.buf.fill(0, this.len, this.len + n);
    this.len += n;
  }

  putBE32(v: number): void {
    this.ensure(4);
    const b = this.buf;
    const i = this.len;
    b[i] = v >>> 24;
    b[i + 1] = v >>> 16;
    b[i + 2] = v >>> 8;
    b[i + 3] = v;
    this.len = i + 4;
  }

  /** A non-negative safe integer as 8 big-endian bytes. */
  putBE64(v: number): void {
    this.putBE32(Math.floor(v / 4294967296));
    this.putBE32(v % 4294967296);
  }

  putUvarint(v: number): void {
    writeUvarintNumber(this, v);
  }

  putVarint(v: number): void {
    writeVarintNumber(this, v);
  }

  /** Length-prefixed (uvarint) UTF-8 string. */
  putUvarintStr(s: string): void {
    if (isShortAscii(s)) {
      this.putUvarint(s.length);
      this.ensure(s.length);
      for (let i = 0; i < s.length; i++) this.buf[this.len + i] = s.charCodeAt(i);
      this.len += s.length;
      return;
    }
    const bytes = utf8Encoder.encode(s);
    this.putUvarint(bytes.length);
    this.putBytes(bytes);
  }

  /** Overwrites 4 big-endian bytes at an earlier position. */
  setBE32(at: number, v: number): void {
    const b = this.buf;
    b[at] = v >>> 24;
    b[at + 1] = v >>> 16;
    b[at + 2] = v >>> 8;
    b[at + 3] = v;
  }
}

function isShortAscii(s: string): boolean {
  if (s.length > 64) return false;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Reads a byte range [start, end) of `buf`; every read past `end` throws BlockFormatError. */
export class Decbuf {
  readonly buf: Uint8Array;
  pos: number;
  readonly end: number;
  private readonly what: string;

  constructor(buf: Uint8Array, start = 0, end = buf.length, what = 'index') {
    this.buf = buf;
    this.pos = start;
    this.end = end;
    this.what = what;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  private need(n: number): void {
    if (this.pos + n > this.end) throw new BlockFormatError(`${this.what}: unexpected end of data`);
  }

  readByte(): number {
    this.need(1);
    return this.buf[this.pos++];
  }

  byte(): number {
    return this.readByte();
  }

  be32(): number {
    this.need(4);
    const b = this.buf;
    const i = this.pos;
    this.pos = i + 4;
    return ((b[i] << 24) | (b[i + 1] << 16) | (b[i + 2] << 8) | b[i + 3]) >>> 0;
  }

  /** 8 big-endian bytes; throws above 2^53. */
  be64(): number {
    const hi = this.be32();
    const lo = this.be32();
    if (hi >= 0x200000) throw new BlockFormatError(`${this.what}: 64-bit offset beyond 2^53`);
    return hi * 4294967296 + lo;
  }

  uvarint(): number {
    try {
      return readUvarintNumber(this);
    } catch (err) {
      throw err instanceof BlockFormatError ? err : new BlockFormatError(`${this.what}: ${(err as Error).message}`);
    }
  }

  varint(): number {
    try {
      return readVarintNumber(this);
    } catch (err) {
      throw err instanceof BlockFormatError ? err : new BlockFormatError(`${this.what}: ${(err as Error).message}`);
    }
  }

  skip(n: number): void {
    this.need(n);
    this.pos += n;
  }

  bytes(n: number): Uint8Array {
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  uvarintStr(): string {
    const n = this.uvarint();
    this.need(n);
    const s = decodeUtf8(this.buf, this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
}

function decodeUtf8(buf: Uint8Array, start: number, end: number): string {
  if (end - start <= 64) {
    let ascii = true;
    for (let i = start; i < end; i++) {
      if (buf[i] > 0x7f) {
        ascii = false;
        break;
      }
    }
    if (ascii) return String.fromCharCode.apply(null, buf.subarray(start, end) as unknown as number[]);
  }
  try {
    return utf8Decoder.decode(buf.subarray(start, end));
  } catch {
    throw new BlockFormatError('invalid UTF-8 in a string');
  }
}
