// Answers queries from one TSDB block (ours or Prometheus') as a BlockQuerier:
// postings select the series, the index gives their chunks, chunks are
// range-read and decoded. Only bytes through ByteSources, so a bucket can
// stand in for the filesystem.

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  compareUtf8,
  labelsInQueryShard,
  splitQueryShard,
  throwIfAborted,
  type BlockLabelValuesParams,
  type BlockQuerier,
  type BlockSelectParams,
  type Series,
} from '@strata/model';
import { BlockFormatError, BlockUnsupportedError } from './block-errors.ts';
import { FileByteSource, type ByteSource } from './byte-source.ts';
import { ChunksReader, type RawChunk } from './chunks-reader.ts';
import { IndexReader, type IndexSeriesEntry } from '../index/index-reader.ts';
import { META_FILENAME, parseBlockMeta, type BlockMeta } from './meta.ts';
import { intersectPostings } from '../index/postings-list.ts';
import { FLOAT_HISTOGRAM_ENCODING, HISTOGRAM_ENCODING, XOR_ENCODING } from '../chunkenc/chunk-encoding.ts';
import { decodeHistogramSamples, histogramArrays, sortedHistograms, type HistogramSample } from '../head/histogram-series.ts';
import { decodeXorChunkInto, xorChunkNumSamples } from '../chunkenc/xor-chunk.ts';

export interface BlockFiles {
  index: ByteSource;
  /** chunks/000001, chunks/000002, ... in order. */
  chunkSegments: ByteSource[];
  meta?: BlockMeta;
}

export class BlockReader implements BlockQuerier {
  readonly index: IndexReader;
  private readonly chunks: ChunksReader;
  readonly meta: BlockMeta | undefined;

  private constructor(index: IndexReader, chunks: ChunksReader, meta: BlockMeta | undefined) {
    this.index = index;
    this.chunks = chunks;
    this.meta = meta;
  }

  static async open(files: BlockFiles): Promise<BlockReader> {
    const index = await IndexReader.open(files.index);
    const chunks = await ChunksReader.open(files.chunkSegments);
    return new BlockReader(index, chunks, files.meta);
  }

