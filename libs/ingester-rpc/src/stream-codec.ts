// QueryStream's response message, encoded and decoded by hand. It carries every sample a query
// reads from an ingester, and the generic path (proto-loader: objects converted to protobufjs
// messages and back, a Buffer object per bytes field) cost the ingester and the querier more than
// the samples' own bytes. Field numbers are ingester.proto's; histograms, rare, go through protobufjs.

import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { Labels } from '@strata/model';
import type { WireHistogram, WireSeries } from './proto.ts';

export const PROTO_PATH = fileURLToPath(new URL('../proto/ingester.proto', import.meta.url));

const Histogram = new protobuf.Root().loadSync(PROTO_PATH, { keepCase: true }).lookupType('strata.ingester.v1.Histogram');
const HISTOGRAM_OBJECT: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: true, arrays: true };

const WT_VARINT = 0;
const WT_LEN = 2;
const tag = (field: number, wireType: number) => (field << 3) | wireType;
const TWO_32 = 4294967296;

// ---- encoding ----

function uvarintSize(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** An int64 as protobuf writes it: two's complement, 10 bytes when negative. */
function int64Size(v: number): number {
  if (v < 0) return 10;
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

class Out {
  pos = 0;
  readonly buf: Buffer;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  uvarint(v: number): void {
    const b = this.buf;
    while (v >= 0x80) {
      b[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[this.pos++] = v;
  }

  int64(v: number): void {
    let hi = Math.floor(v / TWO_32);
    let lo = (v - hi * TWO_32) >>> 0;
    hi >>>= 0;
    const b = this.buf;
    while (hi !== 0 || lo >= 0x80) {
      b[this.pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    b[this.pos++] = lo;
  }

  bytes(field: number, data: Uint8Array): void {
    this.uvarint(tag(field, WT_LEN));
    this.uvarint(data.length);
    this.buf.set(data, this.pos);
    this.pos += data.length;
  }

  string(field: number, s: string, byteLength: number): void {
    this.uvarint(tag(field, WT_LEN));
    this.uvarint(byteLength);
    this.pos += this.buf.write(s, this.pos, byteLength, 'utf8');
  }
}

const lenField = (n: number) => 1 + uvarintSize(n) + n;

/** Sizes of one series' parts, computed once and used while writing. */
interface Sized {
  labelBytes: number[];
  histograms: Uint8Array[];
  chunkSizes: number[];
  size: number;
}

function sizeSeries(s: WireSeries): Sized {
  let size = 0;
  const labelBytes: number[] = [];
  for (const l of s.labels) {
    const n = Buffer.byteLength(l.name);
    const v = Buffer.byteLength(l.value);
    labelBytes.push(n, v);
    size += lenField(lenField(n) + lenField(v));
  }
  if (s.timestamps.length > 0) size += lenField(s.timestamps.length);
  if (s.values.length > 0) size += lenField(s.values.length);
  const ht = s.histogram_timestamps;
  if (ht !== undefined && ht.length > 0) size += lenField(ht.length);
  const histograms = (s.histograms ?? []).map((h) => Histogram.encode(Histogram.fromObject(h)).finish());
  for (const h of histograms) size += lenField(h.length);
  const chunkSizes: number[] = [];
  for (const c of s.chunks ?? []) {
    // proto3 leaves out a zero, as protobufjs does.
    const n = (c.min_time_ms === 0 ? 0 : 1 + int64Size(c.min_time_ms)) + (c.max_time_ms === 0 ? 0 : 1 + int64Size(c.max_time_ms)) + lenField(c.data.length);
    chunkSizes.push(n);
    size += lenField(n);
  }
  return { labelBytes, histograms, chunkSizes, size };
}

/** QueryStreamResponse { repeated StreamSeries series = 1 } as protobuf bytes. */
export function encodeQueryStreamResponse(msg: { series: WireSeries[] }): Buffer {
  const sized = msg.series.map(sizeSeries);
  const out = new Out(sized.reduce((a, z) => a + lenField(z.size), 0));
  msg.series.forEach((s, i) => {
    const z = sized[i];
    out.uvarint(tag(1, WT_LEN));
    out.uvarint(z.size);
    s.labels.forEach((l, k) => {
      const n = z.labelBytes[2 * k];
      const v = z.labelBytes[2 * k + 1];
      out.uvarint(tag(1, WT_LEN));
      out.uvarint(lenField(n) + lenField(v));
      out.string(1, l.name, n);
      out.string(2, l.value, v);
    });
    if (s.timestamps.length > 0) out.bytes(2, s.timestamps);
    if (s.values.length > 0) out.bytes(3, s.values);
    const ht = s.histogram_timestamps;
    if (ht !== undefined && ht.length > 0) out.bytes(4, ht);
    for (const h of z.histograms) out.bytes(5, h);
    (s.chunks ?? []).forEach((c, k) => {
      out.uvarint(tag(6, WT_LEN));
      out.uvarint(z.chunkSizes[k]);
      if (c.min_time_ms !== 0) {
        out.uvarint(tag(1, WT_VARINT));
        out.int64(c.min_time_ms);
      }
      if (c.max_time_ms !== 0) {
        out.uvarint(tag(2, WT_VARINT));
        out.int64(c.max_time_ms);
      }
      out.bytes(3, c.data);
    });
  });
  if (out.pos !== out.buf.length) throw new Error(`QueryStreamResponse encoding wrote ${out.pos} of ${out.buf.length} bytes`);
  return out.buf;
}

// ---- decoding ----

class In {
  pos = 0;
  readonly buf: Buffer;

  constructor(buf: Buffer) {
    this.buf = buf;
  }

  uvarint(): number {
    const b = this.buf;
    let v = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= b.length) throw new Error('QueryStreamResponse: truncated varint');
      const x = b[this.pos++];
      v += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) return v;
    }
    throw new Error('QueryStreamResponse: varint too long for a length');
  }

  int64(): number {
    const b = this.buf;
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= b.length) throw new Error('QueryStreamResponse: truncated varint');
      const x = b[this.pos++];
      if (i < 4) lo |= (x & 0x7f) << (7 * i);
      else if (i === 4) {
        lo |= (x & 0x0f) << 28;
        hi |= (x & 0x7f) >> 4;
      } else hi |= (x & 0x7f) << (7 * i - 32);
      if (x < 0x80) return (hi | 0) * TWO_32 + (lo >>> 0);
    }
    throw new Error('QueryStreamResponse: varint longer than 10 bytes');
  }

  /** The end of a length-delimited field starting here. */
  end(limit: number): number {
    const n = this.uvarint();
    const e = this.pos + n;
    if (e > limit) throw new Error('QueryStreamResponse: a field runs past its message');
    return e;
  }

  /** A plain Uint8Array view (Buffer#subarray makes a Buffer, measurably slower per view). */
  view(end: number): Uint8Array {
    const v = new Uint8Array(this.buf.buffer, this.buf.byteOffset + this.pos, end - this.pos);
    this.pos = end;
    return v;
  }

  skip(wireType: number, limit: number): void {
    if (wireType === WT_VARINT) this.int64();
    else if (wireType === WT_LEN) this.pos = this.end(limit);
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 5) this.pos += 4;
    else throw new Error(`QueryStreamResponse: wire type ${wireType} not expected`);
  }
}

