// Which optional parts exist in this build, read from the product's own source (apps/ and
// libs/, tests and the local launchers excluded), so a drill that needs one is reported as
// not applicable rather than passed vacuously.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function productSources(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out.push(p);
    }
  };
  for (const top of ['apps', 'libs']) {
    for (const pkg of readdirSync(join(ROOT, top))) {
      if (pkg.startsWith('local-')) continue; // test launchers, not the product
      walk(join(ROOT, top, pkg, 'src'));
    }
  }
  return out;
}

/** Product source files (repo-relative) whose text matches `pattern`. */
function productFilesMatching(pattern: RegExp): string[] {
  return productSources()
    .filter((f) => pattern.test(readFileSync(f, 'utf8')))
    .map((f) => relative(ROOT, f));
}

export const features = {
  /** Files that talk to Redis (ring, heartbeats, HA tracker). */
  redisClients: () => productFilesMatching(/from\s+['"]ioredis['"]/),
  /** Files offering the Redis-backed ring KV (-ring.store=redis). */
  redisRing: () => productFilesMatching(/['"]ring\.store['"]/),
  /** Files defining the querier's Redis results-cache flag (the one Redis user the drill can wire). */
  resultsCacheRedisFlag: () => productFilesMatching(/['"]query-frontend\.results-cache\.redis\.endpoint['"]/),
  /** Files defining the ingester's block period flag (blocks are cut and shipped). */
  blockRangesFlag: () => productFilesMatching(/['"]blocks-storage\.tsdb\.block-ranges-period['"]/),
  /** Files that serve the ingester's flush endpoint. */
  ingesterFlush: () => productFilesMatching(/['"`]\/ingester\/flush['"`]/),
  /** Files that implement read-after-write consistency. */
  strongReads: () => productFilesMatching(/x-read-consistency/i),
};
