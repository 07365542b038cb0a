import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Labels, NativeHistogram } from '@strata/model';
import { BlockReader } from '../block/block-reader.ts';
import { writeBlockFromChunks } from '../block/block-writer.ts';
import { Head, emptyAppendStats } from './head.ts';
import { FLOAT_HISTOGRAM_ENCODING, HISTOGRAM_ENCODING, XOR_ENCODING } from '../chunkenc/chunk-encoding.ts';
import { histogramChunkHeader } from '../chunkenc/histogram-chunk.ts';
import { HEADER_UNKNOWN, sameHistogram } from '../chunkenc/histogram-layout.ts';
import type { HistogramSample } from './histogram-series.ts';
import { STALE_NAN, isStaleNaN } from '../chunkenc/varbit.ts';

const H2 = 2 * 3600_000;
const T0 = Math.floor(1_732_950_000_000 / H2) * H2 + 600_000;
const HOUR = 3600_000;
const labels: Labels = [
  { name: '__name__', value: 'latency' },
  { name: 'job', value: 'api' },
];

function hist(n: number, over: Partial<NativeHistogram> = {}): NativeHistogram {
  return {
    counterResetHint: 'unknown',
    schema: 0,
    zeroThreshold: 2 ** -128,
    zeroCount: n,
    count: 3 * n,
    sum: 1.25 * n,
    positiveSpans: [{ offset: 0, length: 2 }],
    negativeSpans: [],
    positiveBuckets: [n, n],
    negativeBuckets: [],
    ...over,
  };
}

const at = (k: number, n = k + 1, float = false): HistogramSample => ({ timestamp: T0 + k * 15_000, histogram: hist(n), float });

test('out-of-order histograms inside the window are kept and read in time order; replays are duplicates, other values conflicts, older than the window out of order', () => {
  let windowMs = HOUR;
  const head = new Head({ chunkRangeMs: H2, outOfOrderTimeWindowMs: () => windowMs });
  const st = emptyAppendStats();
  head.appendHistograms(labels, [at(0), at(2), at(4), at(6)], st);
  head.appendHistograms(labels, [at(5), at(1), at(3, 4, true)], st);
  assert.deepEqual([st.appended, st.outOfOrder], [7, 0]);

  // A Kafka replay of everything (in-order and out-of-order samples alike) is a no-op.
  head.appendHistograms(labels, [at(0), at(1), at(2), at(3, 4, true), at(4), at(5), at(6)], st);
  assert.equal(st.duplicates, 7);
  assert.equal(st.appended, 7);
  // The same timestamp with another histogram, in-order chunk or out-of-order store: conflicts.
  head.appendHistograms(labels, [at(2, 9), at(5, 9)], st);
  assert.equal(st.conflicting, 2);
  // A float where a histogram is (and a histogram where an out-of-order float is) conflicts too.
  head.append(labels, Float64Array.of(T0 + 15_000), Float64Array.of(1), st);
  head.append(labels, Float64Array.of(T0 + 7_000), Float64Array.of(1), st);
  head.appendHistograms(labels, [{ timestamp: T0 + 7_000, histogram: hist(1), float: false }], st);
  assert.deepEqual([st.conflicting, st.appended], [4, 8]);
  // Outside the window, or with no window, out of order.
  head.appendHistograms(labels, [{ timestamp: T0 + 6 * 15_000 - HOUR - 1, histogram: hist(1), float: false }], st);
  windowMs = 0;
  head.appendHistograms(labels, [{ timestamp: T0 + 10, histogram: hist(1), float: false }], st);
  assert.equal(st.outOfOrder, 2);

  const [s] = head.select([], T0, T0 + 1e6);
  assert.deepEqual(Array.from(s.timestamps), [T0 + 7_000]);
  const hs = s.histograms;
  assert.ok(hs);
  assert.deepEqual(
    Array.from(hs.timestamps),
    [0, 1, 2, 3, 4, 5, 6].map((k) => T0 + k * 15_000),
  );
  hs.values.forEach((h, k) => assert.ok(sameHistogram(h, hist(k + 1)), `sample ${k}`));
  // Where the merge switches between in-order and out-of-order samples nothing is known about a reset.
  assert.deepEqual(
    hs.values.map((h) => h.counterResetHint),
    ['unknown', 'unknown', 'unknown', 'unknown', 'unknown', 'unknown', 'unknown'],
  );
  // Reads narrower than the store take only what is inside.
  assert.deepEqual(
    Array.from(head.select([], T0 + 15_000, T0 + 45_000)[0].histograms?.timestamps ?? []),
    [1, 2, 3].map((k) => T0 + k * 15_000),
  );
});

