// Query latency of Strata next to Prometheus 2.42 on the same data (`npm run bench:query`):
// N series (default 100,000) × 1h at 15s, the same remote-write requests pushed
// into both, then dashboard-like instant and range queries, each run several
// times against each, alternating. Prints p50/p99 per query, the Strata/Prometheus
// ratio of the p50s and the geometric mean of the ratios, and checks that both
// answered the same (same series, values equal within 1e-9 relative).
//
//   npm run bench:query -- [--series 100000] [--runs 10] [--keep] [--profile] [--only REGEX] [--strata-args '-flag=x ...'] [--strata-url URL] [--hold] [--cluster]
//
// The data: 40 % counters (bench_requests_total), 40 % gauges (bench_gauge), 20 %
// classic histogram buckets (bench_latency_seconds_bucket, 10 `le` each), on
// `instance`/`job` labels (50 jobs).
//
// Strata runs as one process (-target=all, its own Kafka; the head holds the hour), or with
// --cluster as a production deployment does: a distributor, one partition's ingesters in zones a
// and b and a querier that reads them over gRPC (LocalCluster, one Kafka broker); CPU is then
// summed over the querier and the ingesters. Prometheus is the Debian binary with
// --web.enable-remote-write-receiver. Both are killed by pid at the end; data lives in a temp dir
// (kept with --keep).
//
// --profile runs Strata under the V8 CPU profiler (test/bench/profiler-preload.mjs)
// and prints the query phase's self time, overall and per query.
// --strata-url uses a Strata that is already running instead of starting one.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, LocalCluster, freePorts } from '@strata/local-cluster';
import { compressBody, encodeWriteRequest, type SeriesInput } from '@strata/remote-write';
import { formatSummary, summariseProfile, type CpuProfile } from './cpuprofile.ts';
import { cpuSeconds } from './proc-stats.ts';

const args = process.argv.slice(2);
const opt = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const strOpt = (name: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : undefined);
const SERIES = opt('series', 100_000);
const RUNS = opt('runs', 10);
const KEEP = args.includes('--keep');
const PROFILE = args.includes('--profile');
const ONLY = strOpt('only') !== undefined ? new RegExp(strOpt('only')!) : undefined;
const STRATA_URL = strOpt('strata-url');
/** Extra Strata flags, space-separated (e.g. "-ingester.decoded-chunks-cache-size=0"). */
const STRATA_ARGS = (strOpt('strata-args') ?? '').split(' ').filter(Boolean);
/** Keeps both running after the queries (until Ctrl-C), e.g. to look into a difference by hand. */
const HOLD = args.includes('--hold');
const CLUSTER = args.includes('--cluster');
const INTERVAL = 15_000;
const SPAN = 3_600_000;
const BATCH_SERIES = 1000;
const WARMUP = 2;

const JOBS = 50;
const BUCKETS = ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '+Inf'];
const COUNTERS = Math.floor(SERIES * 0.4);
const GAUGES = COUNTERS;
const HISTOGRAMS = Math.floor((SERIES - COUNTERS - GAUGES) / BUCKETS.length);
const TOTAL_SERIES = COUNTERS + GAUGES + HISTOGRAMS * BUCKETS.length;

const now = Date.now();
const T0 = Math.floor((now - SPAN - 5 * 60_000) / INTERVAL) * INTERVAL;
const TEND = T0 + SPAN;
/** Off the 15 s grid, as a dashboard's "now" is. */
const at = (ms: number) => String((Math.floor(ms / 1000) * 1000 + 123) / 1000);
const range = (q: string, step = '60') => ({ query: q, start: at(T0), end: at(TEND), step });

interface BenchQuery {
  name: string;
  endpoint: 'query' | 'query_range';
  params: Record<string, string>;
  /** topk/bottomk: ties may pick different series, so only the values are compared. */
  valuesOnly?: boolean;
}

