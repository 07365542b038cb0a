// Head memory and ingest speed, and block size next to Prometheus' own.
//  1. Head RSS per active series: N series (6 labels, like a node/app scrape)
//     appended in scrape order, 15s apart, measured after 1, 120, 240 and 480
//     samples per series (one sample, one full chunk, one hour, two hours: a full 2h block range).
//  2. Bytes per sample of a block cut from the head vs. the block promtool
//     create-blocks-from openmetrics writes for the same samples.
// Prints figures; asserts nothing.
// Run: cd /work/main && node --expose-gc --max-old-space-size=12000 --import tsx libs/tsdb/bench/head.bench.ts [100000 1000000] [--per-call=1]
// --per-call=k appends k consecutive samples of a series per call (a remote-write request carrying k per series).
// Closed chunks go to files under a temporary directory, as in an ingester; --memory-chunks keeps them in memory.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Labels } from '@strata/model';
import { Head, emptyAppendStats, writeBlockFromChunks, type AppendStats } from '../src/index.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const INTERVAL = 15_000;
const PER_CALL = Math.max(1, Number(process.argv.find((a) => a.startsWith('--per-call='))?.split('=')[1] ?? 1));
const MEMORY_CHUNKS = process.argv.includes('--memory-chunks');
const T0 = Math.floor(1_732_950_000_000 / 7_200_000) * 7_200_000;

