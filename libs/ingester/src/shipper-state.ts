// Which local blocks of a tenant reached the bucket: <dir>/thanos.shipper.json
// ({"version":1,"uploaded":[ULID...]}, the file Thanos' and Mimir's shippers
// keep), rewritten atomically after each upload.

import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';

const SHIPPER_FILE = 'thanos.shipper.json';

export async function readShipped(tenantDir: string): Promise<Set<string>> {
  try {
    const raw = JSON.parse(await readFile(join(tenantDir, SHIPPER_FILE), 'utf8')) as { uploaded?: unknown };
    return new Set(Array.isArray(raw.uploaded) ? raw.uploaded.filter((x): x is string => typeof x === 'string') : []);
  } catch {
    return new Set();
  }
}

export async function writeShipped(tenantDir: string, uploaded: Iterable<string>): Promise<void> {
  const path = join(tenantDir, SHIPPER_FILE);
  const tmp = `${path}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(JSON.stringify({ version: 1, uploaded: [...uploaded].sort() }, null, '\t') + '\n');
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
}
