// Strata against a real Prometheus 3 where values tie and order matters
// (issue 42): gauges and counters that hold equal values at many steps, with
// NaN, ±Inf and -0 among them, asked with topk, bottomk, limitk, limit_ratio,
// sort, sort_desc, sort_by_label(_desc), quantile and count_values, with and
// without by/without, as range queries and as instant queries, from the single
// process and from the multi-process layout (two partitions, two zones) before
// and after the ingesters flushed their heads to blocks (so the querier merges
// ingesters and the bucket). Instant answers must be equal in order, range
// answers point for point; values exactly.
//
// Prometheus' input order is its storage's: a merge of several readers comes
// sorted by labels, a lone head gives its series in creation order. Every
// series gets its first sample in the first remote-write request, in label
// order, so both are the same order here. Queries whose Prometheus answer is
// not deterministic are not asked: a range query's function and operator
// outputs come out of a Go map (so topk over `x * 2` is instant-only here),
// and count_values' instant output is in Go map order (compared as a set).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, LocalCluster, freePorts } from '@strata/local-cluster';
import { compareLabels, labelsFromRecord } from '@strata/model';
import { compressBody, encodeWriteRequest, type SeriesInput } from '@strata/remote-write';
import { api, push, waitFor } from './support/client.ts';
import { startPrometheus3, type Prometheus3 } from './support/prometheus3.ts';

const S = 1000;
const M = 60 * S;
const INTERVAL = 15 * S;
const SPAN = 60 * M;
/** Samples sit on whole 15s marks; evaluation times fall half-way between them. */
const T0 = Math.floor((Date.now() - SPAN - 5 * M) / INTERVAL) * INTERVAL;
const TEND = T0 + SPAN;
const RANGE = { start: T0 + 6 * M + 7_500, end: TEND - 7_500, step: 30 * S };
const INSTANTS = [7, 12, 19, 26, 33, 41, 48, 55].map((m) => T0 + m * M + 7_500);

/** Gauge values: few distinct ones, so most steps have ties; NaN, ±Inf and -0 among them. */
const POOL = [0, 1, 1, 2, 2, 2, 5, NaN, Infinity, -Infinity, -0];
/** sort_by_label's natural order finds "1" and "01" each before the other. */
const TIERS = ['1', '01', '2', '10', 'a1', 'a01'];

const LIMITS = ['-distributor.ingestion-rate-limit=10000000', '-distributor.ingestion-burst-size=10000000'];
const EXPERIMENTAL = '-querier.promql-experimental-functions-enabled=true';

/** Asked as range and as instant queries. */
const QUERIES = [
  // topk / bottomk: the heap keeps ties met first until a strictly better value evicts its top.
  'topk(1, tie_gauge)',
  'topk(2, tie_gauge)',
  'topk(5, tie_gauge)',
  'topk(30, tie_gauge)',
  'topk by (job) (2, tie_gauge)',
  'topk without (instance) (2, tie_gauge)',
  'topk without (instance, tier) (3, tie_gauge)',
  'topk(7, tie_wide)',
  'topk(2, rate(tie_requests_total[5m]))',
  'topk by (job) (1, increase(tie_requests_total[10m]))',
  'bottomk(1, tie_gauge)',
  'bottomk(3, tie_gauge)',
  'bottomk by (job) (2, tie_gauge)',
  'bottomk without (instance) (4, tie_gauge)',
  'bottomk(9, tie_wide)',
  'bottomk(3, rate(tie_requests_total[5m]))',
  // limitk / limit_ratio: the first k or the hash's pick, in the heap's order.
  'limitk(3, tie_gauge)',
  'limitk by (job) (2, tie_gauge)',
  'limitk without (instance) (1, tie_gauge)',
  'limitk(10, tie_wide)',
  'limit_ratio(0.5, tie_gauge)',
  'limit_ratio(-0.4, tie_gauge)',
  'limit_ratio by (job) (0.3, tie_gauge)',
  'limit_ratio(0.7, rate(tie_requests_total[5m]))',
  // sort, sort_desc, sort_by_label(_desc): Go's unstable sort on ties; natsort's "01" vs "1".
  'sort(tie_gauge)',
  'sort_desc(tie_gauge)',
  'sort(tie_wide)',
  'sort_desc(tie_wide)',
  'sort(rate(tie_requests_total[5m]))',
  'sort_desc(increase(tie_requests_total[10m]))',
  'sort_by_label(tie_gauge, "tier")',
  'sort_by_label_desc(tie_gauge, "tier", "job")',
  'sort_by_label(tie_wide, "shard")',
  'sort_by_label_desc(tie_gauge, "instance")',
  // quantile: Go's sort of the values, NaN and -0 among them.
  'quantile(0.5, tie_gauge)',
  'quantile(0, tie_gauge)',
  'quantile(1, tie_gauge)',
  'quantile by (job) (0.25, tie_gauge)',
  'quantile without (instance) (0.9, tie_gauge)',
  'quantile(0.3, tie_wide)',
  'quantile(0.75, tie_wide)',
  'quantile(0.5, rate(tie_requests_total[5m]))',
  // count_values: the value as a label (NaN, +Inf, -Inf, -0 too).
  'count_values("value", tie_gauge)',
  'count_values by (job) ("value", tie_gauge)',
  'count_values without (instance) ("value", tie_gauge)',
  'count_values("rate", rate(tie_requests_total[5m]))',
];

