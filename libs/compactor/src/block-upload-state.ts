// Where a block upload stands, read from the bucket alone (so any compactor replica answers the
// same): Mimir's files under <tenant>/<ULID>/ — meta.json (complete), uploading-meta.json (started,
// never seen by readers, which need meta.json) and validation.json ({"LastUpdate": ms, "Error": ""},
// a heartbeat while validating, the reason once it failed).

import type { Bucket } from '@strata/objstore';
import { isObjectNotFound } from '@strata/objstore';
import { blockFileKey, META_FILE } from '@strata/storegateway';
import { encodeBlockMeta, type BlockMeta } from '@strata/tsdb';

const UPLOADING_META_FILE = 'uploading-meta.json';
const VALIDATION_FILE = 'validation.json';
/** A validation whose heartbeat is older than this died with its process: /finish may start it again. */
const VALIDATION_HEARTBEAT_TIMEOUT_MS = 5 * 60_000;
export const VALIDATION_HEARTBEAT_INTERVAL_MS = 60_000;

/** validation.json as Mimir writes it (Go field names, no tags). */
export interface ValidationFile {
  /** Unix ms of the last heartbeat (or of the failure). */
  LastUpdate: number;
  /** Why validation failed; empty while it runs. */
  Error: string;
}

export type UploadState =
  | { state: 'complete' }
  | { state: 'not-started' }
  | { state: 'uploading'; meta: BlockMeta }
  | { state: 'validating'; meta: BlockMeta; validation: ValidationFile }
  | { state: 'failed'; meta: BlockMeta; validation: ValidationFile };

export async function readUploadState(bucket: Bucket, tenant: string, ulid: string, nowMs: number): Promise<UploadState> {
  if (await bucket.exists(blockFileKey(tenant, ulid, META_FILE))) return { state: 'complete' };
  const metaBytes = await getOrNull(bucket, blockFileKey(tenant, ulid, UPLOADING_META_FILE));
  if (metaBytes === null) return { state: 'not-started' };
  const meta = JSON.parse(new TextDecoder().decode(metaBytes)) as BlockMeta;
  const validationBytes = await getOrNull(bucket, blockFileKey(tenant, ulid, VALIDATION_FILE));
  if (validationBytes === null) return { state: 'uploading', meta };
  const validation = JSON.parse(new TextDecoder().decode(validationBytes)) as ValidationFile;
  if (validation.Error !== '') return { state: 'failed', meta, validation };
  // A stale heartbeat: the validating process is gone, the upload is back to "uploading".
  if (nowMs - validation.LastUpdate >= VALIDATION_HEARTBEAT_TIMEOUT_MS) return { state: 'uploading', meta };
  return { state: 'validating', meta, validation };
}

export async function writeUploadingMeta(bucket: Bucket, tenant: string, meta: BlockMeta): Promise<void> {
  await bucket.put(blockFileKey(tenant, meta.ulid, UPLOADING_META_FILE), new TextEncoder().encode(encodeBlockMeta(meta)));
}

export async function writeValidation(bucket: Bucket, tenant: string, ulid: string, v: ValidationFile): Promise<void> {
  await bucket.put(blockFileKey(tenant, ulid, VALIDATION_FILE), new TextEncoder().encode(JSON.stringify(v)));
}

/** Publishes the block: meta.json last of all its files, then the upload's own files go. */
export async function completeUpload(bucket: Bucket, tenant: string, meta: BlockMeta): Promise<void> {
  await bucket.put(blockFileKey(tenant, meta.ulid, META_FILE), new TextEncoder().encode(encodeBlockMeta(meta)));
  await bucket.delete(blockFileKey(tenant, meta.ulid, UPLOADING_META_FILE));
  await bucket.delete(blockFileKey(tenant, meta.ulid, VALIDATION_FILE));
}

/**
 * After a failed validation: the block's data files go, uploading-meta.json and validation.json
 * (with the reason) stay so /check answers "failed"; the compactor's partial-block cleanup
 * removes them after -compactor.partial-block-deletion-delay.
 */
export async function failUpload(bucket: Bucket, tenant: string, ulid: string, reason: string, nowMs: number): Promise<void> {
  const keep = new Set([blockFileKey(tenant, ulid, UPLOADING_META_FILE), blockFileKey(tenant, ulid, VALIDATION_FILE)]);
  for (const key of await bucket.list(`${tenant}/${ulid}/`, { recursive: true })) if (!keep.has(key)) await bucket.delete(key);
  // The reason last: once /check says "failed", the data is gone.
  await writeValidation(bucket, tenant, ulid, { LastUpdate: nowMs, Error: reason });
}

async function getOrNull(bucket: Bucket, key: string): Promise<Uint8Array | null> {
  try {
    return await bucket.get(key);
  } catch (err) {
    if (isObjectNotFound(err)) return null;
    throw err;
  }
}