  /** Opens <dir> (a block directory holding meta.json, index and chunks/). */
  static async openDir(dir: string): Promise<BlockReader> {
    const meta = parseBlockMeta(await readFile(join(dir, META_FILENAME), 'utf8'));
    const names = (await readdir(join(dir, 'chunks'))).filter((n) => /^\d{6}$/.test(n)).sort();
    names.forEach((n, i) => {
      if (Number(n) !== i + 1) throw new BlockFormatError(`block ${dir}: chunk segments are not numbered 000001.. (found ${n})`);
    });
    const sources: ByteSource[] = [];
    try {
      const index = await FileByteSource.open(join(dir, 'index'));
      sources.push(index);
      const segments: ByteSource[] = [];
      for (const n of names) {
        const s = await FileByteSource.open(join(dir, 'chunks', n));
        sources.push(s);
        segments.push(s);
      }
      return await BlockReader.open({ index, chunkSegments: segments, meta });
    } catch (err) {
      for (const s of sources) await s.close?.();
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.index.close();
    await this.chunks.close();
  }

  /** Series matching all matchers with samples in [mint, maxt] (inclusive), sorted by labels. */
  async select({ matchers, mint, maxt, signal }: BlockSelectParams): Promise<Series[]> {
    if (!this.overlaps(mint, maxt)) return [];
    // Decoding is synchronous: an abort can only be seen between the reads.
    throwIfAborted(signal, 'selecting block series');
    const { matchers: rest, shard } = splitQueryShard(matchers);
    const ids = await this.index.postingsForMatchers(rest);
    if (ids.length === 0) return [];
    throwIfAborted(signal, 'selecting block series');
    const all = await this.index.series(ids);
    const entries = shard === undefined ? all : all.filter((e) => labelsInQueryShard(e.labels, shard));

    const refs: number[] = [];
    const wanted: { labels: Series['labels']; first: number; count: number; metas: IndexSeriesEntry['chunks'] }[] = [];
    for (const e of entries) {
      const first = refs.length;
      const metas: IndexSeriesEntry['chunks'] = [];
      for (const c of e.chunks) {
        if (c.minTime <= maxt && c.maxTime >= mint) {
          refs.push(c.ref);
          metas.push(c);
        }
      }
      if (refs.length > first) wanted.push({ labels: e.labels, first, count: refs.length - first, metas });
    }
    throwIfAborted(signal, 'reading block chunks');
    const raw = await this.chunks.read(refs);
    throwIfAborted(signal, 'decoding block chunks');

    const out: Series[] = [];
    for (const w of wanted) {
      let total = 0;
      let hist: HistogramSample[] | null = null;
      for (let k = w.first; k < w.first + w.count; k++) {
        const c = raw[k];
        if (c.encoding === XOR_ENCODING) total += xorChunkNumSamples(c.data);
        else if (c.encoding === HISTOGRAM_ENCODING || c.encoding === FLOAT_HISTOGRAM_ENCODING) {
          hist ??= [];
          decodeHistogramSamples(
            [{ minTime: w.metas[k - w.first].minTime, maxTime: w.metas[k - w.first].maxTime, data: c.data, encoding: c.encoding }],
            mint,
            maxt,
            hist,
          );
        } else throw new BlockUnsupportedError(`chunk encoding ${c.encoding} is not supported`);
      }
      const timestamps = new Float64Array(total);
      const values = new Float64Array(total);
      let n = 0;
      for (let k = w.first; k < w.first + w.count; k++) {
        if (raw[k].encoding === XOR_ENCODING) n += decodeXorChunkInto(raw[k].data, timestamps, values, n, mint, maxt);
      }
      if (n === 0 && (hist === null || hist.length === 0)) continue;
      let s: Series = { labels: w.labels, timestamps: timestamps.subarray(0, n), values: values.subarray(0, n) };
      if (!sortedSamples(s)) s = mergeOverlapping(s);
      if (hist !== null && hist.length > 0) s.histograms = histogramArrays(sortedHistograms(hist));
      out.push(s);
    }
    return out;
  }

  /** Every series (labels and chunk metas) in index order, i.e. sorted by labels; read in batches. */
  async *allSeries(batchSize = 1024): AsyncGenerator<IndexSeriesEntry> {
    const ids = await this.index.allPostings();
    for (let i = 0; i < ids.length; i += batchSize) {
      for (const e of await this.index.series(ids.subarray(i, i + batchSize))) yield e;
    }
  }

  /** Raw chunks by reference; result[i] belongs to refs[i]. */
  readChunks(refs: number[]): Promise<RawChunk[]> {
    return this.chunks.read(refs);
  }

  /**
   * Label names of series matching the matchers with a chunk in [mint, maxt],
   * sorted byte-wise. Without matchers the range is judged for the block as a
   * whole (as Prometheus does): trimming the edges would read every series.
   */
  async labelNames({ matchers, mint, maxt, signal }: BlockSelectParams): Promise<string[]> {
    if (!this.overlaps(mint, maxt)) return [];
    if (matchers.length === 0) return this.index.labelNames();
    throwIfAborted(signal, 'reading block label names');
    // A query shard's names are among those of all its series: the shard is not worth reading every series for.
    const ids = await this.index.postingsForMatchers(splitQueryShard(matchers).matchers);
    throwIfAborted(signal, 'reading block label names');
    const names = new Set<string>();
    for (const e of await this.index.series(ids)) {
      if (hasChunkIn(e, mint, maxt)) for (const l of e.labels) names.add(l.name);
    }
    return Array.from(names).sort(compareUtf8);
  }

  /** Values of a label, like labelNames. */
  async labelValues({ name, matchers, mint, maxt, signal }: BlockLabelValuesParams): Promise<string[]> {
    if (!this.overlaps(mint, maxt)) return [];
    const all = this.index.labelValues(name);
    if (matchers.length === 0) return all;
    throwIfAborted(signal, 'reading block label values');
    const ids = await this.index.postingsForMatchers(splitQueryShard(matchers).matchers);
    if (ids.length === 0) return [];
    if (this.meta !== undefined && mint <= this.meta.minTime && this.meta.maxTime - 1 <= maxt) {
      // Every chunk is in the range: which values the matching series have is a postings question.
      const out: string[] = [];
      for (const v of all) {
        throwIfAborted(signal, 'reading block label values');
        if (intersectPostings(ids, await this.index.postings(name, [v])).length > 0) out.push(v);
      }
      return out;
    }
    // The range cuts the block: only series with a chunk inside count.
    throwIfAborted(signal, 'reading block label values');
    const values = new Set<string>();
    for (const e of await this.index.series(ids)) {
      if (!hasChunkIn(e, mint, maxt)) continue;
      for (const l of e.labels) if (l.name === name) values.add(l.value);
    }
    return Array.from(values).sort(compareUtf8);
  }

  /** True if the block may hold samples in [mint, maxt] (inclusive; a block's range is [minTime, maxTime)). */
  private overlaps(mint: number, maxt: number): boolean {
    return this.meta === undefined || (this.meta.minTime <= maxt && mint < this.meta.maxTime);
  }
}

function hasChunkIn(e: IndexSeriesEntry, mint: number, maxt: number): boolean {
  for (const c of e.chunks) if (c.minTime <= maxt && c.maxTime >= mint) return true;
  return false;
}

function sortedSamples(s: Series): boolean {
  const t = s.timestamps;
  for (let i = 1; i < t.length; i++) if (!(t[i] > t[i - 1])) return false;
  return true;
}

/** Chunks of one series overlapped (possible in blocks other tools merged): sort by time, keep the first of equal timestamps. */
function mergeOverlapping(s: Series): Series {
  const n = s.timestamps.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => s.timestamps[a] - s.timestamps[b] || a - b);
  const src = new Uint32Array(s.values.buffer, s.values.byteOffset, n * 2);
  const timestamps = new Float64Array(n);
  const values = new Float64Array(n);
  const dst = new Uint32Array(values.buffer);
  let m = 0;
  for (const i of order) {
    if (m > 0 && timestamps[m - 1] === s.timestamps[i]) continue;
    timestamps[m] = s.timestamps[i];
    dst[2 * m] = src[2 * i];
    dst[2 * m + 1] = src[2 * i + 1];
    m++;
  }
  return { labels: s.labels, timestamps: timestamps.subarray(0, m), values: values.subarray(0, m) };
}
