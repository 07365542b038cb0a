// Checks a block before it is trusted (Mimir's block.VerifyBlock, plus the checksums
// Prometheus' formats carry): every index section and postings list passes its CRC32C, the
// postings agree with the series, series are sorted and unique with sorted non-empty label
// sets, every chunk reference lies inside the chunk files, chunks lie inside the block's time
// range and in time order, and (checkChunks) every chunk passes its CRC and decodes with its
// first sample at the chunk's minTime and increasing timestamps. Reads only, never repairs.

import { compareLabels, compareUtf8, type Labels } from '@strata/model';
import { BlockFormatError } from './block-errors.ts';
import type { BlockFiles } from './block-reader.ts';
import { ChunksReader, type RawChunk } from './chunks-reader.ts';
import { SEGMENT_HEADER_SIZE } from './chunks-writer.ts';
import { IndexReader, type IndexSeriesEntry } from '../index/index-reader.ts';
import type { ChunkMeta } from '../index/index-writer.ts';
import { FLOAT_HISTOGRAM_ENCODING, HISTOGRAM_ENCODING, XOR_ENCODING } from '../chunkenc/chunk-encoding.ts';
import { decodeXorChunk, xorChunkNumSamples } from '../chunkenc/xor-chunk.ts';
import { decodeHistogramChunk, histogramChunkNumSamples } from '../chunkenc/histogram-chunk.ts';

export interface VerifyBlockOptions {
  /** The block's range from its meta.json: chunks must lie in [minTime, maxTime]. */
  minTime: number;
  maxTime: number;
  /** Read and decode every chunk, not just the index. */
  checkChunks: boolean;
  /** Series read per index read. */
  batchSize?: number;
  signal?: AbortSignal;
}

export interface VerifyBlockStats {
  series: number;
  chunks: number;
  /** Samples decoded (0 without checkChunks). */
  samples: number;
}

const SEGMENT_REF_SPAN = 2 ** 32;

/** Resolves with what was checked; rejects with a BlockFormatError whose message is the one-line reason. */
export async function verifyBlock(files: BlockFiles, opts: VerifyBlockOptions): Promise<VerifyBlockStats> {
  const index = await IndexReader.open(files.index).catch(rethrow('index'));
  const chunks = await ChunksReader.open(files.chunkSegments).catch(rethrow('chunks'));
  const segmentSizes = await Promise.all(files.chunkSegments.map((s) => s.size()));
  const ids = await index.allPostings().catch(rethrow('index'));
  const walk = new SeriesWalk(opts, segmentSizes);
  const batch = opts.batchSize ?? 1024;
  for (let i = 0; i < ids.length; i += batch) {
    opts.signal?.throwIfAborted();
    const entries = await index.series(ids.subarray(i, i + batch)).catch(rethrow('index'));
    for (const e of entries) walk.series(e);
    if (opts.checkChunks) await walk.decodeChunks(entries, chunks);
  }
  walk.finish();
  await checkPostings(index, ids, walk.labelPairs);
  return { series: ids.length, chunks: walk.chunks, samples: walk.samples };
}

/** The per-series checks, in index order. */
class SeriesWalk {
  private readonly opts: VerifyBlockOptions;
  private readonly segmentSizes: number[];
  private previous: Labels | undefined;
  private outside = 0;
  private outOfOrderSeries = 0;
  private outOfOrderChunks = 0;
  private total = 0;
  chunks = 0;
  samples = 0;
  /** Label pairs over all series: the postings lists must hold exactly as many entries. */
  labelPairs = 0;

  constructor(opts: VerifyBlockOptions, segmentSizes: number[]) {
    this.opts = opts;
    this.segmentSizes = segmentSizes;
  }

  series(e: IndexSeriesEntry): void {
    this.total++;
    const what = `series ${formatLabels(e.labels)}`;
    if (e.labels.length === 0) throw new BlockFormatError(`index: series ${e.id} has an empty label set`);
    for (let k = 1; k < e.labels.length; k++) {
      if (compareUtf8(e.labels[k - 1].name, e.labels[k].name) >= 0) throw new BlockFormatError(`index: ${what} has labels out of order`);
    }
    if (this.previous !== undefined && compareLabels(this.previous, e.labels) >= 0) {
      throw new BlockFormatError(`index: ${what} out of order; previous ${formatLabels(this.previous)}`);
    }
    this.previous = e.labels;
    this.labelPairs += e.labels.length;
    if (e.chunks.length === 0) throw new BlockFormatError(`index: ${what} has no chunks`);
    let ooo = 0;
    e.chunks.forEach((c, i) => {
      this.checkRef(c, what);
      if (c.minTime < this.opts.minTime || c.maxTime > this.opts.maxTime) this.outside++;
      const prev = i > 0 ? e.chunks[i - 1] : undefined;
      // Equal ranges are duplicates Mimir tolerates; any other overlap is out of order.
      if (prev !== undefined && c.minTime <= prev.maxTime && !(c.minTime === prev.minTime && c.maxTime === prev.maxTime)) ooo++;
    });
    this.chunks += e.chunks.length;
    if (ooo > 0) {
      this.outOfOrderSeries++;
      this.outOfOrderChunks += ooo;
    }
  }

