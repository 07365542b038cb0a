// The ingest mix with native histograms, Strata beside Prometheus 2.42 in one run:
// the same remote-write 1.0 requests (node-exporter-like float series plus a share
// of native-histogram latency series, schema 3, growing counts and buckets) are
// pushed into a Strata cluster (Kafka, distributor, both zones' ingesters) and a
// Prometheus with --enable-feature=native-histograms; then both cut blocks
// (Strata: POST /ingester/flush; Prometheus: admin snapshot of its head) and the
// chunk segment files are walked to split bytes by chunk encoding: bytes per
// float sample (XOR chunks) and per histogram sample (histogram chunks), side by
// side, with CPU-seconds spent ingesting.
//
//   npm run bench:histograms [-- --series 20000 --histogram-share 0.1 --minutes 30]

import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { compressBody, encodeHistogram, encodeWriteRequest, type SeriesInput } from '@strata/remote-write';
import type { NativeHistogram } from '@strata/model';
import { cpuDelta, loadAverage, machineDescription, snapshotCpu, sum } from './proc-stats.ts';
import { PrometheusTarget, StrataTarget, type BenchTarget } from './targets.ts';
import { nodeExporterFamilies } from './series.ts';

const { values } = parseArgs({
  options: {
    series: { type: 'string', default: '20000' },
    'histogram-share': { type: 'string', default: '0.1' },
    minutes: { type: 'string', default: '30' },
  },
});
const SERIES = Number(values.series);
const SHARE = Number(values['histogram-share']);
const MINUTES = Number(values.minutes);
const STEP = 15_000;
const ROUNDS = Math.floor((MINUTES * 60_000) / STEP);
const PER_REQUEST = 2_000;
const log = (l: string) => console.error(l);

// ---- the series ----

interface FloatSeries {
  labels: SeriesInput['labels'];
  counter: boolean;
  k: number;
}

interface HistSeries {
  labels: SeriesInput['labels'];
  k: number;
}

function seriesSet(): { floats: FloatSeries[]; hists: HistSeries[] } {
  const histCount = Math.round(SERIES * SHARE);
  const families = nodeExporterFamilies();
  const floats: FloatSeries[] = [];
  for (let inst = 0; floats.length < SERIES - histCount; inst++) {
    for (const f of families) {
      for (const v of f.variants) {
        if (floats.length >= SERIES - histCount) break;
        const labels = [{ name: '__name__', value: f.name }, ...v, { name: 'instance', value: `host-${inst}:9100` }, { name: 'job', value: 'node' }];
        floats.push({ labels: labels.sort((a, b) => (a.name < b.name ? -1 : 1)), counter: f.kind === 'counter', k: floats.length });
      }
    }
  }
  const hists: HistSeries[] = [];
  const routes = ['/api/cart', '/api/checkout', '/api/items', '/api/login', '/api/search'];
  for (let i = 0; i < histCount; i++) {
    hists.push({
      labels: [
        { name: '__name__', value: 'http_request_duration_seconds' },
        { name: 'instance', value: `app-${Math.floor(i / 10)}:8080` },
        { name: 'job', value: 'app' },
        { name: 'method', value: i % 2 === 0 ? 'GET' : 'POST' },
        { name: 'route', value: routes[i % routes.length] },
        { name: 'status', value: i % 10 === 9 ? '500' : '200' },
      ],
      k: i,
    });
  }
  return { floats, hists };
}

/** Deterministic pseudo-random in [0, 1) from two integers. */
function noise(a: number, b: number): number {
  const x = Math.sin(a * 12.9898 + b * 78.233) * 43758.5453;
  return x - Math.floor(x);
}

function floatValue(s: FloatSeries, round: number): number {
  if (s.counter) return Math.floor(round * (10 + (s.k % 90)) + noise(s.k, round) * 5) + round * 0.25;
  return Math.round(1e6 * (1 + (s.k % 7) + Math.sin((round + s.k) / 20))) / 1e3;
}

/**
 * A latency histogram after `round` scrapes: schema 3 (buckets grow by 2^(1/8)), ~25
 * populated buckets between ~5 ms and ~2 s, a few hundred observations per scrape.
 */
