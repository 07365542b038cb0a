// Prometheus' own tools on our blocks: `promtool tsdb list` and `tsdb dump`
// (Debian's promtool 2.42, and Prometheus 3's, which `npm test`'s bootstrap
// builds: 2.42's dump prints float samples only), plus copying a tenant's
// blocks out of a bucket into a directory promtool can open. Used by e2e tests only.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { Bucket } from '@strata/objstore';
import { PROMETHEUS3_DIR } from '../../scripts/prometheus3.mjs';

const run = promisify(execFile);
const PROMTOOL = '/usr/bin/promtool';
export const havePromtool = existsSync(PROMTOOL);

/** Prometheus 3's binaries, built by `node scripts/bootstrap.mjs test`. */
export const PROMETHEUS3 = join(PROMETHEUS3_DIR, 'bin', 'prometheus');
const PROMTOOL3 = join(PROMETHEUS3_DIR, 'bin', 'promtool');

export async function promtool(...args: string[]): Promise<string> {
  const { stdout } = await run(PROMTOOL, args, { maxBuffer: 256 * 1024 * 1024 });
  return stdout;
}

/** Prometheus 3's promtool; fails with what to run when the bootstrap has not built it. */
export async function promtool3(...args: string[]): Promise<string> {
  if (!existsSync(PROMTOOL3)) throw new Error(`${PROMTOOL3} is missing: run \`node scripts/bootstrap.mjs test\` (npm test does)`);
  const { stdout } = await run(PROMTOOL3, args, { maxBuffer: 256 * 1024 * 1024 });
  return stdout;
}

export interface DumpedHistogram {
  labels: string;
  timestamp: number;
  count: number;
  sum: number;
  /** Non-empty buckets as promtool prints them: `(0.5,1]` → lower, upper, count. */
  buckets: { lower: number; upper: number; count: number }[];
}

/** The histogram lines of Prometheus 3's `promtool tsdb dump` (`{labels} {count:N, sum:S, (lo,hi]:c, ...} ts`). */
export function parseDumpHistograms(out: string): DumpedHistogram[] {
  const hs: DumpedHistogram[] = [];
  for (const line of out.split('\n')) {
    const m = /^(\{.*\}) \{count:([^,]+), sum:([^,}]+)(.*)\} (-?\d+)$/.exec(line);
    if (!m) continue;
    const buckets = [...m[4].matchAll(/[[(]([^,]+),([^\])]+)[\])]:([^,}]+)/g)].map((b) => ({ lower: Number(b[1]), upper: Number(b[2]), count: Number(b[3]) }));
    hs.push({ labels: m[1], timestamp: Number(m[5]), count: Number(m[2]), sum: Number(m[3]), buckets });
  }
  return hs;
}

/**
 * Copies the tenant's blocks (those with meta.json, optionally only some) to
 * <dir>/<ULID>/ and adds the wal/ directory promtool 2.42's dump insists on.
 */
export async function copyTenantBlocks(bucket: Bucket, tenant: string, dir: string, only?: (ulid: string) => boolean): Promise<string[]> {
  const ulids: string[] = [];
  for (const entry of await bucket.list(`${tenant}/`)) {
    const m = /\/([0-9A-HJKMNP-TV-Z]{26})\/$/.exec(entry);
    if (!m || !(await bucket.exists(`${entry}meta.json`)) || (only && !only(m[1]))) continue;
    for (const key of await bucket.list(entry, { recursive: true })) {
      const rel = key.slice(`${tenant}/`.length);
      if (rel.endsWith('deletion-mark.json')) continue;
      const path = join(dir, ...rel.split('/'));
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, await bucket.get(key));
    }
    ulids.push(m[1]);
  }
  await mkdir(join(dir, 'wal'), { recursive: true });
  return ulids;
}

/** `promtool tsdb dump` output: Go's labels string -> [timestamp ms, value][] in output order. */
export function parseDump(out: string): Map<string, [number, number][]> {
  const bySeries = new Map<string, [number, number][]>();
  for (const line of out.split('\n')) {
    if (line === '') continue;
    const m = /^(\{.*\}) (\S+) (-?\d+)$/.exec(line);
    if (!m) throw new Error(`unexpected dump line: ${line}`);
    let list = bySeries.get(m[1]);
    if (!list) bySeries.set(m[1], (list = []));
    const v = m[2] === '+Inf' ? Infinity : m[2] === '-Inf' ? -Infinity : m[2] === 'NaN' ? NaN : Number(m[2]);
    list.push([Number(m[3]), v]);
  }
  return bySeries;
}

/** `promtool tsdb list` rows: ULID, min time, max time, samples, chunks, series. */
export function parseList(out: string): { ulid: string; minTime: number; maxTime: number; samples: number; chunks: number; series: number }[] {
  return out
    .split('\n')
    .filter((l) => /^[0-9A-Z]{26}\s/.test(l))
    .map((l) => {
      const [ulid, minTime, maxTime, , samples, chunks, series] = l.split(/\s+/);
      return { ulid, minTime: Number(minTime), maxTime: Number(maxTime), samples: Number(samples), chunks: Number(chunks), series: Number(series) };
    });
}
