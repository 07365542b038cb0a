// Writes one tenant's series for a time range as a Prometheus TSDB block
// directory <dir>/<ULID>/: from decoded samples (writeBlock, re-encoded 120
// samples a chunk) or from already encoded chunks (writeBlockFromChunks, what
// the head's cut hands over). Both go through BlockBuilder: meta.json last,
// renamed into place, never partially visible.

import { compareLabels, type Labels, type NativeHistogram, type Series } from '@strata/model';
import { BlockBuilder, formatLabels, normaliseLabels, type FinishBlockOptions, type WrittenBlock } from './block-builder.ts';
import { BlockWriteError } from './block-errors.ts';
import { encodeHistogramChunks, type HistogramSample } from '../head/histogram-series.ts';
import type { EncodedChunk } from '../chunkenc/chunk-encoding.ts';
import { XorChunkEncoder } from '../chunkenc/xor-chunk.ts';
import { Turns, forEachInTurns, sortInTurns } from '../in-turns.ts';

export const DEFAULT_SAMPLES_PER_CHUNK = 120;

export interface WriteBlockOptions extends FinishBlockOptions {
  /** Parent directory; the block lands in <dir>/<ulid>/. */
  dir: string;
  series: Iterable<Series>;
  /** Block range [mint, maxt) in ms: samples outside it are left out. */
  mint: number;
  maxt: number;
  /** Block ID; a fresh ULID when absent. */
  ulid?: string;
  samplesPerChunk?: number;
  segmentSize?: number;
}

export interface WriteChunksBlockOptions extends FinishBlockOptions {
  dir: string;
  /** Series with encoded chunks; sorted here after label normalisation. */
  series: Iterable<{ labels: Labels; chunks: readonly EncodedChunk[]; flat?: readonly string[] }>;
  /**
   * The series are unique, sorted by labels and their labels normalised, as a head's snapshot is:
   * each series' labels are then taken once, as it is written (a head's are made on demand), and
   * its `flat` labels, when it has them, are what the index keeps.
   */
  sorted?: boolean;
  ulid?: string;
  segmentSize?: number;
}

interface PendingSeries {
  labels: Labels;
  timestamps: Float64Array;
  values: Float64Array;
  from: number;
  to: number;
  histograms: HistogramSample[];
}

function integral(h: NativeHistogram): boolean {
  const ok = (x: number) => Number.isSafeInteger(x) && x >= 0;
  return ok(h.count) && ok(h.zeroCount) && h.positiveBuckets.every(ok) && h.negativeBuckets.every(ok);
}

/** Writes a block; resolves to null (and writes nothing) when no sample falls in [mint, maxt). */
export async function writeBlock(opts: WriteBlockOptions): Promise<WrittenBlock | null> {
  const perChunk = opts.samplesPerChunk ?? DEFAULT_SAMPLES_PER_CHUNK;
  if (!(perChunk >= 1 && perChunk <= 0xffff)) throw new BlockWriteError(`samplesPerChunk ${perChunk} must be 1..65535`);
  const pending = collect(opts.series, opts.mint, opts.maxt);
  if (pending.length === 0) return null;
  const b = await BlockBuilder.create({ dir: opts.dir, ulid: opts.ulid, segmentSize: opts.segmentSize });
  try {
    const enc = new XorChunkEncoder();
    for (const p of pending) {
      const chunks: EncodedChunk[] = [];
      for (let start = p.from; start < p.to; start += perChunk) {
        const end = Math.min(start + perChunk, p.to);
        enc.reset();
        enc.appendRange(p.timestamps, p.values, start, end);
        chunks.push({ minTime: p.timestamps[start], maxTime: p.timestamps[end - 1], data: enc.bytes().slice() });
      }
      if (p.histograms.length > 0) {
        chunks.push(...encodeHistogramChunks(p.histograms, perChunk));
        chunks.sort((x, y) => x.minTime - y.minTime);
      }
      await b.addSeries(p.labels, chunks);
    }
    return await b.finish(opts);
  } catch (err) {
    if (!b.finished) await b.abort();
    throw err;
  }
}