function histogramAt(s: HistSeries, round: number): NativeHistogram {
  const first = -60; // 2^(-60/8) ≈ 5.5 ms
  const width = 24 + (s.k % 8);
  const counts: number[] = [];
  let total = 0;
  for (let j = 0; j < width; j++) {
    const shape = Math.exp(-((j - width / 3) ** 2) / (2 * (width / 5) ** 2));
    const perScrape = Math.round(shape * (20 + (s.k % 30)));
    const c = perScrape * (round + 1) + Math.floor(noise(s.k * 31 + j, round) * 3) * (round > 0 ? 1 : 0);
    counts.push(c);
    total += c;
  }
  let sumSeconds = 0;
  for (let j = 0; j < width; j++) sumSeconds += counts[j] * 2 ** ((first + j) / 8);
  return {
    counterResetHint: 'unknown',
    schema: 3,
    zeroThreshold: 2.938735877055719e-39,
    zeroCount: 0,
    count: total,
    sum: Math.round(sumSeconds * 1e6) / 1e6,
    positiveSpans: [{ offset: first + 1, length: width }],
    negativeSpans: [],
    positiveBuckets: counts,
    negativeBuckets: [],
  };
}

function monotone(prev: NativeHistogram | undefined, next: NativeHistogram): NativeHistogram {
  if (prev === undefined) return next;
  const buckets = next.positiveBuckets.map((c, j) => Math.max(c, prev.positiveBuckets[j] ?? 0));
  const count = buckets.reduce((a, b) => a + b, 0);
  return { ...next, positiveBuckets: buckets, count, sum: Math.max(next.sum, prev.sum) };
}

// ---- chunk files ----

interface ChunkTally {
  float: { bytes: number; samples: number; chunks: number };
  histogram: { bytes: number; samples: number; chunks: number };
  other: number;
  /** Whole blocks (index, chunks, meta), bytes. */
  blockBytes: number;
  blocks: number;
}

function readUvarint(b: Buffer, pos: number): [number, number] {
  let v = 0;
  let mul = 1;
  for (;;) {
    const c = b[pos++];
    v += (c & 0x7f) * mul;
    if (c < 0x80) return [v, pos];
    mul *= 128;
  }
}

/** Walks every block's chunk segment files under `dir` (tsdb/docs/format/chunks.md): per encoding, data bytes and samples. */
function tallyChunks(dir: string): ChunkTally {
  const t: ChunkTally = { float: { bytes: 0, samples: 0, chunks: 0 }, histogram: { bytes: 0, samples: 0, chunks: 0 }, other: 0, blockBytes: 0, blocks: 0 };
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (!statSync(p).isDirectory()) continue;
      if (name === 'chunks') {
        t.blocks++;
        for (const f of readdirSync(p)) tallySegment(readFileSync(join(p, f)), t);
        for (const f of readdirSync(d)) {
          const q = join(d, f);
          t.blockBytes += statSync(q).isDirectory() ? readdirSync(q).reduce((n, x) => n + statSync(join(q, x)).size, 0) : statSync(q).size;
        }
      } else {
        walk(p);
      }
    }
  };
  walk(dir);
  return t;
}

function tallySegment(b: Buffer, t: ChunkTally): void {
  let pos = 8; // magic (4), version (1), padding (3)
  while (pos < b.length) {
    const [len, at] = readUvarint(b, pos);
    if (len === 0 && at >= b.length) break;
    const encoding = b[at];
    const data = b.subarray(at + 1, at + 1 + len);
    // The first two bytes of an XOR or histogram chunk are its sample count.
    const samples = data.readUInt16BE(0);
    const bytes = at - pos + 1 + len + 4; // length varint, encoding, data, CRC32
    if (encoding === 1) {
      t.float.bytes += bytes;
      t.float.samples += samples;
      t.float.chunks++;
    } else if (encoding === 2 || encoding === 3) {
      t.histogram.bytes += bytes;
      t.histogram.samples += samples;
      t.histogram.chunks++;
    } else {
      t.other += bytes;
    }
    pos = at + 1 + len + 4;
  }
}

// ---- the run ----

/** Round by round (a series is in one request per round, so a round's requests go in parallel). */
async function pushAll(target: BenchTarget, rounds: Buffer[][]): Promise<void> {
  for (const bodies of rounds) await pushRound(target, bodies);
}