const EMPTY: Uint8Array = new Uint8Array(0);

/** The inverse of encodeQueryStreamResponse; fields it does not know are skipped. */
export function decodeQueryStreamResponse(buf: Buffer): { series: WireSeries[] } {
  const r = new In(buf);
  const series: WireSeries[] = [];
  // Label names repeat in every series: one string each per message.
  const names = new Map<string, string>();
  while (r.pos < buf.length) {
    const t = r.uvarint();
    if (t !== tag(1, WT_LEN)) {
      r.skip(t & 7, buf.length);
      continue;
    }
    const end = r.end(buf.length);
    const labels: Labels = [];
    const s: WireSeries = { labels, timestamps: EMPTY, values: EMPTY };
    while (r.pos < end) {
      const f = r.uvarint();
      switch (f) {
        case tag(1, WT_LEN): {
          const le = r.end(end);
          let name = '';
          let value = '';
          while (r.pos < le) {
            const lf = r.uvarint();
            if (lf === tag(1, WT_LEN) || lf === tag(2, WT_LEN)) {
              const se = r.end(le);
              const str = buf.toString('utf8', r.pos, se);
              r.pos = se;
              if (lf === tag(1, WT_LEN)) name = names.get(str) ?? (names.set(str, str), str);
              else value = str;
            } else r.skip(lf & 7, le);
          }
          labels.push({ name, value });
          break;
        }
        case tag(2, WT_LEN):
          s.timestamps = r.view(r.end(end));
          break;
        case tag(3, WT_LEN):
          s.values = r.view(r.end(end));
          break;
        case tag(4, WT_LEN):
          s.histogram_timestamps = r.view(r.end(end));
          break;
        case tag(5, WT_LEN):
          (s.histograms ??= []).push(Histogram.toObject(Histogram.decode(r.view(r.end(end))), HISTOGRAM_OBJECT) as WireHistogram);
          break;
        case tag(6, WT_LEN): {
          const ce = r.end(end);
          const c: { min_time_ms: number; max_time_ms: number; data: Uint8Array } = { min_time_ms: 0, max_time_ms: 0, data: EMPTY };
          while (r.pos < ce) {
            const cf = r.uvarint();
            if (cf === tag(1, WT_VARINT)) c.min_time_ms = r.int64();
            else if (cf === tag(2, WT_VARINT)) c.max_time_ms = r.int64();
            else if (cf === tag(3, WT_LEN)) c.data = r.view(r.end(ce));
            else r.skip(cf & 7, ce);
          }
          (s.chunks ??= []).push(c);
          break;
        }
        default:
          r.skip(f & 7, end);
      }
    }
    series.push(s);
  }
  return { series };
}
