import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HI_WORD, LO_WORD, XorChunkEncoder, XorChunkIterator, decodeXorChunk, decodeXorChunkInto, xorChunkNumSamples } from './xor-chunk.ts';
import { crc32c } from '../encoding/crc32c.ts';

/** Deterministic PRNG so failures reproduce. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = s;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function words(values: Float64Array): Uint32Array {
  return new Uint32Array(values.buffer, values.byteOffset, values.length * 2);
}

function setBits(values: Float64Array, i: number, hi: number, lo: number): void {
  const w = words(values);
  w[2 * i + HI_WORD] = hi;
  w[2 * i + LO_WORD] = lo;
}

function roundTrip(timestamps: Float64Array, values: Float64Array): Uint8Array {
  const enc = new XorChunkEncoder();
  enc.appendRange(timestamps, values, 0, timestamps.length);
  assert.equal(enc.numSamples, timestamps.length);
  const bytes = enc.bytes().slice();
  assert.equal(xorChunkNumSamples(bytes), timestamps.length);
  const got = decodeXorChunk(bytes);
  assert.deepEqual(Array.from(got.timestamps), Array.from(timestamps));
  assert.deepEqual(Array.from(words(got.values)), Array.from(words(values)), 'value bits differ');
  return bytes;
}

test('round-trips random data with irregular intervals, special values and NaN payloads', () => {
  for (let seed = 1; seed <= 200; seed++) {
    const r = rng(seed);
    const n = 1 + Math.floor(r() * 300);
    const ts = new Float64Array(n);
    const vs = new Float64Array(n);
    let t = Math.floor((r() - 0.5) * 2 ** 45);
    for (let i = 0; i < n; i++) {
      ts[i] = t;
      const kind = r();
      if (kind < 0.3) vs[i] = Math.round(r() * 100);
      else if (kind < 0.5) vs[i] = (r() - 0.5) * 1e300;
      else if (kind < 0.55) vs[i] = Infinity;
      else if (kind < 0.6) vs[i] = -Infinity;
      else if (kind < 0.65)
        setBits(vs, i, 0x7ff00000, 0x00000002); // stale marker
      else if (kind < 0.7)
        setBits(vs, i, 0xfff80000 | (r() * 0x7ffff), (r() * 2 ** 32) >>> 0); // NaN payloads
      else if (kind < 0.75) vs[i] = -0;
      else if (kind < 0.8) vs[i] = Number.MIN_VALUE * Math.floor(r() * 1000);
      else if (kind < 0.9 && i > 0) vs[i] = vs[i - 1];
      else setBits(vs, i, (r() * 2 ** 32) >>> 0, (r() * 2 ** 32) >>> 0);
      // Steps exercise every delta-of-delta bucket, including the 64-bit one.
      const step = r();
      if (step < 0.4) t += 15000;
      else if (step < 0.6) t += 1 + Math.floor(r() * 8000);
      else if (step < 0.7) t += Math.floor(r() * 65000);
      else if (step < 0.8) t += Math.floor(r() * 520000);
      else if (step < 0.9) t += Math.floor(r() * 2 ** 40);
      else t += 0;
    }
    roundTrip(ts, vs);
  }
});

test('covers every delta-of-delta bucket boundary', () => {
  const dods = [0, 1, -1, 8192, -8191, 8193, -8192, 65536, -65535, 65537, -65536, 524288, -524287, 524289, -524288, 2 ** 40, -(2 ** 40)];
  const ts: number[] = [1000, 2000];
  let delta = 1000;
  for (const d of dods) {
    delta += d;
    if (delta < 0) delta = 3000000;
    ts.push(ts[ts.length - 1] + delta);
  }
  const t = Float64Array.from(ts);
  const v = Float64Array.from(ts, (x, i) => i * 0.25);
  roundTrip(t, v);
});

test('negative timestamps, descending deltas and a single sample', () => {
  roundTrip(Float64Array.of(-5000), Float64Array.of(42));
  roundTrip(Float64Array.of(-1e12, -1e12 + 15, -5, 0, 3), Float64Array.of(1, 2, 3, 4, 5));
  // The chunk format itself does not require order (Go wraps the delta as uint64).
  roundTrip(Float64Array.of(1000, 500, 2000, -7), Float64Array.of(1, 1, 1, 1));
});

test('64 significant bits and leading-zero clamping', () => {
  const vs = new Float64Array(4);
  setBits(vs, 0, 0, 0);
  setBits(vs, 1, 0x80000000, 1); // xor has 0 leading and 0 trailing zeros: 64 significant bits
  setBits(vs, 2, 0x80000000, 0x80000001); // 32 leading zeros: clamped to 31
  setBits(vs, 3, 0x80000000, 0x80000003);
  roundTrip(Float64Array.of(1, 2, 3, 4), vs);
});

test('matches the bytes Prometheus writes for a known chunk', () => {
  // Two samples, constant value: header, varint(t0), raw float, uvarint delta, one zero bit.
  const enc = new XorChunkEncoder();
  enc.append(1000, 1);
  enc.append(2000, 1);
  assert.deepEqual(Array.from(enc.bytes()), [0x00, 0x02, 0xd0, 0x0f, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xe8, 0x07, 0x00]);
  // Go's bstream leaves an empty byte after a byte-aligned writeByte; so do we.
  const one = new XorChunkEncoder();
  one.append(1000, 1);
  assert.deepEqual(Array.from(one.bytes()), [0x00, 0x01, 0xd0, 0x0f, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x00]);
});

test('decodeXorChunkInto filters by time and the iterator seeks', () => {
  const ts = Float64Array.from({ length: 120 }, (_, i) => 1000 + i * 10);
  const vs = Float64Array.from({ length: 120 }, (_, i) => Math.sin(i));
  const enc = new XorChunkEncoder();
  enc.appendRange(ts, vs, 0, ts.length);
  const bytes = enc.bytes();
  const outT = new Float64Array(120);
  const outV = new Float64Array(120);
  const n = decodeXorChunkInto(bytes, outT, outV, 0, 1055, 1100);
  assert.deepEqual(Array.from(outT.subarray(0, n)), [1060, 1070, 1080, 1090, 1100]);
  assert.equal(outV[0], Math.sin(6));
  const it = new XorChunkIterator(bytes);
  assert.ok(it.seek(1555));
  assert.equal(it.t, 1560);
  assert.equal(it.v, Math.sin(56));
  let count = 1;
  while (it.next()) count++;
  assert.equal(count, 120 - 56);
});

test('rejects timestamps that cannot be exact', () => {
  const enc = new XorChunkEncoder();
  assert.throws(() => enc.append(2 ** 52, 1), /within/);
  assert.throws(() => enc.append(1.5, 1), /integer/);
});

test('crc32c matches the Castagnoli check value', () => {
  assert.equal(crc32c(new TextEncoder().encode('123456789')), 0xe3069283);
  const big = new Uint8Array(1000).map((_, i) => (i * 7) & 0xff);
  assert.equal(crc32c(big, 500, 1000, crc32c(big, 0, 500)), crc32c(big));
});