  private checkRef(c: ChunkMeta, what: string): void {
    const segment = Math.floor(c.ref / SEGMENT_REF_SPAN);
    const offset = c.ref % SEGMENT_REF_SPAN;
    const size = this.segmentSizes[segment];
    if (size === undefined || offset < SEGMENT_HEADER_SIZE || offset >= size) {
      const where = size === undefined ? `segment ${segment + 1}, which does not exist` : `offset ${offset} of segment ${segment + 1} (${size} bytes)`;
      throw new BlockFormatError(`index: a chunk of ${what} references ${where}`);
    }
  }

  async decodeChunks(entries: IndexSeriesEntry[], reader: ChunksReader): Promise<void> {
    const refs = entries.flatMap((e) => e.chunks.map((c) => c.ref));
    const raw = await reader.read(refs).catch(rethrow('chunks'));
    let k = 0;
    for (const e of entries) {
      for (const c of e.chunks) this.samples += decodeChunk(raw[k++], c, `a chunk of series ${formatLabels(e.labels)}`);
    }
  }

  finish(): void {
    if (this.outside > 0) throw new BlockFormatError(`found ${this.outside} chunks outside the block time range [${this.opts.minTime}, ${this.opts.maxTime}]`);
    if (this.outOfOrderChunks > 0) {
      throw new BlockFormatError(`${this.outOfOrderSeries}/${this.total} series have ${this.outOfOrderChunks} overlapping or out-of-order chunks`);
    }
  }
}

/** Samples in the chunk; throws when it is empty, undecodable or its timestamps disagree with its meta. */
function decodeChunk(chunk: RawChunk, meta: ChunkMeta, what: string): number {
  let timestamps: ArrayLike<number>;
  try {
    if (chunk.encoding === XOR_ENCODING) {
      if (xorChunkNumSamples(chunk.data) === 0) throw new Error('empty chunk');
      timestamps = decodeXorChunk(chunk.data).timestamps;
    } else if (chunk.encoding === HISTOGRAM_ENCODING || chunk.encoding === FLOAT_HISTOGRAM_ENCODING) {
      if (histogramChunkNumSamples(chunk.data) === 0) throw new Error('empty chunk');
      timestamps = decodeHistogramChunk(chunk.data, chunk.encoding).timestamps;
    } else {
      throw new Error(`unsupported chunk encoding ${chunk.encoding}`);
    }
  } catch (err) {
    throw new BlockFormatError(`chunks: ${what} [${meta.minTime}, ${meta.maxTime}]: ${(err as Error).message}`);
  }
  if (timestamps[0] !== meta.minTime) {
    throw new BlockFormatError(`chunks: ${what}: first sample at ${timestamps[0]} but the index says the chunk starts at ${meta.minTime}`);
  }
  for (let i = 1; i < timestamps.length; i++) {
    if (timestamps[i] <= timestamps[i - 1])
      throw new BlockFormatError(`chunks: ${what}: sample timestamps out of order (${timestamps[i - 1]}, then ${timestamps[i]})`);
  }
  return timestamps.length;
}

/**
 * Reads every postings list (each checks its CRC): each must name only series of the index,
 * and a series sits in exactly one list per label, so the lists hold `labelPairs` entries in all.
 */
async function checkPostings(index: IndexReader, all: Uint32Array, labelPairs: number): Promise<void> {
  for (let i = 1; i < all.length; i++) {
    if (all[i] <= all[i - 1]) throw new BlockFormatError('index: the all-series postings list is not sorted');
  }
  const known = new Set(all);
  let entries = 0;
  for (const name of index.labelNames()) {
    const ids = await index.postings(name, index.labelValues(name)).catch(rethrow('index'));
    for (const id of ids) if (!known.has(id)) throw new BlockFormatError(`index: the postings of label ${name} name series ${id}, which is not in the index`);
    entries += ids.length;
  }
  if (entries !== labelPairs) throw new BlockFormatError(`index: the postings lists hold ${entries} entries, the series ${labelPairs} labels`);
}

function formatLabels(labels: Labels): string {
  return `{${labels.map((l) => `${l.name}=${JSON.stringify(l.value)}`).join(', ')}}`;
}

/** Read errors keep their message, prefixed with the file they came from when it does not say. */
function rethrow(file: string): (err: unknown) => never {
  return (err: unknown) => {
    if (err instanceof BlockFormatError) throw err;
    const message = err instanceof Error ? err.message : String(err);
    throw new BlockFormatError(message.startsWith(file) ? message : `${file}: ${message}`);
  };
}