function labelsFor(i: number): Labels {
  return [
    { name: '__name__', value: i % 4 === 0 ? 'node_cpu_seconds_total' : i % 4 === 1 ? 'http_requests_total' : i % 4 === 2 ? 'process_resident_memory_bytes' : 'up' },
    { name: 'cluster', value: `prod-${i % 3}` },
    { name: 'instance', value: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:9100` },
    { name: 'job', value: ['node', 'api', 'edge', 'db'][(i >> 2) % 4] },
    { name: 'mode', value: ['user', 'system', 'idle', 'iowait', 'irq'][i % 5] },
    { name: 'zone', value: `z${i % 8}` },
  ];
}

/** A fresh copy of the strings, as a decoded remote-write request would hand over. */
function fresh(labels: Labels): Labels {
  return labels.map((l) => ({ name: Buffer.from(l.name).toString(), value: Buffer.from(l.value).toString() }));
}

/** Value of series i at sample k: counters grow, gauges wander, a few series are constant. */
function value(i: number, k: number): number {
  switch (i % 4) {
    case 0:
      return k * 15 + ((i * 7919 + k * 104729) % 100) / 100; // cpu seconds counter
    case 1:
      return Math.floor(k * (i % 50) + ((i * k) % 7)); // request counter
    case 2:
      return 50_000_000 + ((i * 31 + k * 17) % 4096) * 4096; // memory gauge, page multiples
    default:
      return 1;
  }
}

function rss(): number {
  gc!();
  gc!();
  return process.memoryUsage().rss;
}

/** V8 heap in use plus ArrayBuffer memory: what the head holds, without allocator slack. */
function heap(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

function ingest(head: Head, all: Labels[], fromK: number, toK: number, stats: AppendStats): number {
  const ts = new Float64Array(PER_CALL);
  const vs = new Float64Array(PER_CALL);
  const start = performance.now();
  for (let k = fromK; k < toK; k += PER_CALL) {
    const n = Math.min(PER_CALL, toK - k);
    for (let j = 0; j < n; j++) ts[j] = T0 + (k + j) * INTERVAL;
    const tsv = ts.subarray(0, n);
    const vsv = vs.subarray(0, n);
    for (let i = 0; i < all.length; i++) {
      for (let j = 0; j < n; j++) vs[j] = value(i, k + j);
      head.append(k === 0 ? fresh(all[i]) : all[i], tsv, vsv, stats);
    }
  }
  return performance.now() - start;
}

function headBench(n: number): void {
  const all = Array.from({ length: n }, (_, i) => labelsFor(i));
  const base = rss();
  const baseHeap = heap();
  const chunksDir = MEMORY_CHUNKS ? undefined : mkdtempSync(join(tmpdir(), 'strata-bench-chunks-'));
  const head = new Head({ chunkRangeMs: 7_200_000, chunksDir });
  const stats = emptyAppendStats();
  let ms = ingest(head, all, 0, 1, stats);
  const after1 = rss() - base;
  const heap1 = heap() - baseHeap;
  ms += ingest(head, all, 1, 120, stats);
  const after120 = rss() - base;
  const heap120 = heap() - baseHeap;
  const t120 = performance.now();
  ms += ingest(head, all, 120, 240, stats);
  const steadyMs = performance.now() - t120;
  const after240 = rss() - base;
  const heap240 = heap() - baseHeap;
  ms += ingest(head, all, 240, 480, stats);
  const after480 = rss() - base;
  const heap480 = heap() - baseHeap;
  const mem480 = process.memoryUsage();
  if (stats.appended !== n * 480) throw new Error(`appended ${stats.appended}, want ${n * 480}`);
  const kb = (b: number) => (b / n / 1024).toFixed(2).padStart(5);
  console.log(
    `head ${String(n).padStart(8)} series: RSS/series ${kb(after1)} KB @1 sample, ${kb(after120)} KB @120, ${kb(after240)} KB @240 (1h), ${kb(after480)} KB @480 (2h); ` +
      `ingest ${((n * 480) / (ms / 1000) / 1e6).toFixed(2)} M samples/s overall, ${((n * 120) / (steadyMs / 1000) / 1e6).toFixed(2)} M/s steady (${PER_CALL} per append call)`,
  );
  const files = head.chunkFiles;
  console.log(
    `     ${' '.repeat(8)}         heap+buffers/series ${kb(heap1)} KB @1, ${kb(heap120)} KB @120, ${kb(heap240)} KB @240, ${kb(heap480)} KB @480; ` +
      (files === null ? 'closed chunks in memory' : `closed chunks in ${files.segments} files: ${kb(files.bytes)} KB/series`),
  );
  const mib = (b: number) => `${(b / 1048576).toFixed(0)} MiB`;
  console.log(
    `     ${' '.repeat(8)}         @480: RSS ${mib(mem480.rss)} = V8 heap ${mib(mem480.heapTotal)} (${mib(mem480.heapUsed)} used) + array buffers ${mib(mem480.arrayBuffers)} + the rest ${mib(mem480.rss - mem480.heapTotal - mem480.arrayBuffers)} (code, allocator slack)`,
  );
  if (head.numSeries !== n) throw new Error('lost series');
  head.close();
  if (chunksDir !== undefined) rmSync(chunksDir, { recursive: true, force: true });
}

function blockBench(n: number, samples: number): void {
  const dir = mkdtempSync(join(tmpdir(), 'strata-bench-blocks-'));
  try {
    const all = Array.from({ length: n }, (_, i) => labelsFor(i));
    const head = new Head({ chunkRangeMs: 7_200_000 });
    ingest(head, all, 0, samples, emptyAppendStats());
    const lines: string[] = [];
    for (let i = 0; i < n; i++) {
      const sel = '{' + all[i].filter((l) => l.name !== '__name__').map((l) => `${l.name}="${l.value}"`).join(',') + '}';
      for (let k = 0; k < samples; k++) lines.push(`${all[i][0].value}${sel} ${value(i, k)} ${((T0 + k * INTERVAL) / 1000).toFixed(3)}`);
    }
    lines.push('# EOF', '');
    writeFileSync(join(dir, 'in.om'), lines.join('\n'));
    void writeBlockFromChunks({ dir: join(dir, 'ours'), series: head.snapshotForBlock(T0, T0 + 7_200_000) }).then((w) => {
      const ours = sizes(w!.dir);
      let theirs = { chunks: 0, index: 0 };
      if (existsSync('/usr/bin/promtool')) {
        execFileSync('/usr/bin/promtool', ['tsdb', 'create-blocks-from', 'openmetrics', join(dir, 'in.om'), join(dir, 'prom')], { stdio: 'ignore' });
        for (const b of readdirSync(join(dir, 'prom')).filter((x) => /^[0-9A-Z]{26}$/.test(x))) {
          const s = sizes(join(dir, 'prom', b));
          theirs = { chunks: theirs.chunks + s.chunks, index: theirs.index + s.index };
        }
      }
      const total = n * samples;
      const f = (x: number) => (x / total).toFixed(3);
      console.log(
        `block ${n} series x ${samples} samples: ours chunks ${f(ours.chunks)} B/sample, chunks+index ${f(ours.chunks + ours.index)} B/sample; ` +
          `promtool chunks ${f(theirs.chunks)}, chunks+index ${f(theirs.chunks + theirs.index)} B/sample; ` +
          `ratio ${((ours.chunks + ours.index) / (theirs.chunks + theirs.index)).toFixed(3)}x`,
      );
      rmSync(dir, { recursive: true, force: true });
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

function sizes(block: string): { chunks: number; index: number } {
  let chunks = 0;
  for (const f of readdirSync(join(block, 'chunks'))) chunks += statSync(join(block, 'chunks', f)).size;
  return { chunks, index: statSync(join(block, 'index')).size };
}

const counts = process.argv.slice(2).filter((a) => !a.startsWith('--')).map(Number);
for (const n of counts.length > 0 ? counts : [100_000]) headBench(n);
blockBench(5_000, 240);