/** Writes a block from encoded chunks; null (nothing written) when there is no series. */
export async function writeBlockFromChunks(opts: WriteChunksBlockOptions): Promise<WrittenBlock | null> {
  // In turns of the event loop: an ingester cuts blocks of a million series while it consumes and answers.
  const series: WriteChunksBlockOptions['series'] = opts.sorted === true ? opts.series : await normalisedAndSorted(opts.series);
  const b = await BlockBuilder.create({ dir: opts.dir, ulid: opts.ulid, segmentSize: opts.segmentSize });
  try {
    const turns = new Turns();
    for (const s of series) {
      if (turns.due()) await turns.next();
      await b.addSeries(s.labels, s.chunks, s.flat);
    }
    return await b.finish(opts);
  } catch (err) {
    if (!b.finished) await b.abort();
    throw err;
  }
}

/** The in-range part of each series, labels normalised, sorted by labels in byte order. */
function collect(series: Iterable<Series>, mint: number, maxt: number): PendingSeries[] {
  const out: PendingSeries[] = [];
  for (const s of series) {
    const ts = s.timestamps;
    const from = lowerBound(ts, mint);
    const to = lowerBound(ts, maxt);
    // Histograms go into integer chunks when their counts are whole numbers, float histogram chunks otherwise.
    const histograms: HistogramSample[] = [];
    const hs = s.histograms;
    if (hs) {
      for (let i = 0; i < hs.timestamps.length; i++) {
        const t = hs.timestamps[i];
        if (t < mint || t >= maxt) continue;
        if (histograms.length > 0 && !(t > histograms[histograms.length - 1].timestamp)) {
          throw new BlockWriteError(`series ${formatLabels(s.labels)}: histogram timestamps must strictly increase`);
        }
        histograms.push({ timestamp: t, histogram: hs.values[i], float: !integral(hs.values[i]) });
      }
    }
    if (from >= to && histograms.length === 0) continue;
    for (let i = from + 1; i < to; i++) {
      if (!(ts[i] > ts[i - 1])) {
        throw new BlockWriteError(`series ${formatLabels(s.labels)}: timestamps must strictly increase (${ts[i - 1]} then ${ts[i]})`);
      }
    }
    if (s.values.length < ts.length) throw new BlockWriteError(`series ${formatLabels(s.labels)}: fewer values than timestamps`);
    out.push({ labels: normaliseLabels(s.labels), timestamps: ts, values: s.values, from, to, histograms });
  }
  out.sort((a, b) => compareLabels(a.labels, b.labels));
  for (let i = 1; i < out.length; i++) {
    if (compareLabels(out[i - 1].labels, out[i].labels) === 0) {
      throw new BlockWriteError(`series ${formatLabels(out[i].labels)} appears twice in one block`);
    }
  }
  return out;
}

function lowerBound(a: Float64Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The series with chunks, labels normalised, sorted by labels, in turns. */
async function normalisedAndSorted(from: Iterable<{ labels: Labels; chunks: readonly EncodedChunk[] }>) {
  const series: { labels: Labels; chunks: readonly EncodedChunk[] }[] = [];
  await forEachInTurns(from, (s) => {
    if (s.chunks.length > 0) series.push({ labels: normaliseLabels(s.labels), chunks: s.chunks });
  });
  if (!(await sortedInTurns(series))) await sortInTurns(series, (a, b) => compareLabels(a.labels, b.labels));
  return series;
}

/** Whether the series are in label order already, checked in turns. */
async function sortedInTurns(series: readonly { labels: Labels }[]): Promise<boolean> {
  const turns = new Turns();
  for (let i = 1; i < series.length; i++) {
    if (turns.due()) await turns.next();
    if (compareLabels(series[i - 1].labels, series[i].labels) > 0) return false;
  }
  return true;
}
