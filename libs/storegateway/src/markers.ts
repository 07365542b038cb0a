// Deletion marks (Thanos' deletion-mark.json): a block marked for deletion is
// ignored by readers after a delay and deleted by the compactor after another.
// The mark is written in the block and in <tenant>/markers/, where the bucket
// index updater finds every mark with one listing.

import type { Bucket } from '@strata/objstore';
import { isObjectNotFound } from '@strata/objstore';
import { blockFileKey, blockIdFromGlobalMark, DELETION_MARK_FILE, globalDeletionMarkKey, MARKERS_DIR } from './layout.ts';

export interface DeletionMark {
  id: string;
  /** Unix seconds. */
  deletion_time: number;
  version: 1;
}

export async function markForDeletion(bucket: Bucket, tenant: string, ulid: string, nowMs: number): Promise<DeletionMark> {
  const mark: DeletionMark = { id: ulid, deletion_time: Math.floor(nowMs / 1000), version: 1 };
  const body = new TextEncoder().encode(JSON.stringify(mark, null, '\t') + '\n');
  await bucket.put(blockFileKey(tenant, ulid, DELETION_MARK_FILE), body);
  await bucket.put(globalDeletionMarkKey(tenant, ulid), body);
  return mark;
}

/** Every deletion mark of a tenant (from the global markers location), by block id. */
export async function readDeletionMarks(bucket: Bucket, tenant: string): Promise<Map<string, DeletionMark>> {
  const out = new Map<string, DeletionMark>();
  for (const key of await bucket.list(`${tenant}/${MARKERS_DIR}/`)) {
    const id = blockIdFromGlobalMark(key);
    if (id === null) continue;
    try {
      const m = JSON.parse(new TextDecoder().decode(await bucket.get(key))) as Partial<DeletionMark>;
      out.set(id, { id, deletion_time: Number(m.deletion_time ?? 0), version: 1 });
    } catch (err) {
      if (!isObjectNotFound(err)) throw err;
    }
  }
  return out;
}

/**
 * Deletes a block: meta.json first (the block turns partial, invisible to
 * readers), then its other files, then its marks last.
 */
export async function deleteBlock(bucket: Bucket, tenant: string, ulid: string): Promise<void> {
  await bucket.delete(blockFileKey(tenant, ulid, 'meta.json'));
  for (const key of await bucket.list(`${tenant}/${ulid}/`, { recursive: true })) {
    if (!key.endsWith(`/${DELETION_MARK_FILE}`)) await bucket.delete(key);
  }
  await bucket.delete(blockFileKey(tenant, ulid, DELETION_MARK_FILE));
  await bucket.delete(globalDeletionMarkKey(tenant, ulid));
}
