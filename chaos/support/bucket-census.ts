// What a filesystem bucket holds after a drill: complete blocks (meta.json present), block
// directories without meta.json (an interrupted upload readers must ignore), and stray temp
// entries. Reported, never repaired.

import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface BucketCensus {
  dir: string;
  complete_blocks: number;
  blocks_without_meta: string[];
  stray_temp_entries: string[];
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export function bucketCensus(dir: string): BucketCensus {
  const census: BucketCensus = { dir, complete_blocks: 0, blocks_without_meta: [], stray_temp_entries: [] };
  if (!existsSync(dir)) return census;
  for (const tenant of readdirSync(dir)) {
    const tenantDir = join(dir, tenant);
    if (!statSync(tenantDir).isDirectory()) continue;
    for (const entry of readdirSync(tenantDir)) {
      const p = join(tenantDir, entry);
      if (!ULID.test(entry) || !statSync(p).isDirectory()) {
        if (entry.startsWith('.tmp') || entry.includes('.tmp')) census.stray_temp_entries.push(`${tenant}/${entry}`);
        continue;
      }
      const files = readdirSync(p);
      if (files.includes('meta.json')) census.complete_blocks++;
      else census.blocks_without_meta.push(`${tenant}/${entry}`);
      for (const f of files) if (f.startsWith('.tmp')) census.stray_temp_entries.push(`${tenant}/${entry}/${f}`);
    }
  }
  return census;
}