/** Asked as instant queries only: their input comes from a function or operator (Go-map order in a range query). */
const INSTANT_ONLY = [
  'sort_desc(topk(4, tie_gauge))',
  'topk(3, sort(tie_gauge))',
  'bottomk(2, sort_desc(tie_wide))',
  'topk(2, tie_gauge * 2)',
  'limitk(4, sort_by_label(tie_gauge, "tier"))',
  'quantile(0.5, sort_desc(tie_wide))',
];

describe('differential: Strata vs Prometheus 3 where values tie and order matters', { timeout: 1_500_000 }, () => {
  let dir: string;
  let prometheus: Prometheus3 | undefined;
  let promUrl: string;
  const series = generate();
  const total = String(series.reduce((n, s) => n + s.samples.length, 0));

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-ties-'));
    prometheus = await startPrometheus3(
      dir,
      ['--web.enable-remote-write-receiver', '--enable-feature=promql-experimental-functions'],
      'global:\n  evaluation_interval: 1m\n',
    );
    promUrl = prometheus.url;
    for (const batch of batches(series, 15 * M)) await remoteWrite(promUrl, batch);
  });

  after(() => {
    prometheus?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('single process: the same series in the same order', async () => {
    const [port] = await freePorts(1);
    const strata = new AppProcess({
      name: 'strata',
      target: 'all',
      httpPort: port,
      logFile: join(dir, 'strata.log'),
      args: ['-auth.multitenancy-enabled=false', `-data-dir=${dir}/single`, `-server.http-listen-port=${port}`, EXPERIMENTAL, ...LIMITS],
    });
    strata.start();
    try {
      await strata.waitReady(180_000);
      for (const batch of batches(series, 15 * M)) await pushOk(strata.url, batch);
      await waitAllQueryable(strata.url, total);
      assertNoDifferences('single process', await compareAll(promUrl, strata.url));
    } finally {
      await strata.kill('SIGTERM');
    }
  });

  test('multi-process: two partitions in two zones, from the heads and then from blocks', async () => {
    const single = ['-auth.multitenancy-enabled=false'];
    const cluster = await LocalCluster.start({
      dataDir: join(dir, 'cluster'),
      partitions: 2,
      extraArgs: {
        distributor: [...single, ...LIMITS],
        querier: [...single, EXPERIMENTAL, '-querier.query-store-after=0s', '-blocks-storage.bucket-store.sync-interval=1s'],
      },
    });
    try {
      for (const batch of batches(series, 15 * M)) await pushOk(cluster.distributorUrl, batch);
      await waitAllQueryable(cluster.querierUrl, total);
      assertNoDifferences('multi-process, heads', await compareAll(promUrl, cluster.querierUrl));
      await flushToBlocks(cluster, join(dir, 'cluster', 'bucket', 'anonymous'));
      assertNoDifferences('multi-process, blocks', await compareAll(promUrl, cluster.querierUrl));
    } finally {
      await cluster.stop();
    }
  });
});

// --- Loading and waiting ----------------------------------------------------------------

async function remoteWrite(url: string, batch: SeriesInput[]): Promise<void> {
  const res = await fetch(`${url}/api/v1/write`, {
    method: 'POST',
    body: compressBody(encodeWriteRequest({ timeseries: batch })),
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' },
  });
  assert.ok(res.ok, `prometheus remote write: ${res.status} ${await res.text()}`);
}

