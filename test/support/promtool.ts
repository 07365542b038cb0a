// Prometheus' own tools on our blocks: `promtool tsdb list` and `tsdb dump`
// (Debian's promtool 2.42), plus copying a tenant's blocks out of a bucket
// into a directory promtool can open. Used by e2e tests only.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { Bucket } from '@strata/objstore';

const run = promisify(execFile);
const PROMTOOL = '/usr/bin/promtool';
export const havePromtool = existsSync(PROMTOOL);

export async function promtool(...args: string[]): Promise<string> {
  const { stdout } = await run(PROMTOOL, args, { maxBuffer: 256 * 1024 * 1024 });
  return stdout;
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
