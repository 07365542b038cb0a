// The meta.json a block upload starts with, checked and rewritten as Mimir's compactor does
// (pkg/compactor/block_upload.go, sanitizeMeta and createBlockUpload) before anything of the
// block is written: a refusal here is the client's 400 or 422 with a one-line reason.

import { StrataError } from '@strata/errors';
import type { BlockMeta, ThanosFile } from '@strata/tsdb';

/** The files a block upload may carry besides meta.json. */
export const UPLOAD_FILE_PATH = /^(index|chunks\/\d{6})$/;
/** Largest meta.json body /start reads. */
export const MAX_UPLOAD_META_BYTES = 1024 * 1024;
/** Mimir's compactor shard label, the one external label an uploaded block may keep. */
const SHARD_ID_LABEL = '__compactor_shard_id__';
/** Labels of old Cortex/Mimir blocks that mean nothing any more: dropped. */
const DEPRECATED_LABELS = new Set(['__org_id__', '__ingester_id__', '__shard_id__']);
const SHARD_ID_VALUE = /^(\d+)_of_(\d+)$/;

export interface UploadMetaLimits {
  nowMs: number;
  /** The tenant's retention; 0: none. */
  retentionMs: number;
  /** The compactor's largest block range: a block may not be longer nor cross its boundary. */
  maxRangeMs: number;
  /** compactor_block_upload_max_block_size_bytes; 0: none. */
  maxBlockSizeBytes: number;
}

export class BlockUploadError extends StrataError {
  constructor(kind: 'bad-input' | 'unprocessable' | 'too-large' | 'not-found' | 'conflict' | 'limit', message: string) {
    super('block-upload', kind, message);
    this.name = 'BlockUploadError';
  }
}

const bad = (message: string) => new BlockUploadError('bad-input', message);

/** The meta.json to keep for block `blockId`, from the body of /start; throws BlockUploadError. */
export function sanitizeUploadMeta(body: string, blockId: string, limits: UploadMetaLimits): BlockMeta {
  const meta = parseUploadMeta(body);
  if (meta.ulid !== blockId) throw bad(`meta.json's ulid ${meta.ulid} does not match the block ID ${blockId}`);
  const thanos = meta.thanos ?? { labels: {}, downsample: { resolution: 0 }, source: '' };
  if (thanos.downsample.resolution > 0) throw bad('block contains downsampled data');
  thanos.labels = sanitizeLabels(thanos.labels);
  // An uploaded block is its own source, whatever it was compacted from elsewhere.
  meta.compaction = { ...meta.compaction, sources: [blockId] };
  delete meta.compaction.parents;
  for (const f of thanos.files ?? []) {
    if (f.rel_path === 'meta.json') continue;
    if (!UPLOAD_FILE_PATH.test(f.rel_path)) throw bad(`file with invalid path: ${f.rel_path}`);
    if (!((f.size_bytes ?? 0) > 0)) throw bad(`file with invalid size: ${f.rel_path}`);
  }
  checkBlockSize(thanos.files ?? [], limits.maxBlockSizeBytes);
  if (meta.version !== 1) throw bad('version must be 1');
  if (meta.minTime < 0 || meta.maxTime < 0 || meta.maxTime < meta.minTime) {
    throw bad(`invalid minTime/maxTime: minTime=${meta.minTime}, maxTime=${meta.maxTime}`);
  }
  if (meta.minTime > limits.nowMs || meta.maxTime > limits.nowMs) {
    throw bad(`block time(s) greater than the present: minTime=${meta.minTime} (${iso(meta.minTime)}), maxTime=${meta.maxTime} (${iso(meta.maxTime)})`);
  }
  thanos.source = 'upload';
  meta.thanos = thanos;
  checkTimeRange(meta, limits);
  return meta;
}

/** The sum of the block's files against the tenant's limit (Mimir checks it at /start and again at /finish). */
export function checkBlockSize(files: readonly ThanosFile[], maxBytes: number): void {
  if (maxBytes <= 0) return;
  let total = 0;
  for (const f of files) total += f.size_bytes ?? 0;
  if (total > maxBytes) throw bad(`block exceeds the maximum block size limit of ${maxBytes} bytes`);
}

function checkTimeRange(meta: BlockMeta, limits: UploadMetaLimits): void {
  if (limits.retentionMs > 0 && meta.maxTime < limits.nowMs - limits.retentionMs) {
    throw new BlockUploadError('unprocessable', `block max time (${iso(meta.maxTime)}) older than retention period`);
  }
  const range = limits.maxRangeMs;
  if (meta.maxTime - meta.minTime > range) {
    throw new BlockUploadError(
      'unprocessable',
      `block duration (${hours(meta.maxTime - meta.minTime)}) is larger than max configured compactor time range (${hours(range)})`,
    );
  }
  if (meta.maxTime > Math.floor(meta.minTime / range) * range + range) {
    throw new BlockUploadError('unprocessable', `block time range crosses boundary of configured compactor time range (${hours(range)})`);
  }
}

function sanitizeLabels(labels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(labels)) {
    if (DEPRECATED_LABELS.has(name)) continue;
    if (name !== SHARD_ID_LABEL) throw bad(`unsupported external label: ${name}`);
    if (value === '') continue;
    const m = SHARD_ID_VALUE.exec(value);
    if (!m || Number(m[1]) < 1 || Number(m[1]) > Number(m[2])) throw bad(`invalid ${SHARD_ID_LABEL} external label: ${JSON.stringify(value)}`);
    out[name] = value;
  }
  return out;
}

/** The body as a BlockMeta, keeping what it says (version included: checked later, as Mimir orders it). */
function parseUploadMeta(body: string): BlockMeta {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    throw bad('malformed request body');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('malformed request body');
  const m = raw as Record<string, unknown>;
  const int = (v: unknown, what: string): number => {
    if (v === undefined) return 0;
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw bad(`malformed request body: ${what} must be an integer`);
    return v;
  };
  const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
  const stats = obj(m.stats);
  const compaction = obj(m.compaction);
  const t = m.thanos === undefined ? undefined : obj(m.thanos);
  return {
    ulid: typeof m.ulid === 'string' ? m.ulid : '',
    minTime: int(m.minTime, 'minTime'),
    maxTime: int(m.maxTime, 'maxTime'),
    stats: { numSamples: int(stats.numSamples, 'stats'), numSeries: int(stats.numSeries, 'stats'), numChunks: int(stats.numChunks, 'stats') },
    compaction: { level: Math.max(1, int(compaction.level, 'compaction.level')), sources: [] },
    version: int(m.version, 'version'),
    ...(t === undefined
      ? {}
      : {
          thanos: {
            labels: Object.fromEntries(Object.entries(obj(t.labels)).map(([k, v]) => [k, String(v)])),
            downsample: { resolution: int(obj(t.downsample).resolution, 'thanos.downsample.resolution') },
            source: typeof t.source === 'string' ? t.source : '',
            files: Array.isArray(t.files)
              ? t.files.map((f) => {
                  const o = obj(f);
                  return { rel_path: typeof o.rel_path === 'string' ? o.rel_path : '', size_bytes: int(o.size_bytes, 'thanos.files size_bytes') };
                })
              : [],
          },
        }),
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function hours(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : `${ms / 1000}s`;
}
