// Query latency of Strata next to Prometheus 2.42 on the same data: N series
// (default 100,000) × 1h at 15s, pushed by remote write into both, then a
// fixed set of instant and range queries, each run several times against each.
// Prints p50/p99 per query and the Strata/Prometheus ratio of the p50s.
//
//   node --import tsx test/bench/query-bench.ts [--series 100000] [--runs 15] [--keep] [--strata-url URL]
//
// --strata-url uses a Strata that is already running (e.g. started with
// `node --cpu-prof --import tsx apps/strata/src/main.ts ...` to profile it)
// instead of starting one.
//
// Strata runs in single-process mode (its own Kafka); Prometheus is the
// Debian binary with --web.enable-remote-write-receiver. Both are killed by
// pid at the end; data lives in a temp dir (kept with --keep).

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { compressBody, encodeWriteRequest, type SeriesInput } from '@strata/remote-write';

const args = process.argv.slice(2);
const opt = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const SERIES = opt('series', 100_000);
const RUNS = opt('runs', 15);
const KEEP = args.includes('--keep');
const STRATA_URL = args.includes('--strata-url') ? args[args.indexOf('--strata-url') + 1] : undefined;
const INTERVAL = 15_000;
const SPAN = 3_600_000;
const BATCH_SERIES = 1000;

const JOBS = 50;
const now = Date.now();
const T0 = Math.floor((now - SPAN - 5 * 60_000) / INTERVAL) * INTERVAL;
const TEND = T0 + SPAN;
const at = (ms: number) => String((Math.floor(ms / 1000) * 1000 + 123) / 1000);

const QUERIES: { name: string; params: Record<string, string>; endpoint: 'query' | 'query_range' }[] = [
  { name: 'sum(rate(requests_total[5m]))', endpoint: 'query', params: { query: 'sum(rate(bench_requests_total[5m]))', time: at(TEND) } },
  {
    name: 'sum by (job) (rate(requests_total[5m])) 1h/60s',
    endpoint: 'query_range',
    params: { query: 'sum by (job) (rate(bench_requests_total[5m]))', start: at(T0 + 10 * 60_000), end: at(TEND), step: '60' },
  },
  { name: 'topk(10, gauge)', endpoint: 'query', params: { query: 'topk(10, bench_gauge)', time: at(TEND) } },
  { name: 'count(gauge > 0.5)', endpoint: 'query', params: { query: 'count(bench_gauge > 0.5)', time: at(TEND) } },
  {
    name: 'avg_over_time(gauge{job="job-7"}[10m]) 1h/60s',
    endpoint: 'query_range',
    params: { query: 'avg_over_time(bench_gauge{job="job-7"}[10m])', start: at(T0 + 10 * 60_000), end: at(TEND), step: '60' },
  },
  { name: 'requests_total{instance="i-42"} (1 series)', endpoint: 'query', params: { query: 'bench_requests_total{instance="i-42"}', time: at(TEND) } },
  {
    name: 'rate(requests_total{job="job-3"}[1m]) 1h/15s',
    endpoint: 'query_range',
    params: { query: 'rate(bench_requests_total{job="job-3"}[1m])', start: at(T0 + 5 * 60_000), end: at(TEND), step: '15' },
  },
];

function* batches(): Generator<SeriesInput[]> {
  const samples = SPAN / INTERVAL + 1;
  for (let first = 0; first < SERIES; first += BATCH_SERIES) {
    const batch: SeriesInput[] = [];
    for (let s = first; s < Math.min(SERIES, first + BATCH_SERIES); s++) {
      const counter = s % 2 === 0;
      const labels = [
        { name: '__name__', value: counter ? 'bench_requests_total' : 'bench_gauge' },
        { name: 'instance', value: `i-${Math.floor(s / 2)}` },
        { name: 'job', value: `job-${Math.floor(s / 2) % JOBS}` },
      ];
      let v = 0;
      batch.push({
        labels,
        samples: Array.from({ length: samples }, (_, i) => {
          v = counter ? v + ((s * 7 + i * 13) % 10) : ((s * 31 + i * 17) % 100) / 100;
          return { value: v, timestamp: T0 + i * INTERVAL };
        }),
      });
    }
    yield batch;
  }
}

