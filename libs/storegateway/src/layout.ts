// Where things live in the bucket, as Mimir lays it out:
//   <tenant>/<ULID>/{meta.json, index, chunks/000001.., tombstones, deletion-mark.json}
//   <tenant>/markers/<ULID>-deletion-mark.json   (global copy of each deletion mark)
//   <tenant>/bucket-index.json.gz                (written by the compactor)

import { isUlid } from '@strata/tsdb';

export const META_FILE = 'meta.json';
export const DELETION_MARK_FILE = 'deletion-mark.json';
export const MARKERS_DIR = 'markers';
export const BUCKET_INDEX_FILE = 'bucket-index.json.gz';

export function blockPrefix(tenant: string, ulid: string): string {
  return `${tenant}/${ulid}/`;
}

export function blockFileKey(tenant: string, ulid: string, rel: string): string {
  return `${tenant}/${ulid}/${rel}`;
}

export function globalDeletionMarkKey(tenant: string, ulid: string): string {
  return `${tenant}/${MARKERS_DIR}/${ulid}-${DELETION_MARK_FILE}`;
}

export function bucketIndexKey(tenant: string): string {
  return `${tenant}/${BUCKET_INDEX_FILE}`;
}

/** The ULID of a listed "<tenant>/<ULID>/" entry, or null for anything else. */
export function blockIdFromListing(entry: string): string | null {
  if (!entry.endsWith('/')) return null;
  const parts = entry.slice(0, -1).split('/');
  const last = parts[parts.length - 1];
  return isUlid(last) ? last : null;
}

/** The ULID of a "<tenant>/markers/<ULID>-deletion-mark.json" key, or null. */
export function blockIdFromGlobalMark(key: string): string | null {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const suffix = `-${DELETION_MARK_FILE}`;
  if (!name.endsWith(suffix)) return null;
  const id = name.slice(0, -suffix.length);
  return isUlid(id) ? id : null;
}

/** Tenants are the bucket's top-level "directories"; names that cannot be tenants are skipped. */
export function tenantFromListing(entry: string): string | null {
  if (!entry.endsWith('/')) return null;
  const t = entry.slice(0, -1);
  // rules/ holds the ruler's rule groups (a reserved tenant id), not blocks.
  return t === '' || t.startsWith('.') || t.startsWith('__') || t === 'rules' ? null : t;
}
