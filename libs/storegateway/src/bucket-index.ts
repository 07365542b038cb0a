// The per-tenant bucket index (Mimir's bucket-index.json.gz, format version 1):
// complete blocks and deletion marks of a tenant in one object, written by the
// compactor, read by queriers instead of listing the bucket.

import { gunzipSync, gzipSync } from 'node:zlib';
import { StrataError } from '@strata/errors';
import type { Bucket } from '@strata/objstore';
import { isObjectNotFound } from '@strata/objstore';
import { parseBlockMeta, type BlockMeta } from '@strata/tsdb';
import { bucketIndexKey, blockFileKey, blockIdFromListing, META_FILE } from './layout.ts';
import { readDeletionMarks } from './markers.ts';

export interface BucketIndexBlock {
  block_id: string;
  /** [min_time, max_time) in ms. */
  min_time: number;
  max_time: number;
  segments_format?: string;
  segments_num?: number;
  /** Unix seconds the upload completed (meta.json written). */
  uploaded_at: number;
  source?: string;
  compaction_level?: number;
}

export interface BucketIndexDeletionMark {
  block_id: string;
  deletion_time: number;
}

export interface BucketIndex {
  version: 1;
  blocks: BucketIndexBlock[];
  block_deletion_marks: BucketIndexDeletionMark[];
  /** Unix seconds. */
  updated_at: number;
}

export class BucketIndexCorruptError extends StrataError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('bucket-index-corrupt', 'internal', message, options);
    this.name = 'BucketIndexCorruptError';
  }
}

export async function readBucketIndex(bucket: Bucket, tenant: string): Promise<BucketIndex | null> {
  let raw: Uint8Array;
  try {
    raw = await bucket.get(bucketIndexKey(tenant));
  } catch (err) {
    if (isObjectNotFound(err)) return null;
    throw err;
  }
  try {
    const idx = JSON.parse(gunzipSync(raw).toString('utf8')) as BucketIndex;
    if (idx.version !== 1 || !Array.isArray(idx.blocks)) throw new Error(`unsupported version ${String(idx.version)}`);
    idx.block_deletion_marks ??= [];
    return idx;
  } catch (err) {
    throw new BucketIndexCorruptError(`bucket index of tenant ${tenant} is corrupt: ${(err as Error).message}`, { cause: err });
  }
}

export async function writeBucketIndex(bucket: Bucket, tenant: string, idx: BucketIndex): Promise<void> {
  await bucket.put(bucketIndexKey(tenant), gzipSync(Buffer.from(JSON.stringify(idx))));
}

export function indexBlockFromMeta(meta: BlockMeta, uploadedAtMs: number): BucketIndexBlock {
  const segs = meta.thanos?.segment_files ?? meta.thanos?.files?.filter((f) => f.rel_path.startsWith('chunks/')).map((f) => f.rel_path.slice(7)) ?? [];
  const oneBased = segs.length > 0 && segs.every((s, i) => s === String(i + 1).padStart(6, '0'));
  return {
    block_id: meta.ulid,
    min_time: meta.minTime,
    max_time: meta.maxTime,
    ...(oneBased ? { segments_format: '1b6d', segments_num: segs.length } : {}),
    uploaded_at: Math.floor(uploadedAtMs / 1000),
    ...(meta.thanos?.source ? { source: meta.thanos.source } : {}),
    compaction_level: meta.compaction.level,
  };
}

export interface TenantBlocksScan {
  /** Complete blocks (meta.json present and valid), by id. */
  metas: Map<string, BlockMeta>;
  /** Upload time (meta.json's modification time) by id. */
  uploadedAt: Map<string, number>;
  /** Block directories without a (valid) meta.json, with their newest file's time. */
  partial: Map<string, number>;
}

/**
 * Lists a tenant's blocks in the bucket. Metas already known (e.g. from the
 * previous index) are not fetched again: meta.json never changes.
 */
export async function scanTenantBlocks(bucket: Bucket, tenant: string, known: Map<string, BlockMeta> = new Map()): Promise<TenantBlocksScan> {
  const metas = new Map<string, BlockMeta>();
  const uploadedAt = new Map<string, number>();
  const partial = new Map<string, number>();
  for (const entry of await bucket.list(`${tenant}/`)) {
    const id = blockIdFromListing(entry);
    if (id === null) continue;
    try {
      const attrs = await bucket.attributes(blockFileKey(tenant, id, META_FILE));
      const meta = known.get(id) ?? parseBlockMeta(new TextDecoder().decode(await bucket.get(blockFileKey(tenant, id, META_FILE))));
      metas.set(id, meta);
      uploadedAt.set(id, attrs.lastModified.getTime());
    } catch (err) {
      if (!isObjectNotFound(err) && !(err instanceof Error && err.name === 'BlockFormatError')) throw err;
      // No meta.json: a block being uploaded, or the leftover of a crashed upload.
      let newest = 0;
      for (const key of await bucket.list(entry, { recursive: true })) {
        try {
          newest = Math.max(newest, (await bucket.attributes(key)).lastModified.getTime());
        } catch {
          // deleted meanwhile
        }
      }
      partial.set(id, newest);
    }
  }
  return { metas, uploadedAt, partial };
}

export interface BuildIndexOptions {
  /** The index this one replaces: blocks keep their upload time. */
  previous?: BucketIndex | null;
  /** Metas read before (meta.json never changes), filled as new ones are read. */
  metaCache?: Map<string, BlockMeta>;
}

/** Builds a tenant's index from the bucket. */
export async function buildBucketIndex(
  bucket: Bucket,
  tenant: string,
  nowMs: number,
  opts: BuildIndexOptions = {},
): Promise<{ index: BucketIndex; scan: TenantBlocksScan }> {
  const scan = await scanTenantBlocks(bucket, tenant, opts.metaCache);
  if (opts.metaCache) for (const [id, m] of scan.metas) opts.metaCache.set(id, m);
  const previous = opts.previous;
  const prevUploaded = new Map((previous?.blocks ?? []).map((b) => [b.block_id, b.uploaded_at]));
  const blocks = [...scan.metas.values()]
    .map((m) => {
      const b = indexBlockFromMeta(m, scan.uploadedAt.get(m.ulid) ?? nowMs);
      const prev = prevUploaded.get(m.ulid);
      if (prev !== undefined) b.uploaded_at = prev;
      return b;
    })
    .sort((a, b) => a.min_time - b.min_time || a.block_id.localeCompare(b.block_id));
  const marks = await readDeletionMarks(bucket, tenant);
  const block_deletion_marks = [...marks.values()]
    .filter((m) => scan.metas.has(m.id))
    .map((m) => ({ block_id: m.id, deletion_time: m.deletion_time }))
    .sort((a, b) => a.block_id.localeCompare(b.block_id));
  return { index: { version: 1, blocks, block_deletion_marks, updated_at: Math.floor(nowMs / 1000) }, scan };
}
