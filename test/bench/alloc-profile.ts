// Summarises what the profiler preload's SIGURG window recorded in one process: sampled
// allocations that lived into the old generation (the garbage full GCs are run for), by the
// three innermost frames that allocated them, beside the GCs' count and time.
//
//   node --import tsx test/bench/alloc-profile.ts Alloc.<pid>.heapprofile [GC.<pid>.json] [--top 10]

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface AllocNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocNode[];
}

export interface GcCounts {
  major: number;
  majorMs: number;
  minor: number;
  minorMs: number;
}

export interface AllocSummary {
  totalBytes: number;
  top: { stack: string; bytes: number }[];
}

function frame(f: AllocNode['callFrame']): string {
  const file = f.url === '' ? '' : ` ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
  return `${f.functionName || '(anonymous)'}${file}`;
}

export function summariseAllocations(head: AllocNode, topN = 10): AllocSummary {
  const bytes = new Map<string, number>();
  let totalBytes = 0;
  const walk = (n: AllocNode, stack: string[]): void => {
    const here = [...stack, frame(n.callFrame)];
    if (n.selfSize > 0) {
      const key = here.slice(-3).reverse().join(' < ');
      bytes.set(key, (bytes.get(key) ?? 0) + n.selfSize);
      totalBytes += n.selfSize;
    }
    for (const c of n.children) walk(c, here);
  };
  walk(head, []);
  const top = [...bytes]
    .sort((a, b) => b[1] - a[1])
    .slice(0, topN)
    .map(([stack, b]) => ({ stack, bytes: b }));
  return { totalBytes, top };
}

export function formatAllocations(title: string, s: AllocSummary, seconds: number, gc?: GcCounts): string {
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  const lines = [
    `${title}: ${mib(s.totalBytes)} MiB lived into the old generation in ${seconds.toFixed(0)} s` +
      (gc ? `; ${gc.major} mark-compacts (${gc.majorMs.toFixed(0)} ms), ${gc.minor} scavenges (${gc.minorMs.toFixed(0)} ms)` : ''),
  ];
  for (const t of s.top) lines.push(`  ${mib(t.bytes).padStart(7)} MiB  ${t.stack}`);
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const i = args.indexOf('--top');
  const topN = i >= 0 ? Number(args[i + 1]) : 10;
  const file = args[0];
  const gcFile = args[1]?.endsWith('.json') ? args[1] : undefined;
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { head: AllocNode };
  const gc = gcFile && existsSync(gcFile) ? (JSON.parse(readFileSync(gcFile, 'utf8')) as GcCounts) : undefined;
  console.log(formatAllocations(file, summariseAllocations(profile.head, topN), 0, gc));
}