async function pushOk(url: string, batch: SeriesInput[]): Promise<void> {
  const res = await push(url, batch);
  assert.ok(res.status >= 200 && res.status < 300, `strata push: ${res.status} ${res.body}`);
}

/** Strata has everything once every pushed sample counts in count_over_time. */
async function waitAllQueryable(url: string, total: string): Promise<void> {
  const query = ['tie_gauge', 'tie_wide', 'tie_requests_total'].map((n) => `sum(count_over_time(${n}[2h]))`).join(' + ');
  await waitFor(
    'every pushed sample queryable in Strata',
    async () => {
      const r = await api<{ result: { value: [number, string] }[] }>(url, '/prometheus/api/v1/query', { query, time: String((TEND + M) / 1000) });
      if (r.status !== 'success') throw new Error(`${r.errorType}: ${r.error}`);
      return r.data.result[0]?.value[1] === total ? true : undefined;
    },
    120_000,
  );
}

/** Every ingester cuts its head into a block and ships it; then the querier's bucket store has synced them. */
async function flushToBlocks(cluster: LocalCluster, tenantDir: string): Promise<void> {
  for (const ingester of cluster.ingesters()) {
    const res = await fetch(`${ingester.url}/ingester/flush?wait=true`, { method: 'POST', signal: AbortSignal.timeout(120_000) });
    assert.equal(res.status, 204, await res.text());
  }
  const shipped = () => (existsSync(tenantDir) ? readdirSync(tenantDir).filter((n) => existsSync(join(tenantDir, n, 'meta.json'))).length : 0);
  await waitFor('the ingesters’ blocks in the bucket', async () => (shipped() >= cluster.ingesters().length ? true : undefined), 120_000);
  // The store syncs every second; give it a few.
  await new Promise((r) => setTimeout(r, 5_000));
}

// --- Comparing ---------------------------------------------------------------------------

interface Outcome {
  comparisons: number;
  nonEmpty: number;
  differences: string[];
}

function assertNoDifferences(layout: string, o: Outcome): void {
  console.log(`promql ties, ${layout}: ${o.comparisons} comparisons (${o.nonEmpty} non-empty) against Prometheus 3; ${o.differences.length} differences`);
  assert.ok(o.nonEmpty >= o.comparisons * 0.95, `only ${o.nonEmpty} of ${o.comparisons} comparisons had data`);
  assert.deepEqual(o.differences, []);
}

async function compareAll(promUrl: string, strataUrl: string): Promise<Outcome> {
  const o: Outcome = { comparisons: 0, nonEmpty: 0, differences: [] };
  const record = (r: { diffs: string[]; empty: boolean }) => {
    o.comparisons++;
    if (!r.empty) o.nonEmpty++;
    o.differences.push(...r.diffs);
  };
  const seconds = (ms: number) => String(ms / 1000);
  for (const query of QUERIES) {
    record(await compare(promUrl, strataUrl, query, 'query_range', { query, start: seconds(RANGE.start), end: seconds(RANGE.end), step: seconds(RANGE.step) }));
  }
  for (const query of [...QUERIES, ...INSTANT_ONLY]) {
    for (const t of INSTANTS) record(await compare(promUrl, strataUrl, query, 'query', { query, time: seconds(t) }));
  }
  return o;
}

type Point = [number, string];
type Data =
  | { resultType: 'vector'; result: { metric: Record<string, string>; value: Point }[] }
  | { resultType: 'matrix'; result: { metric: Record<string, string>; values: Point[] }[] }
  | { resultType: 'scalar' | 'string'; result: Point };

