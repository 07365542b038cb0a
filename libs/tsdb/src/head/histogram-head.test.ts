import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Labels, NativeHistogram } from '@strata/model';
import { BlockReader } from '../block/block-reader.ts';
import { writeBlock, writeBlockFromChunks } from '../block/block-writer.ts';
import { compactBlocks } from '../block/compact.ts';
import { Head, emptyAppendStats } from './head.ts';
import { FLOAT_HISTOGRAM_ENCODING, HISTOGRAM_ENCODING, XOR_ENCODING } from '../chunkenc/chunk-encoding.ts';
import { histogramChunkHeader } from '../chunkenc/histogram-chunk.ts';
import { HEADER_NOT_RESET, HEADER_RESET, HEADER_UNKNOWN, sameHistogram } from '../chunkenc/histogram-layout.ts';
import type { HistogramSample } from './histogram-series.ts';
import { STALE_NAN, isStaleNaN } from '../chunkenc/varbit.ts';

const T0 = 1_732_950_000_000;
const H2 = 2 * 3600_000;
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
    count: 6 * n,
    sum: 1.25 * n,
    positiveSpans: [{ offset: 0, length: 2 }],
    negativeSpans: [{ offset: 1, length: 1 }],
    positiveBuckets: [2 * n, 2 * n],
    negativeBuckets: [n],
    ...over,
  };
}

function samples(from: number, n: number, step = 15_000, float = false): HistogramSample[] {
  return Array.from({ length: n }, (_, i) => ({ timestamp: T0 + (from + i) * step, histogram: hist(from + i + 1), float }));
}

async function tmp(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'strata-hist-'));
}

test('head: histograms are stored, selected as the model type, replays are no-ops, conflicts and out-of-order are rejected', () => {
  const head = new Head({ chunkRangeMs: H2, outOfOrderTimeWindowMs: () => 3600_000 });
  const stats = emptyAppendStats();
  head.appendHistograms(labels, samples(0, 300), stats);
  assert.equal(stats.appended, 300);
  head.appendHistograms(labels, samples(299, 1), stats);
  assert.equal(stats.duplicates, 1);
  head.appendHistograms(labels, [{ timestamp: T0 + 299 * 15_000, histogram: hist(7), float: false }], stats);
  assert.equal(stats.conflicting, 1);
  head.appendHistograms(labels, [{ timestamp: T0 + 10 * 15_000 + 1, histogram: hist(7), float: false }], stats);
  assert.equal(stats.outOfOrder, 1);
  // A float at the timestamp of the newest histogram conflicts.
  head.append(labels, Float64Array.of(T0 + 299 * 15_000), Float64Array.of(1), stats);
  assert.equal(stats.conflicting, 2);

  const [s] = head.select([{ type: '=', name: '__name__', value: 'latency' }], T0, T0 + 1e9);
  assert.equal(s.timestamps.length, 0);
  assert.ok(s.histograms);
  assert.equal(s.histograms.timestamps.length, 300);
  s.histograms.values.forEach((h, i) => assert.ok(sameHistogram(h, hist(i + 1)), `sample ${i}`));
  const part = head.select([], T0 + 15_000, T0 + 30_000);
  assert.deepEqual(Array.from(part[0].histograms?.timestamps ?? []), [T0 + 15_000, T0 + 30_000]);
});

