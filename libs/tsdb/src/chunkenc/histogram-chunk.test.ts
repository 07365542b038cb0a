import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NativeHistogram } from '@strata/model';
import { BitReader, BitWriter } from './bit-stream.ts';
import { FLOAT_HISTOGRAM_ENCODING, HISTOGRAM_ENCODING } from './chunk-encoding.ts';
import { HistogramChunkEncoder, decodeHistogramChunk, histogramChunkHeader, histogramChunkNumSamples } from './histogram-chunk.ts';
import { HEADER_GAUGE, HEADER_RESET, HEADER_UNKNOWN, sameHistogram, spansFromIndices } from './histogram-layout.ts';
import {
  STALE_NAN,
  floatFromBits,
  floatHi,
  floatLo,
  isStaleNaN,
  putVarbitInt,
  putVarbitUint,
  putZeroThreshold,
  readVarbitInt,
  readVarbitUint,
  readZeroThreshold,
} from './varbit.ts';

const T0 = 1_732_950_000_000;

function hist(over: Partial<NativeHistogram>): NativeHistogram {
  return {
    counterResetHint: 'unknown',
    schema: 1,
    zeroThreshold: 2 ** -128,
    zeroCount: 1,
    count: 10,
    sum: 12.5,
    positiveSpans: [
      { offset: -1, length: 2 },
      { offset: 2, length: 1 },
    ],
    negativeSpans: [{ offset: 0, length: 1 }],
    positiveBuckets: [1, 2, 3],
    negativeBuckets: [3],
    ...over,
  };
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296;
}

test('varbit ints and uints round-trip across every bucket width, including the edges', () => {
  const ints = [
    0,
    1,
    -1,
    4,
    -3,
    5,
    -4,
    32,
    -31,
    33,
    256,
    -255,
    257,
    2048,
    -2047,
    2049,
    131072,
    -131071,
    16777216,
    -16777215,
    16777217,
    2 ** 40,
    -(2 ** 40),
    2 ** 53 - 1,
    -(2 ** 53 - 1),
    1_732_950_000_000,
  ];
  const w = new BitWriter();
  for (const x of ints) putVarbitInt(w, x);
  const uints = [0, 7, 8, 63, 64, 511, 512, 4095, 4096, 262143, 262144, 33554431, 33554432, 2 ** 53 - 1];
  for (const x of uints) putVarbitUint(w, x);
  for (const z of [0, 2 ** -128, 2 ** 10, 2 ** -243, 0.001, 3]) putZeroThreshold(w, z);
  const r = new BitReader(w.bytes());
  for (const x of ints) assert.equal(readVarbitInt(r), x);
  for (const x of uints) assert.equal(readVarbitUint(r), x);
  for (const z of [0, 2 ** -128, 2 ** 10, 2 ** -243, 0.001, 3]) assert.equal(readZeroThreshold(r), z);
});

test('the default zero threshold 2^-128 is the single byte 116, as Prometheus writes it', () => {
  const w = new BitWriter();
  putZeroThreshold(w, 2 ** -128);
  assert.deepEqual([...w.bytes()], [116]);
});