async function post(url: string, body: Uint8Array): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' },
  });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
}

async function query(base: string, endpoint: string, params: Record<string, string>): Promise<{ ms: number; n: number }> {
  const started = performance.now();
  const res = await fetch(`${base}/${endpoint}`, {
    method: 'POST',
    body: new URLSearchParams(params).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  const json = (await res.json()) as { status: string; error?: string; data: { result: unknown[] } };
  const ms = performance.now() - started;
  if (json.status !== 'success') throw new Error(`${base}/${endpoint} ${params.query}: ${json.error}`);
  return { ms, n: json.data.result.length };
}

function percentile(xs: number[], p: number): number {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
}

async function waitUntil(what: string, fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const dir = mkdtempSync(join(tmpdir(), 'strata-bench-'));
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
    `-ingester.max-global-series-per-user=${SERIES * 2}`,
  ],
});
writeFileSync(join(dir, 'prometheus.yml'), 'global: {}\n');
let prometheus: ChildProcess | undefined;
const stop = async () => {
  if (prometheus?.pid !== undefined && prometheus.exitCode === null) process.kill(prometheus.pid, 'SIGKILL');
  if (!STRATA_URL) await strata.kill('SIGTERM');
  if (!KEEP) rmSync(dir, { recursive: true, force: true });
};
try {
  if (!STRATA_URL) strata.start();
  prometheus = spawn(
    'prometheus',
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'prometheus')}`, `--web.listen-address=127.0.0.1:${promPort}`, '--web.enable-remote-write-receiver'],
    { stdio: 'ignore' },
  );
  const promUrl = `http://127.0.0.1:${promPort}`;
  await waitUntil('Prometheus', async () => (await fetch(`${promUrl}/-/ready`)).ok, 60_000);
  if (!STRATA_URL) await strata.waitReady(180_000);
  const strataUrl = STRATA_URL ?? strata.url;

  console.log(`bench: pushing ${SERIES} series × ${SPAN / INTERVAL + 1} samples into Prometheus 2.42 and Strata`);
  const pushStart = Date.now();
  for (const batch of batches()) {
    const body = compressBody(encodeWriteRequest({ timeseries: batch }));
    await Promise.all([post(`${promUrl}/api/v1/write`, body), post(`${strataUrl}/api/v1/push`, body)]);
  }
  console.log(`bench: pushed in ${((Date.now() - pushStart) / 1000).toFixed(0)}s; waiting until Strata has every series`);
  await waitUntil(
    'Strata to hold every series',
    async () => (await query(`${strataUrl}/prometheus/api/v1`, 'query', { query: `count({__name__=~"bench_.*"}) == ${SERIES}`, time: at(TEND) })).n === 1,
    600_000,
  );

  const rows: string[][] = [['query', 'series out', 'Prometheus p50', 'p99', 'Strata p50', 'p99', 'Strata/Prom p50']];
  for (const q of QUERIES) {
    const lat = { prom: [] as number[], strata: [] as number[] };
    let n = 0;
    for (let i = 0; i < RUNS + 2; i++) {
      const p = await query(`${promUrl}/api/v1`, q.endpoint, q.params);
      const s = await query(`${strataUrl}/prometheus/api/v1`, q.endpoint, q.params);
      if (p.n !== s.n) throw new Error(`${q.name}: Prometheus returned ${p.n} series, Strata ${s.n}`);
      n = s.n;
      if (i < 2) continue; // Warm-up runs.
      lat.prom.push(p.ms);
      lat.strata.push(s.ms);
    }
    const f = (x: number) => `${x.toFixed(1)}ms`;
    const pp50 = percentile(lat.prom, 0.5);
    const sp50 = percentile(lat.strata, 0.5);
    rows.push([q.name, String(n), f(pp50), f(percentile(lat.prom, 0.99)), f(sp50), f(percentile(lat.strata, 0.99)), `${(sp50 / pp50).toFixed(2)}×`]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const r of rows) console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '));
  console.log(`bench: ${RUNS} timed runs per query after 2 warm-up runs, queries alternating between the two; data in ${dir}${KEEP ? '' : ' (removed)'}`);
} finally {
  await stop();
}
