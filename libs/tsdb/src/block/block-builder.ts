// Builds one block directory from series that arrive sorted by labels, each
// with its chunks already encoded: the head's cut (chunks shared as they are),
// compaction (merged series one at a time) and writeBlock all end here. Files
// go under a temporary name and are renamed into <dir>/<ulid>/ at the end,
// meta.json written last, so a partial block is never visible under its ULID.

import { compareLabels, compareUtf8, type Labels } from '@strata/model';
import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BlockWriteError } from './block-errors.ts';
import { ChunksWriter, DEFAULT_SEGMENT_SIZE } from './chunks-writer.ts';
import { writeIndex, type ChunkMeta, type IndexSeries } from '../index/index-writer.ts';
import { XOR_ENCODING, type EncodedChunk } from '../chunkenc/chunk-encoding.ts';
import { encodeBlockMeta, META_FILENAME, META_VERSION, type BlockCompaction, type BlockMeta } from './meta.ts';
import { createUlidGenerator } from './ulid.ts';
import { xorChunkNumSamples } from '../chunkenc/xor-chunk.ts';

export const TOMBSTONES_FILENAME = 'tombstones';
/** Empty tombstones: magic 0x0130BA30, format 1, CRC32C of no entries (0). */
const EMPTY_TOMBSTONES = Uint8Array.of(0x01, 0x30, 0xba, 0x30, 0x01, 0, 0, 0, 0);

const newUlid = createUlidGenerator();

export interface BlockBuilderOptions {
  /** Parent directory; the block lands in <dir>/<ulid>/. */
  dir: string;
  /** Block ID; a fresh ULID when absent. */
  ulid?: string;
  segmentSize?: number;
}

export interface FinishBlockOptions {
  /** Default: level 1, sources [ulid]. */
  compaction?: BlockCompaction;
  /** `thanos.labels` (external labels); empty by default, as Mimir writes. */
  externalLabels?: Record<string, string>;
  /** `thanos.source` of meta.json. */
  source?: string;
  /** meta.json minTime/maxTime when they should cover more than the samples (compaction keeps its sources' range). */
  minTime?: number;
  maxTime?: number;
}

export interface WrittenBlock {
  /** The block directory, <dir>/<ulid>. */
  dir: string;
  meta: BlockMeta;
}

export class BlockBuilder {
  private readonly chunks: ChunksWriter;
  private readonly series: IndexSeries[] = [];
  /** The last series' labels, which the next must sort after. */
  private lastLabels: Labels | null = null;
  private numSamples = 0;
  private numChunks = 0;
  private minTime = Infinity;
  private maxTime = -Infinity;
  private done = false;

  readonly ulid: string;
  private readonly parent: string;
  private readonly tmpDir: string;

  private constructor(ulid: string, parent: string, tmpDir: string, segmentSize: number) {
    this.ulid = ulid;
    this.parent = parent;
    this.tmpDir = tmpDir;
    this.chunks = new ChunksWriter(join(tmpDir, 'chunks'), segmentSize);
  }

  static async create(opts: BlockBuilderOptions): Promise<BlockBuilder> {
    const ulid = opts.ulid ?? newUlid();
    const tmpDir = join(opts.dir, ulid) + '.tmp-for-creation';
    await rm(tmpDir, { recursive: true, force: true });
    await mkdir(join(tmpDir, 'chunks'), { recursive: true });
    return new BlockBuilder(ulid, opts.dir, tmpDir, opts.segmentSize ?? DEFAULT_SEGMENT_SIZE);
  }

  get numSeries(): number {
    return this.series.length;
  }

  /**
   * Adds one series. Labels must be normalised (see normaliseLabels) and each
   * call's labels sort after the previous call's; chunks in time order, not overlapping. `flat`: the
   * same labels as name, value, … when the caller holds them so (a head does), kept instead of a copy.
   */
  async addSeries(labels: Labels, chunks: readonly EncodedChunk[], flat: readonly string[] = flatLabels(labels)): Promise<void> {
    if (chunks.length === 0) return;
    const prev = this.lastLabels;
    if (prev !== null && compareLabels(prev, labels) >= 0) {
      throw new BlockWriteError(`series ${formatLabels(labels)} is not after ${formatLabels(prev)}: series must be unique and sorted`);
    }
    const metas: ChunkMeta[] = [];
    for (const c of chunks) {
      if (metas.length > 0 && c.minTime <= metas[metas.length - 1].maxTime) {
        throw new BlockWriteError(`series ${formatLabels(labels)}: chunk at ${c.minTime} overlaps the previous one`);
      }
      const data = c.data; // read once: a head chunk in a file is read from disk on each access
      const ref = await this.chunks.append(c.encoding ?? XOR_ENCODING, data);
      metas.push({ minTime: c.minTime, maxTime: c.maxTime, ref });
      if (this.chunks.needsFlush) await this.chunks.flush();
      // Every encoding starts with its uint16 sample count.
      this.numSamples += xorChunkNumSamples(data);
    }
    this.numChunks += metas.length;
    if (metas[0].minTime < this.minTime) this.minTime = metas[0].minTime;
    if (metas[metas.length - 1].maxTime > this.maxTime) this.maxTime = metas[metas.length - 1].maxTime;
    this.series.push({ labels: flat, chunks: metas });
    this.lastLabels = labels;
  }