for (const encoding of [HISTOGRAM_ENCODING, FLOAT_HISTOGRAM_ENCODING] as const) {
  test(`encoding ${encoding}: 120 random samples round-trip exactly, sums bit for bit`, () => {
    const rand = rng(encoding);
    const enc = new HistogramChunkEncoder(encoding);
    const want: { t: number; h: NativeHistogram }[] = [];
    let t = T0;
    const counts = [0, 0, 0];
    let neg = 0;
    let zc = 0;
    for (let i = 0; i < 120; i++) {
      t += 15_000 + Math.floor(rand() * 3000) - 1500;
      for (let k = 0; k < 3; k++) counts[k] += Math.floor(rand() * (k === 1 ? 1e6 : 5));
      neg += Math.floor(rand() * 3);
      zc += i % 7 === 0 ? 1 : 0;
      const frac = encoding === FLOAT_HISTOGRAM_ENCODING ? rand() : 0;
      const pb = counts.map((c) => c + frac);
      const sums = [rand() * 1e9, -0, Number.MIN_VALUE, 1 / 3, Infinity];
      const h = hist({ count: pb[0] + pb[1] + pb[2] + neg + zc, zeroCount: zc, sum: sums[i % sums.length], positiveBuckets: pb, negativeBuckets: [neg] });
      enc.append(t, h);
      want.push({ t, h });
    }
    const bytes = enc.bytes().slice();
    assert.equal(histogramChunkNumSamples(bytes), 120);
    const got = decodeHistogramChunk(bytes, encoding);
    assert.deepEqual(
      got.timestamps,
      want.map((w) => w.t),
    );
    got.histograms.forEach((h, i) => {
      assert.ok(sameHistogram(h, want[i].h), `sample ${i}: ${JSON.stringify(h)} vs ${JSON.stringify(want[i].h)}`);
      assert.deepEqual(h.positiveBuckets, want[i].h.positiveBuckets);
      assert.equal(floatHi(h.sum), floatHi(want[i].h.sum));
      assert.equal(floatLo(h.sum), floatLo(want[i].h.sum));
      assert.equal(h.counterResetHint, i === 0 ? 'unknown' : 'not_reset');
    });
    // A range cut decodes only the samples inside.
    const part = decodeHistogramChunk(bytes, encoding, want[10].t, want[19].t);
    assert.deepEqual(
      part.timestamps,
      want.slice(10, 20).map((w) => w.t),
    );
  });

  test(`encoding ${encoding}: stale markers are a stale NaN sum with no buckets, also as the first sample`, () => {
    const enc = new HistogramChunkEncoder(encoding);
    enc.append(T0, hist({}));
    assert.ok(enc.tryAppend(T0 + 1000, hist({ sum: STALE_NAN })).ok);
    assert.ok(enc.tryAppend(T0 + 2000, hist({ sum: STALE_NAN })).ok);
    // After a stale marker only stale markers fit.
    assert.deepEqual(enc.tryAppend(T0 + 3000, hist({ count: 11 })), { ok: false, header: HEADER_UNKNOWN });
    const got = decodeHistogramChunk(enc.bytes(), encoding);
    assert.equal(got.histograms.length, 3);
    assert.ok(!isStaleNaN(got.histograms[0].sum));
    for (const h of got.histograms.slice(1)) {
      // A sum is a JS number, and V8 (Node 26) quiets a signalling NaN it loads (0x7ff8…02):
      // isStaleNaN takes both, and the encoder writes Prometheus' exact bits whichever it is given,
      // so encoding the decoded histograms again gives the same bytes.
      assert.ok(isStaleNaN(h.sum));
      assert.equal(floatLo(h.sum), 2);
      assert.deepEqual(h.positiveBuckets, []);
    }
    const again = new HistogramChunkEncoder(encoding);
    again.append(T0, got.histograms[0]);
    for (let i = 1; i < 3; i++) assert.ok(again.tryAppend(got.timestamps[i], got.histograms[i]).ok);
    assert.deepEqual(again.bytes(), enc.bytes());
    // The chunk holds 0x7ff0000000000002 however the number arrives: a quieted one encodes the same.
    const quiet = new HistogramChunkEncoder(encoding);
    quiet.append(T0, got.histograms[0]);
    for (let i = 1; i < 3; i++) assert.ok(quiet.tryAppend(got.timestamps[i], hist({ sum: floatFromBits(0x7ff80000, 2) })).ok);
    assert.deepEqual(quiet.bytes(), enc.bytes());
    const first = new HistogramChunkEncoder(encoding);
    first.append(T0, hist({ sum: floatFromBits(0x7ff00000, 2) }));
    const one = decodeHistogramChunk(first.bytes(), encoding);
    assert.ok(isStaleNaN(one.histograms[0].sum));
  });

  test(`encoding ${encoding}: a counter reset, a schema change and a reset hint each need a new chunk`, () => {
    const enc = new HistogramChunkEncoder(encoding);
    enc.append(T0, hist({}));
    assert.deepEqual(enc.tryAppend(T0 + 1, hist({ count: 9 })), { ok: false, header: HEADER_RESET });
    assert.deepEqual(enc.tryAppend(T0 + 1, hist({ count: 12, positiveBuckets: [0, 2, 3] })), { ok: false, header: HEADER_RESET });
    assert.deepEqual(enc.tryAppend(T0 + 1, hist({ count: 12, zeroCount: 0 })), { ok: false, header: HEADER_RESET });
    assert.deepEqual(enc.tryAppend(T0 + 1, hist({ count: 12, counterResetHint: 'reset' })), { ok: false, header: HEADER_RESET });
    assert.deepEqual(enc.tryAppend(T0 + 1, hist({ count: 12, schema: 2 })), { ok: false, header: HEADER_UNKNOWN });
    assert.deepEqual(enc.tryAppend(T0 + 1, hist({ count: 12, zeroThreshold: 0.001 })), { ok: false, header: HEADER_UNKNOWN });
    // A bucket in use disappearing is a reset; an empty one may go.
    assert.deepEqual(enc.tryAppend(T0 + 1, hist({ count: 12, positiveSpans: [{ offset: -1, length: 2 }], positiveBuckets: [5, 5] })), {
      ok: false,
      header: HEADER_RESET,
    });
    assert.deepEqual(enc.tryAppend(T0 + 1, hist({ counterResetHint: 'gauge' })), { ok: false, header: HEADER_GAUGE });
    assert.equal(enc.numSamples, 1);
    const reset = new HistogramChunkEncoder(encoding, HEADER_RESET);
    reset.append(T0, hist({}));
    assert.equal(histogramChunkHeader(reset.bytes()), HEADER_RESET);
  });

  test(`encoding ${encoding}: new buckets re-encode the chunk on the wider layout`, () => {
    const enc = new HistogramChunkEncoder(encoding);
    enc.append(T0, hist({}));
    enc.append(T0 + 1000, hist({ count: 12, positiveBuckets: [2, 2, 4] }));
    // Positive bucket 5 and negative bucket 1 appear: the earlier samples get them as empty buckets.
    const wider = hist({
      count: 20,
      positiveSpans: spansFromIndices([-1, 0, 3, 5]),
      positiveBuckets: [2, 3, 4, 5],
      negativeSpans: spansFromIndices([0, 1]),
      negativeBuckets: [3, 1],
    });
    assert.deepEqual(enc.tryAppend(T0 + 2000, wider), { ok: true });
    // Then a sample on the old layout lacks bucket 5, which is in use now: a reset.
    assert.deepEqual(enc.tryAppend(T0 + 3000, hist({ count: 21 })), { ok: false, header: HEADER_RESET });
    const got = decodeHistogramChunk(enc.bytes(), encoding);
    assert.equal(got.histograms.length, 3);
    assert.deepEqual(got.histograms[0].positiveSpans, spansFromIndices([-1, 0, 3, 5]));
    assert.deepEqual(got.histograms[0].positiveBuckets, [1, 2, 3, 0]);
    assert.deepEqual(got.histograms[0].negativeBuckets, [3, 0]);
    assert.deepEqual(got.histograms[1].positiveBuckets, [2, 2, 4, 0]);
    assert.deepEqual(got.histograms[2].positiveBuckets, [2, 3, 4, 5]);
    assert.ok(sameHistogram(got.histograms[0], hist({})));
  });

  test(`encoding ${encoding}: gauge histograms go down without new chunks; custom bounds (schema -53) round-trip`, () => {
    const enc = new HistogramChunkEncoder(encoding, HEADER_GAUGE);
    enc.append(T0, hist({ counterResetHint: 'gauge' }));
    assert.deepEqual(enc.tryAppend(T0 + 1, hist({ counterResetHint: 'gauge', count: 2, zeroCount: 0, positiveBuckets: [0, 1, 1], negativeBuckets: [0] })), {
      ok: true,
    });
    assert.deepEqual(enc.tryAppend(T0 + 2, hist({ count: 3 })), { ok: false, header: HEADER_UNKNOWN });
    const got = decodeHistogramChunk(enc.bytes(), encoding);
    assert.deepEqual(
      got.histograms.map((h) => h.counterResetHint),
      ['gauge', 'gauge'],
    );
    assert.deepEqual(got.histograms[1].positiveBuckets, [0, 1, 1]);

    const cv = [0.005, 0.25, 1, 2.5, 1e9, -3, 0.1234567];
    const custom = new HistogramChunkEncoder(encoding);
    const h = hist({
      schema: -53,
      zeroThreshold: 0,
      zeroCount: 0,
      count: 6,
      customValues: cv,
      negativeSpans: [],
      negativeBuckets: [],
      positiveSpans: [{ offset: 0, length: 3 }],
      positiveBuckets: [1, 2, 3],
    });
    custom.append(T0, h);
    assert.deepEqual(custom.tryAppend(T0 + 1, { ...h, customValues: [1, 2] }), { ok: false, header: HEADER_RESET });
    const back = decodeHistogramChunk(custom.bytes(), encoding);
    assert.deepEqual(back.histograms[0].customValues, cv);
  });
}

test('an integer chunk refuses non-integer counts', () => {
  const enc = new HistogramChunkEncoder(HISTOGRAM_ENCODING);
  assert.throws(() => enc.append(T0, hist({ count: 10.5 })), /integer/);
});
