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
// --records appends as an ingester appends format-3 records: 1,000 series a record, each found
// through the record's symbols (Head.symbols, seriesBySymbols), so the head's series rows count too.

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
const RECORDS = process.argv.includes('--records');
const SERIES_PER_RECORD = 1000;
const T0 = Math.floor(1_732_950_000_000 / 7_200_000) * 7_200_000;

function labelsFor(i: number): Labels {
  return [
    {
      name: '__name__',
      value: i % 4 === 0 ? 'node_cpu_seconds_total' : i % 4 === 1 ? 'http_requests_total' : i % 4 === 2 ? 'process_resident_memory_bytes' : 'up',
    },
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

/** A format-3 record's symbols and series, as the ingester hands them to the head (times and values apart). */
interface SymbolRecord {
  bytes: Uint8Array;
  start: Int32Array;
  end: Int32Array;
  count: number;
  refs: Uint32Array;
  refEnd: Int32Array;
  /** Index of the record's first series in `all`. */
  first: number;
}

function symbolRecords(all: Labels[]): SymbolRecord[] {
  const utf8 = new TextEncoder();
  const out: SymbolRecord[] = [];
  for (let first = 0; first < all.length; first += SERIES_PER_RECORD) {
    const series = all.slice(first, first + SERIES_PER_RECORD);
    const index = new Map<string, number>();
    const refs: number[] = [];
    const refEnd = new Int32Array(series.length);
    series.forEach((labels, i) => {
      for (const { name, value } of labels) {
        for (const str of [name, value]) {
          if (!index.has(str)) index.set(str, index.size);
          refs.push(index.get(str)!);
        }
      }
      refEnd[i] = refs.length;
    });
    const encoded = [...index.keys()].map((str) => utf8.encode(str));
    const bytes = new Uint8Array(encoded.reduce((n, b) => n + b.length, 0));
    const start = new Int32Array(encoded.length);
    const end = new Int32Array(encoded.length);
    for (let i = 0, pos = 0; i < encoded.length; pos += encoded[i].length, i++) {
      bytes.set(encoded[i], pos);
      start[i] = pos;
      end[i] = pos + encoded[i].length;
    }
    out.push({ bytes, start, end, count: encoded.length, refs: Uint32Array.from(refs), refEnd, first });
  }
  return out;
}

function ingestRecords(head: Head, records: SymbolRecord[], fromK: number, toK: number, stats: AppendStats): number {
  const ts = new Float64Array(1);
  const vs = new Float64Array(1);
  const start = performance.now();
  for (let k = fromK; k < toK; k++) {
    ts[0] = T0 + k * INTERVAL;
    for (const r of records) {
      const sym = head.symbols(r.bytes, r.start, r.end, r.count);
      for (let i = 0; i < r.refEnd.length; i++) {
        vs[0] = value(r.first + i, k);
        head.appendSamples(head.seriesBySymbols(sym, r.refs, i === 0 ? 0 : r.refEnd[i - 1], r.refEnd[i], true)!, ts, vs, 0, 1, stats);
      }
    }
  }
  return performance.now() - start;
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
  const labels = Array.from({ length: n }, (_, i) => labelsFor(i));
  const records = RECORDS ? symbolRecords(labels) : [];
  const base = rss();
  const baseHeap = heap();
  const chunksDir = MEMORY_CHUNKS ? undefined : mkdtempSync(join(tmpdir(), 'strata-bench-chunks-'));
  const head = new Head({ chunkRangeMs: 7_200_000, chunksDir });
  const stats = emptyAppendStats();
  const step = (fromK: number, toK: number) => (RECORDS ? ingestRecords(head, records, fromK, toK, stats) : ingest(head, labels, fromK, toK, stats));
  let ms = step(0, 1);
  const after1 = rss() - base;
  const heap1 = heap() - baseHeap;
  ms += step(1, 120);
  const after120 = rss() - base;
  const heap120 = heap() - baseHeap;
  const t120 = performance.now();
  ms += step(120, 240);
  const steadyMs = performance.now() - t120;
  const after240 = rss() - base;
  const heap240 = heap() - baseHeap;
  ms += step(240, 480);
  const after480 = rss() - base;
  const heap480 = heap() - baseHeap;
  const mem480 = process.memoryUsage();
  if (stats.appended !== n * 480) throw new Error(`appended ${stats.appended}, want ${n * 480}`);
  const kb = (b: number) => (b / n / 1024).toFixed(2).padStart(5);
  console.log(
    `head ${String(n).padStart(8)} series: RSS/series ${kb(after1)} KB @1 sample, ${kb(after120)} KB @120, ${kb(after240)} KB @240 (1h), ${kb(after480)} KB @480 (2h); ` +
      `ingest ${((n * 480) / (ms / 1000) / 1e6).toFixed(2)} M samples/s overall, ${((n * 120) / (steadyMs / 1000) / 1e6).toFixed(2)} M/s steady (${RECORDS ? `format-3 records of ${SERIES_PER_RECORD} series` : `${PER_CALL} per append call`})`,
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
      const sel =
        '{' +
        all[i]
          .filter((l) => l.name !== '__name__')
          .map((l) => `${l.name}="${l.value}"`)
          .join(',') +
        '}';
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

const counts = process.argv
  .slice(2)
  .filter((a) => !a.startsWith('--'))
  .map(Number);
for (const n of counts.length > 0 ? counts : [100_000]) headBench(n);
blockBench(5_000, 240);