const ALL_QUERIES: BenchQuery[] = [
  { name: 'sum(rate(requests_total[5m]))', endpoint: 'query', params: { query: 'sum(rate(bench_requests_total[5m]))', time: at(TEND) } },
  {
    name: 'sum(rate(requests_total[5m])) 1h/60s',
    endpoint: 'query_range',
    params: range('sum(rate(bench_requests_total[5m]))'),
  },
  {
    name: 'sum by (job) (rate(requests_total[5m])) 1h/60s',
    endpoint: 'query_range',
    params: range('sum by (job) (rate(bench_requests_total[5m]))'),
  },
  {
    name: 'sum by (instance) (rate(requests_total{job=~"job-1|job-2|job-3"}[5m]))',
    endpoint: 'query',
    params: { query: 'sum by (instance) (rate(bench_requests_total{job=~"job-1|job-2|job-3"}[5m]))', time: at(TEND) },
  },
  {
    name: 'sum by (instance) (gauge) 1h/60s, =~ alternation',
    endpoint: 'query_range',
    params: range('sum by (instance) (bench_gauge{job=~"job-4|job-5", instance=~"i-1.*|i-2.*"})'),
  },
  { name: 'topk(10, gauge)', endpoint: 'query', params: { query: 'topk(10, bench_gauge)', time: at(TEND) }, valuesOnly: true },
  {
    name: 'topk(5, sum by (job) (rate(requests_total[5m]))) 1h/60s',
    endpoint: 'query_range',
    params: range('topk(5, sum by (job) (rate(bench_requests_total[5m])))'),
    valuesOnly: true,
  },
  { name: 'quantile(0.9, gauge)', endpoint: 'query', params: { query: 'quantile(0.9, bench_gauge)', time: at(TEND) } },
  {
    name: 'quantile by (job) (0.5, gauge) 1h/60s',
    endpoint: 'query_range',
    params: range('quantile by (job) (0.5, bench_gauge)'),
  },
  {
    name: 'histogram_quantile(0.99, sum by (le) (rate(bucket[5m])))',
    endpoint: 'query',
    params: { query: 'histogram_quantile(0.99, sum by (le) (rate(bench_latency_seconds_bucket[5m])))', time: at(TEND) },
  },
  {
    name: 'histogram_quantile(0.9, sum by (job, le) (rate(bucket[5m]))) 1h/60s',
    endpoint: 'query_range',
    params: range('histogram_quantile(0.9, sum by (job, le) (rate(bench_latency_seconds_bucket[5m])))'),
  },
  {
    name: 'histogram_quantile(0.9, rate(bucket{job=~"job-1|job-2"}[1m]))',
    endpoint: 'query',
    params: { query: 'histogram_quantile(0.9, rate(bench_latency_seconds_bucket{job=~"job-1|job-2"}[1m]))', time: at(TEND) },
  },
  {
    name: 'gauge{job=~"job-1|job-2|job-3", instance=~"i-1.*"}',
    endpoint: 'query',
    params: { query: 'bench_gauge{job=~"job-1|job-2|job-3", instance=~"i-1.*"}', time: at(TEND) },
  },
  { name: 'avg(avg_over_time(gauge[30m]))', endpoint: 'query', params: { query: 'avg(avg_over_time(bench_gauge[30m]))', time: at(TEND) } },
  {
    name: 'avg_over_time(gauge{job="job-7"}[30m]) 1h/60s',
    endpoint: 'query_range',
    params: range('avg_over_time(bench_gauge{job="job-7"}[30m])'),
  },
  { name: 'count(gauge > 0.5)', endpoint: 'query', params: { query: 'count(bench_gauge > 0.5)', time: at(TEND) } },
  { name: 'requests_total{instance="i-42"} (1 series)', endpoint: 'query', params: { query: 'bench_requests_total{instance="i-42"}', time: at(TEND) } },
  {
    name: 'rate(requests_total{job="job-3"}[1m]) 1h/15s',
    endpoint: 'query_range',
    params: range('rate(bench_requests_total{job="job-3"}[1m])', '15'),
  },
];
const QUERIES = ALL_QUERIES.filter((q) => !ONLY || ONLY.test(q.name));

/** A deterministic value in [0, 1) per (series, sample): few ties, so topk is well defined. */
function noise(a: number, b: number): number {
  const x = Math.sin(a * 12.9898 + b * 78.233) * 43758.5453;
  return x - Math.floor(x);
}

