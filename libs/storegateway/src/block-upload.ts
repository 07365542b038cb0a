// Uploads a local block directory to <tenant>/<ULID>/ in the bucket: chunks,
// index and tombstones first, meta.json last, so a reader that finds the meta
// finds a complete block. A crash half-way leaves a partial block (no meta),
// which readers skip and the compactor removes after a delay.

import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Bucket } from '@strata/objstore';
import { blockFileKey, META_FILE } from './layout.ts';

export interface UploadedBlock {
  files: number;
  bytes: number;
}

export async function uploadBlock(bucket: Bucket, tenant: string, ulid: string, dir: string): Promise<UploadedBlock> {
  const chunkFiles = (await readdir(join(dir, 'chunks'))).filter((n) => /^\d{6}$/.test(n)).sort();
  const top = new Set(await readdir(dir));
  if (!top.has(META_FILE)) throw new Error(`block ${dir} has no ${META_FILE}; refusing to upload a partial block`);
  const order = [...chunkFiles.map((n) => `chunks/${n}`), 'index', ...(top.has('tombstones') ? ['tombstones'] : []), META_FILE];
  let bytes = 0;
  for (const rel of order) {
    const path = join(dir, ...rel.split('/'));
    await bucket.put(blockFileKey(tenant, ulid, rel), { file: path });
    bytes += (await stat(path)).size;
  }
  return { files: order.length, bytes };
}