test('head: a series switching between floats and histograms cuts a chunk at each switch; the block reads back both', async () => {
  const dir = await tmp();
  try {
    const head = new Head({ chunkRangeMs: H2 });
    const st = emptyAppendStats();
    head.append(labels, Float64Array.of(T0, T0 + 1000), Float64Array.of(1, 2), st);
    head.appendHistograms(
      labels,
      [
        { timestamp: T0 + 2000, histogram: hist(1), float: false },
        { timestamp: T0 + 3000, histogram: hist(2), float: false },
      ],
      st,
    );
    head.append(labels, Float64Array.of(T0 + 4000), Float64Array.of(3), st);
    head.appendHistograms(labels, [{ timestamp: T0 + 5000, histogram: hist(3.5), float: true }], st);
    // A counter reset inside the histograms: a new chunk with the reset bits.
    head.appendHistograms(
      labels,
      [
        { timestamp: T0 + 6000, histogram: hist(4.5), float: true },
        { timestamp: T0 + 7000, histogram: hist(1), float: true },
      ],
      st,
    );
    assert.equal(st.appended, 8);

    const start = Math.floor(T0 / H2) * H2;
    const series = head.snapshotForBlock(start, start + H2);
    const chunks = series[0].chunks;
    assert.deepEqual(
      chunks.map((c) => c.encoding ?? XOR_ENCODING),
      [XOR_ENCODING, HISTOGRAM_ENCODING, XOR_ENCODING, FLOAT_HISTOGRAM_ENCODING, FLOAT_HISTOGRAM_ENCODING],
    );
    assert.equal(histogramChunkHeader(chunks[4].data), HEADER_RESET);
    assert.equal(histogramChunkHeader(chunks[1].data), HEADER_UNKNOWN);

    const written = await writeBlockFromChunks({ dir, series });
    assert.ok(written);
    assert.equal(written.meta.stats.numSamples, 8);
    const reader = await BlockReader.openDir(written.dir);
    try {
      const [s] = await reader.select({ matchers: [], mint: T0, maxt: T0 + 10_000 });
      assert.deepEqual(Array.from(s.timestamps), [T0, T0 + 1000, T0 + 4000]);
      assert.deepEqual(Array.from(s.values), [1, 2, 3]);
      assert.deepEqual(
        Array.from(s.histograms?.timestamps ?? []),
        [2000, 3000, 5000, 6000, 7000].map((d) => T0 + d),
      );
      const want = [hist(1), hist(2), hist(3.5), hist(4.5), hist(1)];
      s.histograms?.values.forEach((h, i) => assert.ok(sameHistogram(h, want[i]), `histogram ${i}`));
    } finally {
      await reader.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('head: histogram chunks hold 120 samples and never cross a block boundary; the next chunk says "not a reset"', () => {
  const head = new Head({ chunkRangeMs: H2 });
  const st = emptyAppendStats();
  const start = Math.ceil(T0 / H2) * H2;
  // 250 samples at 15 s from 10 minutes before a boundary.
  const list = Array.from({ length: 250 }, (_, i) => ({ timestamp: start - 600_000 + i * 15_000, histogram: hist(i + 1), float: false }));
  head.appendHistograms(labels, list, st);
  const before = head.snapshotForBlock(start - H2, start);
  assert.equal(before[0].chunks.length, 1);
  assert.equal(before[0].chunks[0].maxTime, start - 15_000);
  const after = head.snapshotForBlock(start, start + H2);
  assert.deepEqual(
    after[0].chunks.map((c) => (c.data[0] << 8) | c.data[1]),
    [120, 90],
  );
  assert.equal(histogramChunkHeader(after[0].chunks[1].data), HEADER_NOT_RESET);
  head.truncate(start);
  const left = head.select([], -Infinity, Infinity);
  assert.equal(left[0].histograms?.timestamps.length, 210);
});

test('head: stale histogram markers keep their NaN bits through the head and a block', async () => {
  const dir = await tmp();
  try {
    const head = new Head({ chunkRangeMs: H2 });
    const st = emptyAppendStats();
    head.appendHistograms(labels, [...samples(0, 3), { timestamp: T0 + 3 * 15_000, histogram: hist(0, { sum: STALE_NAN }), float: false }], st);
    const got = head.select([], T0, T0 + 1e6)[0].histograms;
    assert.ok(got && isStaleNaN(got.values[3].sum));
    const start = Math.floor(T0 / H2) * H2;
    const written = await writeBlockFromChunks({ dir, series: head.snapshotForBlock(start, start + H2) });
    const reader = await BlockReader.openDir((written as { dir: string }).dir);
    const [s] = await reader.select({ matchers: [], mint: T0, maxt: T0 + 1e6 });
    await reader.close();
    const h = s.histograms?.values[3];
    assert.ok(h);
    const w = new Uint32Array(Float64Array.of(h.sum).buffer);
    assert.deepEqual([w[1], w[0]], [0x7ff00000, 2]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("compaction merges two zones' histogram blocks, identical samples kept once", async () => {
  const dir = await tmp();
  try {
    const mk = async (from: number, n: number) => {
      const hs = samples(from, n);
      return writeBlock({
        dir,
        mint: T0,
        maxt: T0 + H2,
        series: [
          {
            labels,
            timestamps: new Float64Array(0),
            values: new Float64Array(0),
            histograms: { timestamps: Float64Array.from(hs, (x) => x.timestamp), values: hs.map((x) => x.histogram) },
          },
        ],
      });
    };
    const a = await mk(0, 200);
    const b = await mk(50, 200);
    const blocks = [await BlockReader.openDir(a!.dir), await BlockReader.openDir(b!.dir)];
    const { block, stats } = await compactBlocks({ dir, blocks });
    for (const r of blocks) await r.close();
    assert.equal(stats.duplicateSamples, 150);
    assert.equal(block?.meta.stats.numSamples, 250);
    const r = await BlockReader.openDir(block!.dir);
    const [s] = await r.select({ matchers: [], mint: -Infinity, maxt: Infinity });
    await r.close();
    assert.equal(s.histograms?.timestamps.length, 250);
    s.histograms?.values.forEach((h, i) => assert.ok(sameHistogram(h, hist(i + 1)), `sample ${i}`));
    // Tombstones cut histogram samples too.
    const again = await BlockReader.openDir(block!.dir);
    const del = await compactBlocks({ dir, blocks: [again], tombstones: [{ matchers: [], mint: T0, maxt: T0 + 99 * 15_000 }] });
    await again.close();
    assert.equal(del.stats.deletedSamples, 100);
    assert.equal(del.block?.meta.stats.numSamples, 150);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
