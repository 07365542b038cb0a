// Compaction of blocks into one (Prometheus' tsdb/compact.go, vertical
// included): series of all sources merged in label order; a series found in
// one source with non-overlapping chunks is copied chunk for chunk, otherwise
// its samples are merged (identical timestamps kept once) and re-encoded.
// Streams series; memory holds labels and chunk metas, not samples.

import { applyTombstones, compareLabels, mergeSamples, tombstoneIntervals, type Labels, type Tombstone } from '@strata/model';
import { BlockBuilder, type WrittenBlock } from './block-builder.ts';
import { BlockUnsupportedError } from './block-errors.ts';
import type { BlockReader } from './block-reader.ts';
import { DEFAULT_SAMPLES_PER_CHUNK } from './block-writer.ts';
import type { IndexSeriesEntry } from '../index/index-reader.ts';
import { encodeChunks } from '../head/memory-series.ts';
import type { BlockMeta } from './meta.ts';
import { decodeHistogramSamples, encodeHistogramChunks, sortedHistograms } from '../head/histogram-series.ts';
import { decodeXorChunkInto, xorChunkNumSamples } from '../chunkenc/xor-chunk.ts';
import { XOR_ENCODING, isChunkEncoding, type EncodedChunk } from '../chunkenc/chunk-encoding.ts';

export interface CompactOptions {
  /** Parent directory of the new block. */
  dir: string;
  /** Source blocks; each must have its meta. */
  blocks: BlockReader[];
  ulid?: string;
  samplesPerChunk?: number;
  /** `thanos.source` of the new block. Default 'compactor'. */
  source?: string;
  /** Deleted ranges: samples they cover are left out of the new block (a series left empty is dropped). */
  tombstones?: Tombstone[];
}

export interface CompactStats {
  seriesCopied: number;
  seriesMerged: number;
  /** Samples dropped because another source held the same timestamp. */
  duplicateSamples: number;
  /** Samples dropped because a tombstone covered them. */
  deletedSamples: number;
}

interface Cursor {
  it: AsyncGenerator<IndexSeriesEntry>;
  cur: IndexSeriesEntry | null;
  block: BlockReader;
}

/** Compacts the blocks into one; null when they hold no series. */
export async function compactBlocks(opts: CompactOptions): Promise<{ block: WrittenBlock | null; stats: CompactStats }> {
  const metas = opts.blocks.map((b) => {
    if (!b.meta) throw new Error('compaction needs every source block to have its meta.json');
    return b.meta;
  });
  const perChunk = opts.samplesPerChunk ?? DEFAULT_SAMPLES_PER_CHUNK;
  const stats: CompactStats = { seriesCopied: 0, seriesMerged: 0, duplicateSamples: 0, deletedSamples: 0 };
  const cursors: Cursor[] = [];
  for (const block of opts.blocks) {
    const it = block.allSeries();
    const first = await it.next();
    cursors.push({ it, cur: first.done ? null : first.value, block });
  }
  const builder = await BlockBuilder.create({ dir: opts.dir, ulid: opts.ulid });
  try {
    for (;;) {
      let min: Labels | null = null;
      for (const c of cursors) if (c.cur && (min === null || compareLabels(c.cur.labels, min) < 0)) min = c.cur.labels;
      if (min === null) break;
      const parts: { block: BlockReader; entry: IndexSeriesEntry }[] = [];
      for (const c of cursors) {
        if (c.cur && compareLabels(c.cur.labels, min) === 0) {
          parts.push({ block: c.block, entry: c.cur });
          const next = await c.it.next();
          c.cur = next.done ? null : next.value;
        }
      }
      let chunks = await mergedChunks(parts, perChunk, stats);
      const deleted = tombstoneIntervals(min, opts.tombstones ?? []);
      if (deleted.length > 0 && chunks.some((c) => deleted.some(([a, b]) => c.minTime <= b && a <= c.maxTime))) {
        chunks = withoutDeleted(min, chunks, opts.tombstones ?? [], perChunk, stats);
      }
      if (chunks.length > 0) await builder.addSeries(min, chunks);
    }
    const block = await builder.finish({
      compaction: compactionMeta(metas),
      source: opts.source ?? 'compactor',
      minTime: Math.min(...metas.map((m) => m.minTime)),
      maxTime: Math.max(...metas.map((m) => m.maxTime)),
    });
    return { block, stats };
  } catch (err) {
    if (!builder.finished) await builder.abort();
    throw err;
  }
}

function compactionMeta(metas: BlockMeta[]): BlockMeta['compaction'] {
  const sources = new Set<string>();
  for (const m of metas) for (const s of m.compaction.sources) sources.add(s);
  return {
    level: Math.max(...metas.map((m) => m.compaction.level)) + 1,
    sources: [...sources].sort(),
    parents: metas.map((m) => ({ ulid: m.ulid, minTime: m.minTime, maxTime: m.maxTime })),
  };
}