async function pushRound(target: BenchTarget, bodies: Buffer[]): Promise<void> {
  const concurrency = 4;
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++];
      for (let attempt = 0; ; attempt++) {
        const res = await fetch(target.pushUrl, {
          method: 'POST',
          headers: { ...target.headers, 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' },
          body,
          signal: AbortSignal.timeout(60_000),
        });
        const text = await res.text();
        if (res.status < 300) break;
        if (res.status < 500 && res.status !== 429) throw new Error(`${target.name}: push answered ${res.status}: ${text}`);
        if (attempt > 20) throw new Error(`${target.name}: push failed ${attempt} times: ${res.status} ${text}`);
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function main(): Promise<void> {
  log(`histogram bench: ${SERIES} series (${Math.round(SERIES * SHARE)} native histograms), ${ROUNDS} rounds at 15s; ${machineDescription()}`);
  const { floats, hists } = seriesSet();
  const t0 = Math.floor((Date.now() - MINUTES * 60_000 - 60_000) / STEP) * STEP;
  const rounds: Buffer[][] = [];
  const prev = new Map<number, NativeHistogram>();
  let floatSamples = 0;
  let histSamples = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const ts = t0 + r * STEP;
    const all: SeriesInput[] = [];
    for (const s of floats) all.push({ labels: s.labels, samples: [{ value: floatValue(s, r), timestamp: ts }] });
    for (const s of hists) {
      const h = monotone(prev.get(s.k), histogramAt(s, r));
      prev.set(s.k, h);
      all.push({ labels: s.labels, samples: [], histograms: [encodeHistogram({ timestamp: ts, float: false, histogram: h })] });
    }
    floatSamples += floats.length;
    histSamples += hists.length;
    const bodies: Buffer[] = [];
    for (let i = 0; i < all.length; i += PER_REQUEST) bodies.push(compressBody(encodeWriteRequest({ timeseries: all.slice(i, i + PER_REQUEST) })));
    rounds.push(bodies);
  }
  log(`histogram bench: ${sum(rounds.map((b) => b.length))} requests, ${floatSamples} float and ${histSamples} histogram samples`);

  const dir = mkdtempSync(join(tmpdir(), 'strata-hist-bench-'));
  const results: { name: string; cpu: number; wallMs: number; tally: ChunkTally; load: string }[] = [];
  for (const make of [
    () => StrataTarget.start({ dataDir: join(dir, 'strata'), partitions: 1, log }),
    () => PrometheusTarget.start(join(dir, 'prometheus'), log, { nativeHistograms: true }),
  ]) {
    const target: BenchTarget & { blocksDir: string } = await make();
    try {
      const before = snapshotCpu(target.processes());
      const began = Date.now();
      await pushAll(target, rounds);
      const ingested = await target.waitIngested(floatSamples + histSamples, 300_000);
      const wallMs = Date.now() - began;
      const cpu = sum(cpuDelta(before, snapshotCpu(target.processes())).values());
      if (!ingested.caughtUp) log(`${target.name}: ${ingested.behind} samples still not ingested`);
      await target.disk();
      results.push({ name: target.name, cpu, wallMs, tally: tallyChunks(target.blocksDir), load: loadAverage() });
      log(`${target.name}: ingested in ${(wallMs / 1000).toFixed(1)}s, ${cpu.toFixed(1)} CPU-s (load ${loadAverage()})`);
    } finally {
      await target.stop();
    }
  }

  const total = floatSamples + histSamples;
  const row = (what: string, f: (r: (typeof results)[number]) => number, digits = 2) => {
    const v = results.map(f);
    const ratio = v[1] > 0 ? (v[0] / v[1]).toFixed(2) + '×' : '–';
    return `| ${what} | ${v.map((x) => x.toFixed(digits)).join(' | ')} | ${ratio} |`;
  };
  const perCopy = (r: (typeof results)[number]) => r.tally.histogram.samples / histSamples;
  console.log(
    `\nNative histogram mix: ${SERIES} series, ${(SHARE * 100).toFixed(0)} % native histograms (schema 3, ~28 buckets), ${ROUNDS} samples each at 15s; load ${results.map((r) => r.load).join(' / ')}\n`,
  );
  console.log(`| | ${results.map((r) => r.name).join(' | ')} | Strata / Prometheus |`);
  console.log('|---|---|---|---|');
  console.log(row('bytes per float sample (XOR chunks)', (r) => r.tally.float.bytes / r.tally.float.samples));
  console.log(row('bytes per histogram sample (histogram chunks)', (r) => r.tally.histogram.bytes / r.tally.histogram.samples));
  console.log(row('samples per chunk, histograms', (r) => r.tally.histogram.samples / r.tally.histogram.chunks, 1));
  console.log(row('block bytes per sample, all (one copy)', (r) => r.tally.blockBytes / perCopy(r) / total));
  console.log(row('ingest CPU-seconds (whole system)', (r) => r.cpu, 1));
  console.log(row('samples per CPU-second', (r) => total / r.cpu, 0));
  console.log(`\nStrata's bucket holds both zones' copies (${results[0].tally.blocks} blocks); per-sample figures count each sample once per copy.`);
}

await main();
