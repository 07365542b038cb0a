// Counts a V8 .heapsnapshot's objects by constructor (and strings, arrays,
// closures by kind) so the ingester's cost per series can be read as
// "objects per series" and "bytes per series" by kind.
//
//   node --import tsx test/bench/heap-snapshot.ts Heap.<pid>.1.heapsnapshot [series]
//   node --import tsx test/bench/heap-snapshot.ts <idle>.heapsnapshot <loaded>.heapsnapshot <series>

import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] }; node_count: number };
  nodes: number[];
  strings: string[];
}

export interface HeapKind {
  kind: string;
  count: number;
  selfBytes: number;
}

export interface HeapSummary {
  nodes: number;
  totalBytes: number;
  kinds: HeapKind[];
}

export function summariseHeap(s: Snapshot): HeapSummary {
  const f = s.snapshot.meta.node_fields;
  const width = f.length;
  const iType = f.indexOf('type');
  const iName = f.indexOf('name');
  const iSize = f.indexOf('self_size');
  const types = s.snapshot.meta.node_types[0];
  const kinds = new Map<string, HeapKind>();
  let total = 0;
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + iType]];
    const size = s.nodes[i + iSize];
    total += size;
    let kind: string;
    if (type === 'object' || type === 'closure' || type === 'native') kind = `${type} ${s.strings[s.nodes[i + iName]]}`;
    else if (type === 'hidden' || type === 'array' || type === 'code') kind = `${type} ${s.strings[s.nodes[i + iName]].slice(0, 40)}`;
    else kind = type;
    const e = kinds.get(kind);
    if (e) {
      e.count++;
      e.selfBytes += size;
    } else kinds.set(kind, { kind, count: 1, selfBytes: size });
  }
  return { nodes: s.nodes.length / width, totalBytes: total, kinds: [...kinds.values()] };
}

export function summariseHeapFile(file: string, maxBytes = 700 * 2 ** 20): HeapSummary {
  const size = statSync(file).size;
  if (size > maxBytes) throw new Error(`${file} is ${(size / 2 ** 20).toFixed(0)} MiB, too large to parse here; profile with fewer series`);
  return summariseHeap(JSON.parse(readFileSync(file, 'utf8')) as Snapshot);
}

export function formatHeap(h: HeapSummary, series: number, top = 15): string {
  const per = (v: number) => (v / Math.max(1, series)).toFixed(2);
  const lines = [
    `heap: ${h.nodes.toLocaleString('en-US')} objects, ${(h.totalBytes / 2 ** 20).toFixed(1)} MiB self size, ${series.toLocaleString('en-US')} series: ` +
      `${per(h.nodes)} objects and ${per(h.totalBytes)} B per series`,
    '  by count (objects per series, bytes per series):',
  ];
  for (const k of [...h.kinds].sort((a, b) => b.count - a.count).slice(0, top)) {
    lines.push(`    ${per(k.count).padStart(8)}  ${per(k.selfBytes).padStart(9)} B  ${k.kind}`);
  }
  lines.push('  by self size:');
  for (const k of [...h.kinds].sort((a, b) => b.selfBytes - a.selfBytes).slice(0, top)) {
    lines.push(`    ${per(k.selfBytes).padStart(9)} B  ${per(k.count).padStart(8)} objects  ${k.kind}`);
  }
  return lines.join('\n');
}

/**
 * What `series` series added between two snapshots of one process, per series:
 * fixed costs (code, modules, pools) cancel out, unlike in one snapshot.
 */
export function formatHeapGrowth(before: HeapSummary, after: HeapSummary, series: number, top = 15): string {
  const b = new Map(before.kinds.map((k) => [k.kind, k]));
  const grown = after.kinds.map((k) => ({
    kind: k.kind,
    count: k.count - (b.get(k.kind)?.count ?? 0),
    selfBytes: k.selfBytes - (b.get(k.kind)?.selfBytes ?? 0),
  }));
  const per = (v: number) => (v / Math.max(1, series)).toFixed(2);
  const lines = [
    `heap growth from idle to ${series.toLocaleString('en-US')} series: ${per(after.nodes - before.nodes)} objects and ` +
      `${per(after.totalBytes - before.totalBytes)} B (V8 self size, ArrayBuffer backing stores included) per series`,
    '  by count (objects per series, bytes per series):',
  ];
  for (const k of [...grown].sort((x, y) => y.count - x.count).slice(0, top))
    lines.push(`    ${per(k.count).padStart(8)}  ${per(k.selfBytes).padStart(9)} B  ${k.kind}`);
  lines.push('  by self size:');
  for (const k of [...grown].sort((x, y) => y.selfBytes - x.selfBytes).slice(0, top))
    lines.push(`    ${per(k.selfBytes).padStart(9)} B  ${per(k.count).padStart(8)} objects  ${k.kind}`);
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [a, b, c] = process.argv.slice(2);
  // one file and a series count, or (idle file, loaded file, series count)
  if (c !== undefined) console.log(formatHeapGrowth(summariseHeapFile(a), summariseHeapFile(b), Number(c)));
  else console.log(formatHeap(summariseHeapFile(a), Number(b ?? 1)));
}