function* batches(): Generator<SeriesInput[]> {
  const samples = SPAN / INTERVAL + 1;
  const ts = Array.from({ length: samples }, (_, i) => T0 + i * INTERVAL);
  let batch: SeriesInput[] = [];
  const flush = function* () {
    if (batch.length > 0) yield batch;
    batch = [];
  };
  const job = (i: number) => `job-${i % JOBS}`;
  for (let s = 0; s < COUNTERS; s++) {
    // Counters start well above 0: rate()'s extrapolation towards zero changed after Prometheus 2.42
    // (Strata follows 3.x), and a counter starting near 0 in a window would show that instead of the engines' speed.
    let v = 1000 + (s % 97);
    batch.push({
      labels: [
        { name: '__name__', value: 'bench_requests_total' },
        { name: 'instance', value: `i-${s}` },
        { name: 'job', value: job(s) },
      ],
      samples: ts.map((timestamp, i) => ({ timestamp, value: (v += (s * 7 + i * 13) % 10) })),
    });
    if (batch.length >= BATCH_SERIES) yield* flush();
  }
  for (let s = 0; s < GAUGES; s++) {
    batch.push({
      labels: [
        { name: '__name__', value: 'bench_gauge' },
        { name: 'instance', value: `i-${s}` },
        { name: 'job', value: job(s) },
      ],
      samples: ts.map((timestamp, i) => ({ timestamp, value: noise(s, i) })),
    });
    if (batch.length >= BATCH_SERIES) yield* flush();
  }
  for (let h = 0; h < HISTOGRAMS; h++) {
    // Cumulative buckets: bucket b counts every observation of buckets 0..b.
    const perBucket = BUCKETS.map(() => 1000);
    const values = BUCKETS.map(() => [] as number[]);
    for (let i = 0; i < samples; i++) {
      let cum = 0;
      for (let b = 0; b < BUCKETS.length; b++) {
        perBucket[b] += Math.floor(noise(h * 16 + b, i) * 20);
        cum += perBucket[b];
        values[b].push(cum);
      }
    }
    BUCKETS.forEach((le, b) => {
      batch.push({
        labels: [
          { name: '__name__', value: 'bench_latency_seconds_bucket' },
          { name: 'instance', value: `i-${h}` },
          { name: 'job', value: job(h) },
          { name: 'le', value: le },
        ],
        samples: ts.map((timestamp, i) => ({ timestamp, value: values[b][i] })),
      });
    });
    if (batch.length >= BATCH_SERIES) yield* flush();
  }
  yield* flush();
}

async function post(url: string, body: Uint8Array): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' },
  });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
}

type Metric = Record<string, string>;
interface Answer {
  resultType: string;
  result: { metric: Metric; value?: [number, string]; values?: [number, string][] }[];
}

