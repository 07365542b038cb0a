// Native histograms with custom buckets (schema -53, NHCB, what OTLP explicit-bucket
// histograms become) through the head, a block and compaction, with Prometheus'
// chunk rules: other bounds or fewer counts cut a chunk marked as a reset, a gauge
// histogram (a delta) goes up and down in one chunk, a new bucket widens the layout.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Labels, NativeHistogram } from '@strata/model';
import { BlockReader } from '../block/block-reader.ts';
import { writeBlockFromChunks } from '../block/block-writer.ts';
import { compactBlocks } from '../block/compact.ts';
import { Head, emptyAppendStats } from './head.ts';
import { HISTOGRAM_ENCODING } from '../chunkenc/chunk-encoding.ts';
import { decodeHistogramChunk, histogramChunkHeader } from '../chunkenc/histogram-chunk.ts';
import { HEADER_GAUGE, HEADER_RESET, HEADER_UNKNOWN } from '../chunkenc/histogram-layout.ts';
import type { HistogramSample } from './histogram-series.ts';

const H2 = 2 * 3600_000;
const T0 = Math.floor(1_732_950_000_000 / H2) * H2 + 600_000;
const BOUNDS = [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000];

const counter: Labels = [
  { name: '__name__', value: 'latency' },
  { name: 'job', value: 'api' },
];
const delta: Labels = [
  { name: '__name__', value: 'latency_delta' },
  { name: 'job', value: 'api' },
];

/** An NHCB sample from dense bucket counts, laid out as the OTLP conversion lays it out. */
function nhcb(counts: number[], opts: { bounds?: number[]; gauge?: boolean; sum?: number } = {}): NativeHistogram {
  const first = counts.findIndex((c) => c !== 0);
  const kept = counts.slice(first);
  return {
    counterResetHint: opts.gauge ? 'gauge' : 'unknown',
    schema: -53,
    zeroThreshold: 0,
    zeroCount: 0,
    count: counts.reduce((a, b) => a + b, 0),
    sum: opts.sum ?? 10 * counts.reduce((a, b) => a + b, 0),
    positiveSpans: [{ offset: first, length: kept.length }],
    positiveBuckets: kept,
    negativeSpans: [],
    negativeBuckets: [],
    customValues: opts.bounds ?? BOUNDS,
  };
}

const at = (i: number, h: NativeHistogram): HistogramSample => ({ timestamp: T0 + i * 15_000, histogram: h, float: false });

/** Counter NHCB: growing, then a new bucket (wider layout), then a reset, then other bounds. */
const COUNTER = [
  at(0, nhcb([0, 0, 1, 0, 3, 0])),
  at(1, nhcb([0, 0, 2, 0, 5, 0])),
  at(2, nhcb([0, 1, 2, 0, 6, 1])),
  at(3, nhcb([0, 0, 1, 0, 1, 0])),
  at(4, nhcb([4, 1], { bounds: [0.5] })),
];
/** Delta NHCB (gauge histograms): counts go down without a reset. */
const DELTA = [at(0, nhcb([0, 3, 1], { gauge: true })), at(1, nhcb([0, 1, 0], { gauge: true })), at(2, nhcb([2, 0, 4], { gauge: true }))];

/** The same histogram: the layout may differ (a widened chunk keeps empty buckets), the buckets by bound may not. */
function byBound(h: NativeHistogram): Record<string, number> {
  const out: Record<string, number> = {};
  let idx = 0;
  let k = 0;
  for (const s of h.positiveSpans) {
    idx += s.offset;
    for (let j = 0; j < s.length; j++, idx++, k++) if (h.positiveBuckets[k] !== 0) out[String(h.customValues?.[idx] ?? '+Inf')] = h.positiveBuckets[k];
  }
  return out;
}

function assertSame(got: readonly NativeHistogram[], want: readonly HistogramSample[], what: string): void {
  assert.equal(got.length, want.length, what);
  got.forEach((h, i) => {
    const w = want[i].histogram;
    assert.deepEqual([h.schema, h.count, h.sum, h.customValues], [w.schema, w.count, w.sum, w.customValues], `${what} sample ${i}`);
    assert.deepEqual(byBound(h), byBound(w), `${what} sample ${i} buckets`);
  });
}

function headWithSamples(): Head {
  const head = new Head({ chunkRangeMs: H2 });
  const st = emptyAppendStats();
  head.appendHistograms(counter, COUNTER, st);
  head.appendHistograms(delta, DELTA, st);
  assert.equal(st.appended, COUNTER.length + DELTA.length);
  return head;
}

test('NHCB in the head: other bounds and fewer counts cut a chunk marked reset, a new bucket does not, gauge histograms stay in one chunk', () => {
  const head = headWithSamples();
  const start = Math.floor(T0 / H2) * H2;
  const [c, d] = head.snapshotForBlock(start, start + H2).sort((a, b) => a.labels[0].value.localeCompare(b.labels[0].value));
  assert.deepEqual(
    c.chunks.map((x) => [x.encoding, histogramChunkHeader(x.data), decodeHistogramChunk(x.data, HISTOGRAM_ENCODING).histograms.length]),
    [
      [HISTOGRAM_ENCODING, HEADER_UNKNOWN, 3],
      [HISTOGRAM_ENCODING, HEADER_RESET, 1],
      [HISTOGRAM_ENCODING, HEADER_RESET, 1],
    ],
  );
  assert.deepEqual(
    d.chunks.map((x) => [histogramChunkHeader(x.data), decodeHistogramChunk(x.data, HISTOGRAM_ENCODING).histograms.length]),
    [[HEADER_GAUGE, 3]],
  );
  const [sc, sd] = head.select([], T0, T0 + H2).sort((a, b) => a.labels[0].value.localeCompare(b.labels[0].value));
  assertSame(sc.histograms!.values, COUNTER, 'head counter');
  assertSame(sd.histograms!.values, DELTA, 'head delta');
  assert.deepEqual(
    sd.histograms!.values.map((h) => h.counterResetHint),
    ['gauge', 'gauge', 'gauge'],
  );
});

test('NHCB through a block and the compaction of two overlapping blocks: bounds, counts and sums come back as written', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'strata-nhcb-'));
  try {
    const start = Math.floor(T0 / H2) * H2;
    // Two zones' blocks of the same data, as the compactor merges them.
    const blocks = [];
    for (let zone = 0; zone < 2; zone++) {
      const written = await writeBlockFromChunks({ dir, series: headWithSamples().snapshotForBlock(start, start + H2) });
      assert.ok(written);
      blocks.push(await BlockReader.openDir(written.dir));
    }
    const read = async (r: BlockReader, what: string) => {
      const got = (await r.select({ matchers: [], mint: -Infinity, maxt: Infinity })).sort((a, b) => a.labels[0].value.localeCompare(b.labels[0].value));
      assertSame(got[0].histograms!.values, COUNTER, `${what} counter`);
      assertSame(got[1].histograms!.values, DELTA, `${what} delta`);
    };
    await read(blocks[0], 'block');
    const { block, stats } = await compactBlocks({ dir, blocks });
    for (const r of blocks) await r.close();
    assert.equal(stats.duplicateSamples, COUNTER.length + DELTA.length);
    assert.equal(block?.meta.stats.numSamples, COUNTER.length + DELTA.length);
    const compacted = await BlockReader.openDir(block!.dir);
    try {
      await read(compacted, 'compacted');
    } finally {
      await compacted.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
