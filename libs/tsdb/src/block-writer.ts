// Writes one tenant's series for a time range as a Prometheus TSDB block
// directory <dir>/<ULID>/. Everything is written under a temporary name and
// renamed into place at the end, meta.json last, so a partial block is never
// visible under its ULID.

import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Labels, Series } from '@strata/model';
import { BlockWriteError } from './block-errors.ts';
import { ChunksWriter, DEFAULT_SEGMENT_SIZE } from './chunks-writer.ts';
import { compareLabelSets, compareUtf8 } from './encoding.ts';
import { writeIndex, type ChunkMeta, type IndexSeries } from './index-writer.ts';
import { encodeBlockMeta, META_FILENAME, META_VERSION, type BlockMeta } from './meta.ts';
import { createUlidGenerator } from './ulid.ts';
import { XOR_ENCODING, XorChunkEncoder } from './xor-chunk.ts';

export const DEFAULT_SAMPLES_PER_CHUNK = 120;
export const TOMBSTONES_FILENAME = 'tombstones';
/** Empty tombstones: magic 0x0130BA30, format 1, CRC32C of no entries (0). */
const EMPTY_TOMBSTONES = Uint8Array.of(0x01, 0x30, 0xba, 0x30, 0x01, 0, 0, 0, 0);

export interface WriteBlockOptions {
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
  /** `thanos.labels` (external labels) of meta.json; empty by default, as Mimir writes. */
  externalLabels?: Record<string, string>;
  /** `thanos.source` of meta.json. */
  source?: string;
}

export interface WrittenBlock {
  /** The block directory, <dir>/<ulid>. */
  dir: string;
  meta: BlockMeta;
}

interface PendingSeries {
  labels: Labels;
  timestamps: Float64Array;
  values: Float64Array;
  from: number;
  to: number;
}

/** Writes a block; resolves to null (and writes nothing) when no sample falls in [mint, maxt). */
export async function writeBlock(opts: WriteBlockOptions): Promise<WrittenBlock | null> {
  const perChunk = opts.samplesPerChunk ?? DEFAULT_SAMPLES_PER_CHUNK;
  if (!(perChunk >= 1 && perChunk <= 0xffff)) throw new BlockWriteError(`samplesPerChunk ${perChunk} must be 1..65535`);
  const pending = collect(opts.series, opts.mint, opts.maxt);
  if (pending.length === 0) return null;

  const ulid = opts.ulid ?? createUlidGenerator()();
  const finalDir = join(opts.dir, ulid);
  const tmpDir = finalDir + '.tmp-for-creation';
  await rm(tmpDir, { recursive: true, force: true });
  await mkdir(join(tmpDir, 'chunks'), { recursive: true });

  const chunks = new ChunksWriter(join(tmpDir, 'chunks'), opts.segmentSize ?? DEFAULT_SEGMENT_SIZE);
  try {
    const enc = new XorChunkEncoder();
    const indexSeries: IndexSeries[] = [];
    let numSamples = 0;
    let numChunks = 0;
    let minTime = Infinity;
    let maxTime = -Infinity;
    for (const p of pending) {
      const metas: ChunkMeta[] = [];
      for (let start = p.from; start < p.to; start += perChunk) {
        const end = Math.min(start + perChunk, p.to);
        enc.reset();
        enc.appendRange(p.timestamps, p.values, start, end);
        const ref = await chunks.append(XOR_ENCODING, enc.bytes());
        metas.push({ minTime: p.timestamps[start], maxTime: p.timestamps[end - 1], ref });
        if (chunks.needsFlush) await chunks.flush();
      }
      numSamples += p.to - p.from;
      numChunks += metas.length;
      minTime = Math.min(minTime, p.timestamps[p.from]);
      maxTime = Math.max(maxTime, p.timestamps[p.to - 1]);
      indexSeries.push({ labels: p.labels, chunks: metas });
    }
    const segmentFiles = await chunks.close();
    const indexSize = await writeIndex(join(tmpDir, 'index'), indexSeries);
    await writeSynced(join(tmpDir, TOMBSTONES_FILENAME), EMPTY_TOMBSTONES);

    const files: { rel_path: string; size_bytes?: number }[] = [];
    for (const name of segmentFiles) {
      files.push({ rel_path: `chunks/${name}`, size_bytes: (await stat(join(tmpDir, 'chunks', name))).size });
    }
    files.push({ rel_path: 'index', size_bytes: indexSize });
    files.push({ rel_path: META_FILENAME });

    const meta: BlockMeta = {
      ulid,
      minTime,
      maxTime: maxTime + 1,
      stats: { numSamples, numSeries: pending.length, numChunks },
      compaction: { level: 1, sources: [ulid] },
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
    await writeSynced(join(tmpDir, META_FILENAME), new TextEncoder().encode(encodeBlockMeta(meta)));
    await syncDir(join(tmpDir, 'chunks'));
    await syncDir(tmpDir);

    await rm(finalDir, { recursive: true, force: true });
    await rename(tmpDir, finalDir);
    await syncDir(opts.dir);
    return { dir: finalDir, meta };
  } catch (err) {
    await chunks.abort();
    await rm(tmpDir, { recursive: true, force: true }).catch(() => undefined);
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
    if (from >= to) continue;
    for (let i = from + 1; i < to; i++) {
      if (!(ts[i] > ts[i - 1])) {
        throw new BlockWriteError(`series ${formatLabels(s.labels)}: timestamps must strictly increase (${ts[i - 1]} then ${ts[i]})`);
      }
    }
    if (s.values.length < ts.length) throw new BlockWriteError(`series ${formatLabels(s.labels)}: fewer values than timestamps`);
    out.push({ labels: normaliseLabels(s.labels), timestamps: ts, values: s.values, from, to });
  }
  out.sort((a, b) => compareLabelSets(a.labels, b.labels));
  for (let i = 1; i < out.length; i++) {
    if (compareLabelSets(out[i - 1].labels, out[i].labels) === 0) {
      throw new BlockWriteError(`series ${formatLabels(out[i].labels)} appears twice in one block`);
    }
  }
  return out;
}

/** Sorted by name in byte order, empty values dropped (Prometheus treats them as absent). */
function normaliseLabels(labels: Labels): Labels {
  const out = labels.filter((l) => l.value !== '').sort((a, b) => compareUtf8(a.name, b.name));
  for (let i = 1; i < out.length; i++) {
    if (out[i].name === out[i - 1].name) throw new BlockWriteError(`label name ${out[i].name} appears twice in ${formatLabels(labels)}`);
  }
  return out;
}

function formatLabels(labels: Labels): string {
  return '{' + labels.map((l) => `${l.name}=${JSON.stringify(l.value)}`).join(', ') + '}';
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