async function query(base: string, endpoint: string, params: Record<string, string>): Promise<{ ms: number; data: Answer }> {
  const started = performance.now();
  const res = await fetch(`${base}/${endpoint}`, {
    method: 'POST',
    body: new URLSearchParams(params).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  const json = (await res.json()) as { status: string; error?: string; data: Answer };
  const ms = performance.now() - started;
  if (json.status !== 'success') throw new Error(`${base}/${endpoint} ${params.query}: ${json.error}`);
  return { ms, data: json.data };
}

const keyOf = (m: Metric) =>
  Object.keys(m)
    .sort()
    .map((k) => `${k}=${JSON.stringify(m[k])}`)
    .join(',');

function sameValue(a: string, b: string): boolean {
  if (a === b) return true;
  const x = Number(a);
  const y = Number(b);
  if (Number.isNaN(x) && Number.isNaN(y)) return true;
  return Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
}

/** The differences between two answers, at most `max` of them described. */
function differences(prom: Answer, strata: Answer, valuesOnly: boolean, max = 3): string[] {
  const out: string[] = [];
  const points = (r: Answer['result'][number]) => (r.values ?? (r.value ? [r.value] : [])).map(([t, v]) => [Number(t).toFixed(3), v] as const);
  if (prom.resultType !== strata.resultType) return [`result type ${prom.resultType} vs ${strata.resultType}`];
  if (prom.result.length !== strata.result.length) out.push(`${prom.result.length} series vs ${strata.result.length}`);
  if (valuesOnly) {
    // Compare the multiset of values per timestamp.
    const byT = (a: Answer) => {
      const m = new Map<string, string[]>();
      for (const r of a.result) for (const [t, v] of points(r)) m.set(t, [...(m.get(t) ?? []), v]);
      for (const vs of m.values()) vs.sort((x, y) => Number(x) - Number(y));
      return m;
    };
    const p = byT(prom);
    const s = byT(strata);
    for (const [t, vs] of p) {
      const ws = s.get(t) ?? [];
      if (vs.length !== ws.length || vs.some((v, i) => !sameValue(v, ws[i]))) out.push(`at ${t}: [${vs.join(' ')}] vs [${ws.join(' ')}]`);
      if (out.length >= max) break;
    }
    return out;
  }
  const s = new Map(strata.result.map((r) => [keyOf(r.metric), r]));
  let missing = 0;
  let wrong = 0;
  for (const r of prom.result) {
    const k = keyOf(r.metric);
    const other = s.get(k);
    if (!other) {
      if (missing++ < max) out.push(`only in Prometheus: {${k}}`);
      continue;
    }
    s.delete(k);
    const a = points(r);
    const b = points(other);
    const bad = a.length !== b.length ? -1 : a.findIndex(([t, v], i) => t !== b[i][0] || !sameValue(v, b[i][1]));
    if (bad !== -1 && wrong++ < max) {
      out.push(
        bad === -1 || a.length !== b.length ? `{${k}}: ${a.length} points vs ${b.length}` : `{${k}} at ${a[bad][0]}: ${a[bad][1]} vs ${b[bad][0]} ${b[bad][1]}`,
      );
    }
  }
  if (missing > max) out.push(`... ${missing} series only in Prometheus`);
  if (wrong > max) out.push(`... ${wrong} series with different values`);
  let extra = 0;
  for (const k of s.keys()) if (extra++ < max) out.push(`only in Strata: {${k}}`);
  if (extra > max) out.push(`... ${extra} series only in Strata`);
  return out;
}

function percentile(xs: number[], p: number): number {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
}

async function waitUntil(what: string, fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');

const dir = mkdtempSync(join(tmpdir(), 'strata-qbench-'));
const profDir = join(dir, 'profiles');
const [strataPort, promPort] = await freePorts(2);
const strata = new AppProcess({
  name: 'strata',
  target: 'all',
  httpPort: strataPort,
  logFile: join(dir, 'strata.log'),
  args: [
    '-auth.multitenancy-enabled=false',
    `-data-dir=${dir}/data`,
    `-server.http-listen-port=${strataPort}`,
    '-querier.max-samples=500000000',
    '-distributor.ingestion-rate-limit=100000000',
    '-distributor.ingestion-burst-size=100000000',
    `-ingester.max-global-series-per-user=${TOTAL_SERIES * 2}`,
    ...STRATA_ARGS,
  ],
});
writeFileSync(join(dir, 'prometheus.yml'), 'global: {}\n');
let prometheus: ChildProcess | undefined;
const stop = async () => {
  if (prometheus?.pid !== undefined && prometheus.exitCode === null) process.kill(prometheus.pid, 'SIGKILL');
  if (cluster !== undefined) await cluster.stop();
  else if (!STRATA_URL) await strata.kill('SIGTERM', 60_000);
};
let cluster: LocalCluster | undefined;
/** The Strata processes a query runs in, by pid (for CPU and profiles). */
const strataPids = new Map<number, string>();
const windows: { name: string; fromUs: number; toUs: number }[] = [];
try {
  if (!STRATA_URL) {
    const saved = process.env.NODE_OPTIONS;
    if (PROFILE) {
      mkdirSync(profDir, { recursive: true });
      process.env.NODE_OPTIONS = [saved, `--import=${new URL('./profiler-preload.mjs', import.meta.url).pathname}`].filter(Boolean).join(' ');
      process.env.STRATA_BENCH_PROFILE_DIR = profDir;
    }
    if (CLUSTER) {
      const limits = ['-auth.multitenancy-enabled=false', '-distributor.ingestion-rate-limit=100000000', '-distributor.ingestion-burst-size=100000000'];
      cluster = await LocalCluster.start({
        dataDir: join(dir, 'cluster'),
        partitions: 1,
        extraArgs: {
          distributor: limits,
          ingester: [`-ingester.max-global-series-per-user=${TOTAL_SERIES * 2}`, ...STRATA_ARGS],
          querier: ['-auth.multitenancy-enabled=false', '-querier.max-samples=500000000', ...STRATA_ARGS],
        },
      });
      for (const p of cluster.processes.values()) if (p.pid !== undefined && p.opts.target !== 'distributor') strataPids.set(p.pid, p.name);
    } else {
      strata.start();
    }
    if (saved === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = saved;
    delete process.env.STRATA_BENCH_PROFILE_DIR;
  }
  prometheus = spawn(
    '/usr/bin/prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'prometheus')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
      '--web.enable-remote-write-receiver',
      '--query.max-samples=500000000',
    ],
    { stdio: 'ignore' },
  );
  const promUrl = `http://127.0.0.1:${promPort}`;
  await waitUntil('Prometheus', async () => (await fetch(`${promUrl}/-/ready`)).ok, 60_000);
  if (!STRATA_URL && !CLUSTER) {
    await strata.waitReady(180_000);
    strataPids.set(strata.pid!, 'strata');
  }
  const strataUrl = STRATA_URL ?? cluster?.querierUrl ?? strata.url;
  const pushUrl = cluster?.distributorUrl ?? strataUrl;

  console.log(
    `bench: pushing ${TOTAL_SERIES} series (${COUNTERS} counters, ${GAUGES} gauges, ${HISTOGRAMS} histograms × ${BUCKETS.length} buckets) × ${SPAN / INTERVAL + 1} samples into Prometheus 2.42 and Strata (${CLUSTER ? 'distributor, ingesters in zones a and b, querier' : '-target=all'}); load ${load()}`,
  );
  const pushStart = Date.now();
  for (const batch of batches()) {
    const body = compressBody(encodeWriteRequest({ timeseries: batch }));
    await Promise.all([post(`${promUrl}/api/v1/write`, body), post(`${pushUrl}/api/v1/push`, body)]);
  }
  console.log(`bench: pushed in ${((Date.now() - pushStart) / 1000).toFixed(0)}s; waiting until Strata has every series`);
  await waitUntil(
    'Strata to hold every series',
    async () =>
      (await query(`${strataUrl}/prometheus/api/v1`, 'query', { query: `count({__name__=~"bench_.*"}) == ${TOTAL_SERIES}`, time: at(TEND) })).data.result
        .length === 1,
    600_000,
  );
  console.log(`bench: queries start; load ${load()}`);

  const rows: string[][] = [['query', 'series out', 'Prom p50', 'p99', 'Strata p50', 'p99', 'Strata/Prom p50', 'CPU ms Prom', 'Strata', 'ratio', 'answers']];
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  // CPU per query (utime+stime of each server across its call): steadier than latency on a shared machine.
  const cpuOf = (pid: number | undefined) => (pid === undefined ? NaN : (cpuSeconds(pid) ?? NaN));
  const strataCpu = () => (strataPids.size === 0 ? NaN : [...strataPids.keys()].reduce((a, pid) => a + cpuOf(pid), 0));
  const diffs: string[] = [];
  for (const q of QUERIES) {
    const lat = { prom: [] as number[], strata: [] as number[] };
    const cpu = { prom: 0, strata: 0 };
    let n = 0;
    let verdict = 'equal';
    const fromUs = nowUs();
    for (let i = 0; i < RUNS + WARMUP; i++) {
      const c0 = cpuOf(prometheus.pid);
      const p = await query(`${promUrl}/api/v1`, q.endpoint, q.params);
      const c1 = strataCpu();
      const s = await query(`${strataUrl}/prometheus/api/v1`, q.endpoint, q.params);
      const c2 = strataCpu();
      if (i >= WARMUP) {
        cpu.prom += cpuOf(prometheus.pid) - c0;
        cpu.strata += c2 - c1;
      }
      n = s.data.result.length;
      if (i === 0) {
        const d = differences(p.data, s.data, q.valuesOnly ?? false);
        if (d.length > 0) {
          verdict = 'DIFFER';
          diffs.push(`${q.name}:\n    ${d.join('\n    ')}`);
        }
      }
      if (i < WARMUP) continue;
      lat.prom.push(p.ms);
      lat.strata.push(s.ms);
    }
    windows.push({ name: q.name, fromUs, toUs: nowUs() });
    const f = (x: number) => `${x.toFixed(1)}ms`;
    const pp50 = percentile(lat.prom, 0.5);
    const sp50 = percentile(lat.strata, 0.5);
    ratios.push(sp50 / pp50);
    const pc = (1000 * cpu.prom) / RUNS;
    const sc = (1000 * cpu.strata) / RUNS;
    if (pc > 0 && sc > 0) cpuRatios.push(sc / pc);
    rows.push([
      q.name,
      String(n),
      f(pp50),
      f(percentile(lat.prom, 0.99)),
      f(sp50),
      f(percentile(lat.strata, 0.99)),
      `${(sp50 / pp50).toFixed(2)}×`,
      pc.toFixed(0),
      sc.toFixed(0),
      pc > 0 ? `${(sc / pc).toFixed(2)}×` : 'n/a',
      verdict,
    ]);
    console.log(`  ${q.name}: Prometheus ${f(pp50)}, Strata ${f(sp50)} (${(sp50 / pp50).toFixed(2)}×), ${verdict}`);
  }
  const geomean = Math.exp(ratios.reduce((a, r) => a + Math.log(r), 0) / ratios.length);
  console.log('');
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const r of rows) console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '));
  console.log(`geometric mean of Strata/Prometheus p50 ratios: ${geomean.toFixed(2)}× over ${ratios.length} queries; worst ${Math.max(...ratios).toFixed(2)}×`);
  if (cpuRatios.length > 0) {
    const cpuGeomean = Math.exp(cpuRatios.reduce((a, r) => a + Math.log(r), 0) / cpuRatios.length);
    console.log(
      `geometric mean of Strata/Prometheus CPU-per-query ratios: ${cpuGeomean.toFixed(2)}× over ${cpuRatios.length} queries (CPU at 10 ms resolution, summed over the timed runs)`,
    );
  }
  console.log(
    `bench: ${TOTAL_SERIES} series, ${RUNS} timed runs per query after ${WARMUP} warm-up runs, the two alternating; load ${load()}; data in ${dir}${KEEP ? '' : ' (removed)'}`,
  );
  if (diffs.length > 0) console.log(`answers that differ (Prometheus vs Strata):\n  ${diffs.join('\n  ')}`);
  else console.log('every answer equal (values within 1e-9 relative; topk compared by values)');
  if (HOLD) {
    console.log(`holding: Prometheus ${promUrl}, Strata ${strataUrl}; Ctrl-C (SIGINT) ends`);
    await new Promise((resolve) => process.once('SIGINT', resolve));
  }
} finally {
  await stop();
  if (PROFILE && !STRATA_URL) {
    for (const f of readdirSync(profDir).filter((x) => x.endsWith('.cpuprofile'))) {
      const pid = Number(/CPU\.(\d+)\./.exec(f)?.[1]);
      const name = strataPids.get(pid);
      if (name === undefined) continue; // the distributor (or Kafka's tools): not part of a query
      const p = JSON.parse(readFileSync(join(profDir, f), 'utf8')) as CpuProfile;
      if (windows.length > 0) {
        const all = { fromUs: windows[0].fromUs, toUs: windows[windows.length - 1].toUs };
        console.log('\n' + formatSummary(`${name}, whole query phase`, summariseProfile(p, 25, all), 10));
        for (const w of windows) console.log('\n' + formatSummary(`${name}: ${w.name}`, summariseProfile(p, 8, w), 5));
      }
    }
    console.log(`profiles in ${profDir}`);
  }
  if (!KEEP && !PROFILE) rmSync(dir, { recursive: true, force: true });
}