test('a block cut from a series with out-of-order floats and histograms: one timeline, a chunk per run of one kind, out-of-order histogram chunks say "unknown"; the block reads back the same', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'strata-ooo-hist-'));
  try {
    const head = new Head({ chunkRangeMs: H2, outOfOrderTimeWindowMs: () => HOUR });
    const st = emptyAppendStats();
    // In order: floats at 0..2, histograms at 3..9. Then out of order: histograms at -3, -2 (before
    // everything), a float histogram inside the float run, floats inside the histogram run.
    head.append(labels, Float64Array.of(T0, T0 + 15_000, T0 + 30_000), Float64Array.of(1, 2, 3), st);
    head.appendHistograms(
      labels,
      [3, 4, 5, 6, 7, 8, 9].map((k) => at(k)),
      st,
    );
    head.appendHistograms(labels, [at(-3, 1), at(-2, 2)], st);
    head.appendHistograms(labels, [{ timestamp: T0 + 20_000, histogram: hist(2.5), float: true }], st);
    head.append(labels, Float64Array.of(T0 + 5 * 15_000 + 1, T0 + 5 * 15_000 + 2), Float64Array.of(7, 8), st);
    assert.deepEqual([st.appended, st.outOfOrder, st.conflicting], [15, 0, 0]);

    const start = Math.floor(T0 / H2) * H2;
    const series = head.snapshotForBlock(start, start + H2);
    const chunks = series[0].chunks;
    assert.deepEqual(
      chunks.map((c) => c.encoding ?? XOR_ENCODING),
      [HISTOGRAM_ENCODING, XOR_ENCODING, FLOAT_HISTOGRAM_ENCODING, XOR_ENCODING, HISTOGRAM_ENCODING, XOR_ENCODING, HISTOGRAM_ENCODING],
    );
    for (let i = 1; i < chunks.length; i++) assert.ok(chunks[i].minTime > chunks[i - 1].maxTime, `chunk ${i} overlaps the one before`);
    assert.equal(histogramChunkHeader(chunks[0].data), HEADER_UNKNOWN);
    assert.equal(histogramChunkHeader(chunks[2].data), HEADER_UNKNOWN);

    // Out-of-order samples that follow one another keep "not a reset"; a switch of source says "unknown".
    assert.deepEqual(
      head.select([], -Infinity, Infinity)[0].histograms?.values.map((x) => x.counterResetHint),
      ['unknown', 'not_reset', 'unknown', 'unknown', 'not_reset', 'not_reset', 'not_reset', 'not_reset', 'not_reset', 'not_reset'],
    );

    const written = await writeBlockFromChunks({ dir, series });
    assert.ok(written);
    assert.equal(written.meta.stats.numSamples, 15);
    const reader = await BlockReader.openDir(written.dir);
    const [b] = await reader.select({ matchers: [], mint: -Infinity, maxt: Infinity });
    await reader.close();
    const [h] = head.select([], -Infinity, Infinity);
    assert.deepEqual(Array.from(b.timestamps), Array.from(h.timestamps));
    assert.deepEqual(Array.from(b.values), [1, 2, 3, 7, 8]);
    assert.deepEqual(Array.from(b.histograms?.timestamps ?? []), Array.from(h.histograms?.timestamps ?? []));
    h.histograms?.values.forEach((x, i) => assert.ok(sameHistogram(x, (b.histograms as { values: NativeHistogram[] }).values[i]), `histogram ${i}`));
    assert.equal(b.histograms?.values.length, 10);

    // Nothing lands below the cut any more; truncation drops the out-of-order histograms with the rest.
    head.appendHistograms(labels, [at(-1)], st);
    assert.equal(st.outOfBounds, 1);
    head.truncate(start + H2);
    assert.equal(head.numSeries, 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('an out-of-order stale histogram marker keeps its bits; a sample no chunk could hold throws at append', () => {
  const head = new Head({ chunkRangeMs: H2, outOfOrderTimeWindowMs: () => HOUR });
  const st = emptyAppendStats();
  head.appendHistograms(labels, [at(0), at(2)], st);
  head.appendHistograms(labels, [{ timestamp: T0 + 15_000, histogram: hist(0, { sum: STALE_NAN, positiveSpans: [], positiveBuckets: [] }), float: false }], st);
  const hs = head.select([], T0, T0 + 1e6)[0].histograms;
  assert.ok(hs && isStaleNaN(hs.values[1].sum));
  const w = new Uint32Array(Float64Array.of(hs.values[1].sum).buffer);
  assert.deepEqual([w[1], w[0]], [0x7ff00000, 2]);
  // The replayed marker is a duplicate.
  head.appendHistograms(labels, [{ timestamp: T0 + 15_000, histogram: hist(5, { sum: STALE_NAN }), float: false }], st);
  assert.equal(st.duplicates, 1);
  assert.throws(() => head.appendHistograms(labels, [{ timestamp: T0 + 20_000, histogram: hist(1.5), float: false }], st), /non-negative integer counts/);
});

test('a float series given an out-of-order histogram reads and cuts both', () => {
  const head = new Head({ chunkRangeMs: H2, outOfOrderTimeWindowMs: () => HOUR });
  const st = emptyAppendStats();
  head.append(labels, Float64Array.of(T0, T0 + 30_000), Float64Array.of(1, 3), st);
  head.appendHistograms(labels, [at(1, 2, true)], st);
  assert.equal(st.appended, 3);
  const [s] = head.select([], T0, T0 + 1e6);
  assert.deepEqual(Array.from(s.timestamps), [T0, T0 + 30_000]);
  assert.deepEqual(Array.from(s.histograms?.timestamps ?? []), [T0 + 15_000]);
  const start = Math.floor(T0 / H2) * H2;
  const chunks = head.snapshotForBlock(start, start + H2)[0].chunks;
  assert.deepEqual(
    chunks.map((c) => c.encoding ?? XOR_ENCODING),
    [XOR_ENCODING, FLOAT_HISTOGRAM_ENCODING, XOR_ENCODING],
  );
});