async function compare(
  promUrl: string,
  strataUrl: string,
  query: string,
  endpoint: 'query' | 'query_range',
  params: Record<string, string>,
): Promise<{ diffs: string[]; empty: boolean }> {
  const [p, s] = await Promise.all([
    api<Data>(promUrl, `/api/v1/${endpoint}`, params),
    api<Data>(strataUrl, `/prometheus/api/v1/${endpoint}`, params, { method: 'POST' }),
  ]);
  const where = `${endpoint} ${JSON.stringify(query)}${params.time ? ` @${params.time}` : ''}`;
  if (p.status !== 'success' || s.status !== 'success') {
    return { diffs: [`${where}: Prometheus ${p.status} ${p.error ?? ''}, Strata ${s.status} ${s.error ?? ''}`], empty: false };
  }
  const pr = rows(p.data);
  const sr = rows(s.data);
  // count_values' instant order is a Go map's in Prometheus: only the set is defined.
  const ordered = !query.startsWith('count_values');
  const [pw, sw] = ordered ? [pr, sr] : [pr.slice().sort(), sr.slice().sort()];
  const diffs: string[] = [];
  if (p.data.resultType !== s.data.resultType) diffs.push(`${where}: result types ${p.data.resultType} vs ${s.data.resultType}`);
  else if (pw.join('\n') !== sw.join('\n')) diffs.push(`${where}:\n  Prometheus ${pw.join('\n             ')}\n  Strata     ${sw.join('\n             ')}`);
  return { diffs, empty: pr.length === 0 };
}

/** One line per result series: its labels, then its points, in the answer's order. */
function rows(d: Data): string[] {
  const labels = (m: Record<string, string>) => JSON.stringify(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : 1)));
  switch (d.resultType) {
    case 'vector':
      return d.result.map((r) => `${labels(r.metric)} ${r.value[1]}@${r.value[0]}`);
    case 'matrix':
      return d.result.map((r) => `${labels(r.metric)} ${r.values.map(([t, v]) => `${v}@${t}`).join(' ')}`);
    default:
      return [JSON.stringify(d.result)];
  }
}

// --- The data ----------------------------------------------------------------------------

function generate(): SeriesInput[] {
  const rand = mulberry32(42);
  const n = SPAN / INTERVAL + 1;
  const pick = () => POOL[Math.floor(rand() * POOL.length)];
  const out: { labels: Record<string, string>; values: number[] }[] = [];
  const add = (labels: Record<string, string>, values: number[]) => out.push({ labels, values });
  for (const job of ['api', 'db', 'web']) {
    // Every fourth step the whole job holds one value; otherwise each series draws its own.
    const shared = Array.from({ length: n }, pick);
    for (let i = 0; i < 6; i++) {
      add(
        { __name__: 'tie_gauge', job, instance: `i${i}`, tier: TIERS[i] },
        Array.from({ length: n }, (_, k) => (k % 4 === 0 ? shared[k] : pick())),
      );
    }
  }
  const wide = [1, 2, 2, 3, NaN];
  for (let i = 0; i < 64; i++)
    add(
      { __name__: 'tie_wide', shard: String(i).padStart(2, '0') },
      Array.from({ length: n }, () => wide[Math.floor(rand() * wide.length)]),
    );
  addCounters(add, n, rand);
  return out
    .map(({ labels, values }) => ({ labels: labelsFromRecord(labels), samples: values.map((value, k) => ({ value, timestamp: T0 + k * INTERVAL })) }))
    .sort((a, b) => compareLabels(a.labels, b.labels));
}

/** Counters in two profiles: series of one profile hold identical values, so their rates tie exactly; one has NaNs, one resets. */
function addCounters(add: (labels: Record<string, string>, values: number[]) => void, n: number, rand: () => number): void {
  const profiles = [0, 1].map(() => {
    let c = 100;
    return Array.from({ length: n }, () => (c += rand() < 0.3 ? 0 : Math.floor(rand() * 4) * 15));
  });
  for (const job of ['api', 'db', 'web']) {
    for (let i = 0; i < 4; i++) {
      let values = profiles[i % 2];
      if (job === 'db' && i === 3) values = values.map((v, k) => (k % 37 === 5 ? NaN : v));
      if (job === 'web' && i === 2) values = values.map((v, k) => (k >= n / 2 ? v - values[Math.floor(n / 2)] : v));
      add({ __name__: 'tie_requests_total', job, instance: `i${i}` }, values);
    }
  }
}

/** The series cut into time slices of `sliceMs`, oldest first; the first slice holds every series, in label order. */
function* batches(series: SeriesInput[], sliceMs: number): Generator<SeriesInput[]> {
  for (let from = T0; from <= TEND; from += sliceMs) {
    const batch = series
      .map((s) => ({ labels: s.labels, samples: s.samples.filter((p) => p.timestamp >= from && p.timestamp < from + sliceMs) }))
      .filter((s) => s.samples.length > 0);
    if (batch.length > 0) yield batch;
  }
}

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