  /** Writes index, tombstones and meta.json, then renames into place. Null (nothing written) for a block without series. */
  async finish(opts: FinishBlockOptions = {}): Promise<WrittenBlock | null> {
    this.done = true;
    try {
      const segmentFiles = await this.chunks.close();
      if (this.series.length === 0) {
        await rm(this.tmpDir, { recursive: true, force: true });
        return null;
      }
      const indexSize = await writeIndex(join(this.tmpDir, 'index'), this.series);
      await writeSynced(join(this.tmpDir, TOMBSTONES_FILENAME), EMPTY_TOMBSTONES);
      const files: { rel_path: string; size_bytes?: number }[] = [];
      for (const name of segmentFiles) {
        files.push({ rel_path: `chunks/${name}`, size_bytes: (await stat(join(this.tmpDir, 'chunks', name))).size });
      }
      files.push({ rel_path: 'index', size_bytes: indexSize });
      files.push({ rel_path: META_FILENAME });
      const meta: BlockMeta = {
        ulid: this.ulid,
        minTime: Math.min(this.minTime, opts.minTime ?? Infinity),
        maxTime: Math.max(this.maxTime + 1, opts.maxTime ?? -Infinity),
        stats: { numSamples: this.numSamples, numSeries: this.series.length, numChunks: this.numChunks },
        compaction: opts.compaction ?? { level: 1, sources: [this.ulid] },
        version: META_VERSION,
        thanos: {
          version: 1,
          labels: opts.externalLabels ?? {},
          downsample: { resolution: 0 },
          source: opts.source ?? 'receive',
          segment_files: segmentFiles,
          files,
        },
      };
      await writeSynced(join(this.tmpDir, META_FILENAME), new TextEncoder().encode(encodeBlockMeta(meta)));
      await syncDir(join(this.tmpDir, 'chunks'));
      await syncDir(this.tmpDir);
      const finalDir = join(this.parent, this.ulid);
      await rm(finalDir, { recursive: true, force: true });
      await rename(this.tmpDir, finalDir);
      await syncDir(this.parent);
      return { dir: finalDir, meta };
    } catch (err) {
      await this.abort();
      throw err;
    }
  }

  /** Removes everything written so far. */
  async abort(): Promise<void> {
    this.done = true;
    await this.chunks.abort();
    await rm(this.tmpDir, { recursive: true, force: true }).catch(() => undefined);
  }

  get finished(): boolean {
    return this.done;
  }
}

/** Sorted by name in byte order, empty values dropped (Prometheus treats them as absent). */
export function normaliseLabels(labels: Labels): Labels {
  let sorted = true;
  let empty = false;
  for (let i = 0; i < labels.length; i++) {
    if (labels[i].value === '') empty = true;
    if (i > 0 && compareUtf8(labels[i - 1].name, labels[i].name) >= 0) sorted = false;
  }
  if (sorted && !empty) return labels;
  const out = labels.filter((l) => l.value !== '').sort((a, b) => compareUtf8(a.name, b.name));
  for (let i = 1; i < out.length; i++) {
    if (out[i].name === out[i - 1].name) throw new BlockWriteError(`label name ${out[i].name} appears twice in ${formatLabels(labels)}`);
  }
  return out;
}

function flatLabels(labels: Labels): string[] {
  const flat = new Array<string>(2 * labels.length);
  for (let i = 0; i < labels.length; i++) {
    flat[2 * i] = labels[i].name;
    flat[2 * i + 1] = labels[i].value;
  }
  return flat;
}

export function formatLabels(labels: Labels): string {
  return '{' + labels.map((l) => `${l.name}=${JSON.stringify(l.value)}`).join(', ') + '}';
}

async function writeSynced(path: string, bytes: Uint8Array): Promise<void> {
  await writeFile(path, bytes);
  const fh = await open(path, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