async function mergedChunks(parts: { block: BlockReader; entry: IndexSeriesEntry }[], perChunk: number, stats: CompactStats): Promise<EncodedChunk[]> {
  const all: EncodedChunk[] = [];
  for (const { block, entry } of parts) {
    const raw = await block.readChunks(entry.chunks.map((c) => c.ref));
    raw.forEach((r, i) => {
      const encoding = r.encoding;
      if (!isChunkEncoding(encoding)) throw new BlockUnsupportedError(`chunk encoding ${encoding} is not supported`);
      all.push({ minTime: entry.chunks[i].minTime, maxTime: entry.chunks[i].maxTime, data: r.data.slice(), encoding });
    });
  }
  all.sort((a, b) => a.minTime - b.minTime);
  let overlaps = false;
  for (let i = 1; i < all.length && !overlaps; i++) overlaps = all[i].minTime <= all[i - 1].maxTime;
  if (!overlaps) {
    // Disjoint in time (one source, or sources covering different ranges): the chunks go over as they are.
    stats.seriesCopied++;
    return all;
  }
  stats.seriesMerged++;
  const hists = all.filter((c) => (c.encoding ?? XOR_ENCODING) !== XOR_ENCODING);
  const floats = all.filter((c) => (c.encoding ?? XOR_ENCODING) === XOR_ENCODING);
  const out = mergeFloatChunks(parts[0].entry.labels, floats, perChunk, stats);
  if (hists.length === 0) return out;
  // Histogram samples of both zones: sorted, the first of equal timestamps kept (the zones hold identical samples).
  const samples = decodeHistogramSamples(hists, -Infinity, Infinity);
  const merged = sortedHistograms(samples);
  stats.duplicateSamples += samples.length - merged.length;
  return out.concat(encodeHistogramChunks(merged, perChunk)).sort((a, b) => a.minTime - b.minTime);
}

function mergeFloatChunks(labels: Labels, all: EncodedChunk[], perChunk: number, stats: CompactStats): EncodedChunk[] {
  let merged: { labels: Labels; timestamps: Float64Array; values: Float64Array } | null = null;
  let total = 0;
  for (const c of all) {
    const n = xorChunkNumSamples(c.data);
    const timestamps = new Float64Array(n);
    const values = new Float64Array(n);
    decodeXorChunkInto(c.data, timestamps, values, 0);
    total += n;
    const s = { labels, timestamps, values };
    merged = merged === null ? s : mergeSamples(merged, s);
  }
  if (merged === null) return [];
  stats.duplicateSamples += total - merged.timestamps.length;
  return encodeChunks(merged.timestamps, merged.values, perChunk);
}

/** The series' chunks re-encoded without the samples tombstones cover. */
function withoutDeleted(labels: Labels, all: EncodedChunk[], tombstones: Tombstone[], perChunk: number, stats: CompactStats): EncodedChunk[] {
  const chunks = all.filter((c) => (c.encoding ?? XOR_ENCODING) === XOR_ENCODING);
  const hists = all.filter((c) => (c.encoding ?? XOR_ENCODING) !== XOR_ENCODING);
  let histOut: EncodedChunk[] = [];
  if (hists.length > 0) {
    const samples = decodeHistogramSamples(hists, -Infinity, Infinity);
    const iv = tombstoneIntervals(labels, tombstones);
    const kept = samples.filter((x) => !iv.some(([a, b]) => x.timestamp >= a && x.timestamp <= b));
    stats.deletedSamples += samples.length - kept.length;
    histOut = encodeHistogramChunks(kept, perChunk);
  }
  return withoutDeletedFloats(labels, chunks, tombstones, perChunk, stats)
    .concat(histOut)
    .sort((a, b) => a.minTime - b.minTime);
}

function withoutDeletedFloats(labels: Labels, chunks: EncodedChunk[], tombstones: Tombstone[], perChunk: number, stats: CompactStats): EncodedChunk[] {
  if (chunks.length === 0) return [];
  let total = 0;
  for (const c of chunks) total += xorChunkNumSamples(c.data);
  const timestamps = new Float64Array(total);
  const values = new Float64Array(total);
  let at = 0;
  for (const c of chunks) at += decodeXorChunkInto(c.data, timestamps, values, at);
  const kept = applyTombstones({ labels, timestamps, values }, tombstones);
  stats.deletedSamples += total - (kept?.timestamps.length ?? 0);
  return kept ? encodeChunks(kept.timestamps, kept.values, perChunk) : [];
}
