// meta.json of a block: Prometheus' BlockMeta plus the `thanos` section Mimir's
// store-gateway and compactor read. Field names are the on-disk JSON names.

import { BlockFormatError } from './block-errors.ts';
import { isUlid } from './ulid.ts';

export const META_FILENAME = 'meta.json';
export const META_VERSION = 1;

export interface BlockStats {
  numSamples: number;
  numSeries: number;
  numChunks: number;
  numTombstones?: number;
}

export interface BlockCompaction {
  level: number;
  /** ULIDs of the level-1 blocks this block was built from (itself, for level 1). */
  sources: string[];
  parents?: { ulid: string; minTime: number; maxTime: number }[];
  deletable?: boolean;
  failed?: boolean;
}

export interface ThanosFile {
  rel_path: string;
  size_bytes?: number;
}

export interface ThanosMeta {
  version?: number;
  /** External labels; Mimir's compactor uses them for sharding and keeps them empty otherwise. */
  labels: Record<string, string>;
  downsample: { resolution: number };
  source: string;
  segment_files?: string[];
  files?: ThanosFile[];
}

export interface BlockMeta {
  ulid: string;
  /** First sample's timestamp (ms, inclusive). */
  minTime: number;
  /** Exclusive upper bound: last sample's timestamp + 1. */
  maxTime: number;
  stats: BlockStats;
  compaction: BlockCompaction;
  version: number;
  thanos?: ThanosMeta;
}

/** JSON as Go's json.MarshalIndent(meta, "", "\t") lays it out. */
export function encodeBlockMeta(meta: BlockMeta): string {
  const ordered: Record<string, unknown> = {
    ulid: meta.ulid,
    minTime: meta.minTime,
    maxTime: meta.maxTime,
    stats: omitZero({
      numSamples: meta.stats.numSamples,
      numSeries: meta.stats.numSeries,
      numChunks: meta.stats.numChunks,
      numTombstones: meta.stats.numTombstones,
    }),
    compaction: {
      level: meta.compaction.level,
      sources: meta.compaction.sources,
      ...(meta.compaction.parents?.length ? { parents: meta.compaction.parents } : {}),
      ...(meta.compaction.deletable ? { deletable: true } : {}),
      ...(meta.compaction.failed ? { failed: true } : {}),
    },
    version: meta.version,
  };
  if (meta.thanos) {
    const t = meta.thanos;
    ordered.thanos = {
      ...(t.version ? { version: t.version } : {}),
      labels: t.labels,
      downsample: { resolution: t.downsample.resolution },
      source: t.source,
      ...(t.segment_files?.length ? { segment_files: t.segment_files } : {}),
      ...(t.files?.length ? { files: t.files } : {}),
    };
  }
  return JSON.stringify(ordered, null, '\t') + '\n';
}

function omitZero(o: Record<string, number | undefined>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(o)) if (v) out[k] = v;
  return out;
}

/** Parses and checks a meta.json (ours, Prometheus' or Thanos/Mimir's). */
export function parseBlockMeta(text: string): BlockMeta {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new BlockFormatError(`meta.json is not valid JSON: ${(err as Error).message}`);
  }
  const m = raw as Partial<BlockMeta> & { stats?: Partial<BlockStats> };
  if (typeof m !== 'object' || m === null) throw new BlockFormatError('meta.json is not an object');
  if (m.version !== META_VERSION) throw new BlockFormatError(`unexpected meta.json version ${String(m.version)} (want 1)`);
  if (typeof m.ulid !== 'string' || !isUlid(m.ulid)) throw new BlockFormatError(`meta.json has an invalid ulid ${String(m.ulid)}`);
  if (!Number.isSafeInteger(m.minTime) || !Number.isSafeInteger(m.maxTime)) {
    throw new BlockFormatError('meta.json minTime/maxTime must be integers');
  }
  const stats: Partial<BlockStats> = m.stats ?? {};
  return {
    ulid: m.ulid,
    minTime: m.minTime as number,
    maxTime: m.maxTime as number,
    stats: {
      numSamples: stats.numSamples ?? 0,
      numSeries: stats.numSeries ?? 0,
      numChunks: stats.numChunks ?? 0,
      ...(stats.numTombstones ? { numTombstones: stats.numTombstones } : {}),
    },
    compaction: {
      level: m.compaction?.level ?? 1,
      sources: m.compaction?.sources ?? [m.ulid],
      ...(m.compaction?.parents ? { parents: m.compaction.parents } : {}),
      ...(m.compaction?.deletable ? { deletable: true } : {}),
      ...(m.compaction?.failed ? { failed: true } : {}),
    },
    version: META_VERSION,
    ...(m.thanos ? { thanos: { ...m.thanos, labels: m.thanos.labels ?? {} } } : {}),
  };
}
