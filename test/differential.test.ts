// Strata against a real Prometheus 2.42 on the same data: counters with resets,
// gauges, classic histograms, several jobs and instances, a series ended by a
// staleness marker and one that just stops. Every query runs as a range query
// and as instant queries at times that never coincide with a sample, and the
// answers must agree to 1e-5 relative (NaN equals NaN, same label sets).
//
// Prometheus 2.42 is 2.x: range windows and the lookback are closed at the
// start there, left-open in 3.x. Samples sit half a second past whole 15s
// marks while every evaluation time ends in .123, .456 or .777 s and every
// range, offset and step is whole seconds (so subquery steps land on .000), so
// no window boundary ever lands on a sample and the two semantics give the
// same answer. Also different in 2.x, and so not asked: holt_winters (renamed
// double_exponential_smoothing), functions newer than 2.42, and `atan2` with a
// metric name on its left (2.x keeps the name, 3.x drops it).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { compressBody, encodeWriteRequest, type SeriesInput } from '@strata/remote-write';
import { api, push, waitFor } from './support/client.ts';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const INTERVAL = 15 * S;
const SPAN = 3 * H;
const REL_TOLERANCE = 1e-5;

/** The window every sample falls into: T0 .. T0 + SPAN; samples are 500ms past whole 15s marks. */
const T0 = Math.floor((Date.now() - SPAN - 10 * M) / INTERVAL) * INTERVAL;
const TEND = T0 + SPAN;
/** Evaluation times: never on a sample (those end in .500 s). */
const AT = (ms: number, frac = 123) => Math.floor(ms / S) * S + frac;

describe('differential: Strata vs Prometheus 2.42', { timeout: 900_000 }, () => {
  let dir: string;
  let strata: AppProcess;
  let prometheus: ChildProcess | undefined;
  let promUrl: string;
  let promStderr = '';
  const series = generate();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-diff-'));
    const [strataPort, promPort] = await freePorts(2);
    strata = new AppProcess({
      name: 'strata',
      target: 'all',
      httpPort: strataPort,
      logFile: join(dir, 'strata.log'),
      // The whole data set arrives in seconds; the default ingestion limits are for steady senders.
      args: [
        '-auth.multitenancy-enabled=false',
        `-data-dir=${dir}/data`,
        `-server.http-listen-port=${strataPort}`,
        '-distributor.ingestion-rate-limit=10000000',
        '-distributor.ingestion-burst-size=10000000',
      ],
    });
    strata.start();

    const bin = findPrometheus();
    assert.ok(bin, 'prometheus binary not found: install Debian package "prometheus" (.ci/run does)');
    writeFileSync(join(dir, 'prometheus.yml'), 'global:\n  evaluation_interval: 1m\n');
    promUrl = `http://127.0.0.1:${promPort}`;
    prometheus = spawn(
      bin,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'prometheus')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        '--web.enable-remote-write-receiver',
        '--enable-feature=exemplar-storage',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    prometheus.stderr!.on('data', (d: Buffer) => (promStderr = (promStderr + d.toString()).slice(-4000)));
    await waitFor('Prometheus ready', async () => ((await fetch(`${promUrl}/-/ready`).catch(() => undefined))?.ok ? true : undefined), 60_000).catch(
      (err: Error) => assert.fail(`${err.message}\nprometheus stderr: ${promStderr}`),
    );
    await strata.waitReady(180_000);

    // Both get the same bodies, oldest first: Prometheus' head only accepts samples within an hour of its newest.
    for (const batch of batches(series, 20 * M)) {
      const body = compressBody(encodeWriteRequest({ timeseries: batch }));
      const res = await fetch(`${promUrl}/api/v1/write`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' },
      });
      assert.ok(res.ok, `prometheus remote write: ${res.status} ${await res.text()}`);
      const s = await push(strata.url, batch);
      assert.ok(s.status >= 200 && s.status < 300, `strata push: ${s.status} ${s.body}`);
    }
    // Strata has everything once every sample is queryable (staleness markers do not count).
    const total = String(series.reduce((n, s) => n + s.samples.filter((p) => !p.stale).length, 0));
    const names = [...new Set(series.map((s) => s.labels.find((l) => l.name === '__name__')!.value))];
    const countQuery = names.map((n) => `sum(count_over_time(${n}[4h]))`).join(' + ');
    await waitFor(
      'every pushed sample queryable in Strata',
      async () => {
        const r = await api<{ result: { value: [number, string] }[] }>(strata.url, '/prometheus/api/v1/query', {
          query: countQuery,
          time: String(AT(TEND + M) / 1000),
        });
        if (r.status !== 'success') throw new Error(`${r.errorType}: ${r.error}`);
        return r.data.result[0]?.value[1] === total ? true : undefined;
      },
      120_000,
    );
  });

  after(async () => {
    if (prometheus?.pid !== undefined && prometheus.exitCode === null) process.kill(prometheus.pid, 'SIGKILL');
    await strata?.kill('SIGTERM');
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('the same answers to every query, as range and instant queries', async () => {
    // No window reaches back before the first sample: where a counter starts inside the window, 2.x
    // clamps the extrapolation to the counter's zero point before the half-interval rule, 3.x after.
    const range = { start: AT(T0 + 45 * M, 777), end: AT(TEND - 2 * M, 777), step: 61 * S };
    const instants = [AT(T0 + 47 * M), AT(T0 + 90 * M + 7 * S, 777), AT(TEND - 3 * M + 11 * S)];
    const queries = QUERIES.map((q) => q.replaceAll('$AT', (AT(T0 + 75 * M, 456) / 1000).toFixed(3)));
    const differences: string[] = [];
    let comparisons = 0;
    let nonEmpty = 0;
    const record = (r: { diffs: string[]; empty: boolean }) => {
      differences.push(...r.diffs);
      comparisons++;
      if (!r.empty) nonEmpty++;
    };
    for (const query of queries) {
      const rangeParams = { query, start: String(range.start / 1000), end: String(range.end / 1000), step: String(range.step / 1000) };
      record(await compare(query, 'query_range', rangeParams));
      for (const t of instants) record(await compare(query, 'query', { query, time: String(t / 1000) }));
    }
    console.log(
      `differential: ${queries.length} queries, ${comparisons} comparisons (1 range + ${instants.length} instant each, ` +
        `${nonEmpty} with a non-empty answer) against Prometheus 2.42; ${differences.length} differences`,
    );
    assert.ok(queries.length >= 50);
    // Comparing empty answers proves little: nearly every comparison must have data.
    assert.ok(nonEmpty >= comparisons * 0.9, `only ${nonEmpty} of ${comparisons} comparisons had data`);
    assert.deepEqual(differences, []);
  });

  test('exemplars agree with Prometheus; metadata comes back as sent', async () => {
    // Counter samples with trace exemplars on two instances, and metadata for a family.
    const exemplarSeries: SeriesInput[] = ['i0', 'i1'].map((instance, k) => ({
      labels: [
        { name: '__name__', value: 'traced_requests_total' },
        { name: 'instance', value: instance },
        { name: 'job', value: 'api' },
      ],
      samples: Array.from({ length: 5 }, (_, i) => ({ value: 10 * i + k, timestamp: TEND - 10 * M + 500 + i * 60_000 })),
      exemplars: Array.from({ length: 3 }, (_, i) => ({
        labels: [{ name: 'trace_id', value: `trace-${instance}-${i}` }],
        value: 0.25 * (i + 1),
        timestamp: TEND - 10 * M + 500 + i * 60_000,
      })),
    }));
    const body = compressBody(
      encodeWriteRequest({
        timeseries: exemplarSeries,
        metadata: [{ type: 'counter', metricFamilyName: 'traced_requests_total', help: 'Requests with traces.', unit: '' }],
      }),
    );
    const headers = { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' };
    const res = await fetch(`${promUrl}/api/v1/write`, { method: 'POST', body, headers });
    assert.ok(res.ok, `prometheus remote write: ${res.status}`);
    const pushed = await fetch(`${strata.url}/api/v1/push`, { method: 'POST', body, headers });
    assert.ok(pushed.ok, `strata push: ${pushed.status} ${await pushed.text()}`);

    const params = { query: 'sum(rate(traced_requests_total{job="api"}[5m]))', start: String((TEND - 20 * M) / 1000), end: String((TEND + M) / 1000) };
    type ExemplarData = { seriesLabels: Record<string, string>; exemplars: { labels: Record<string, string>; value: string; timestamp: number }[] }[];
    const norm = (d: ExemplarData) =>
      d
        .map((x) => ({ series: key(x.seriesLabels), exemplars: x.exemplars.map((e) => [key(e.labels), e.value, e.timestamp]) }))
        .sort((a, b) => (a.series < b.series ? -1 : 1));
    const p = await api<ExemplarData>(promUrl, '/api/v1/query_exemplars', params);
    const strataExemplars = await waitFor('exemplars in Strata', async () => {
      const r = await api<ExemplarData>(strata.url, '/prometheus/api/v1/query_exemplars', params);
      return r.data.length === 2 ? r : undefined;
    });
    assert.equal(p.data.length, 2, JSON.stringify(p));
    assert.deepEqual(norm(strataExemplars.data), norm(p.data));

    const meta = await api<Record<string, { type: string; help: string; unit: string }[]>>(strata.url, '/prometheus/api/v1/metadata', {
      metric: 'traced_requests_total',
    });
    assert.deepEqual(meta.data, { traced_requests_total: [{ type: 'counter', help: 'Requests with traces.', unit: '' }] });
  });

  test("Grafana's metadata calls agree: labels, label values and series with match[]", async () => {
    const window = { start: String(T0 / 1000), end: String((TEND + M) / 1000) };
    const calls: [string, Record<string, string | string[]>][] = [
      ['/api/v1/labels', window],
      ['/api/v1/labels', { ...window, 'match[]': 'http_requests_total' }],
      ['/api/v1/label/__name__/values', window],
      ['/api/v1/label/instance/values', { ...window, 'match[]': 'up{job="db"}' }],
      ['/api/v1/series', { ...window, 'match[]': ['up', 'target_info{job=~"api|cache"}'] }],
    ];
    for (const [path, params] of calls) {
      const [p, s] = await Promise.all([
        api<unknown[]>(promUrl, path, params),
        // Label values is GET-only in Prometheus' API; the others take POST forms too.
        api<unknown[]>(strata.url, `/prometheus${path}`, params, { method: path.includes('/label/') ? 'GET' : 'POST' }),
      ]);
      assert.equal(p.status, 'success', `${path}: ${p.error}`);
      assert.equal(s.status, 'success', `${path}: ${s.error}`);
      const norm = (d: unknown[]) => d.map((x) => (typeof x === 'string' ? x : key(x as Record<string, string>))).sort();
      assert.deepEqual(norm(s.data), norm(p.data), path);
      assert.ok(p.data.length > 0, `${path} returned data`);
    }
  });

  async function compare(query: string, endpoint: 'query' | 'query_range', params: Record<string, string>): Promise<{ diffs: string[]; empty: boolean }> {
    const [p, s] = await Promise.all([
      api<Data>(promUrl, `/api/v1/${endpoint}`, params),
      api<Data>(strata.url, `/prometheus/api/v1/${endpoint}`, params, { method: 'POST' }),
    ]);
    const where = `${endpoint} ${JSON.stringify(query)}${params.time ? ` @${params.time}` : ''}`;
    const fail = (d: string) => ({ diffs: [d], empty: false });
    if (p.status !== s.status) return fail(`${where}: Prometheus ${p.status} ${p.error ?? ''}, Strata ${s.status} ${s.error ?? ''}`);
    if (p.status === 'error') return p.errorType === s.errorType ? { diffs: [], empty: true } : fail(`${where}: error types ${p.errorType} vs ${s.errorType}`);
    if (p.data.resultType !== s.data.resultType) return fail(`${where}: result types ${p.data.resultType} vs ${s.data.resultType}`);
    const empty = Array.isArray(p.data.result) && p.data.result.length === 0;
    return { diffs: diffData(where, p.data, s.data, /^sort/.test(query) && endpoint === 'query'), empty };
  }
});

// --- Comparing results ---------------------------------------------------------------

type Point = [number, string];
type Data =
  | { resultType: 'vector'; result: { metric: Record<string, string>; value: Point }[] }
  | { resultType: 'matrix'; result: { metric: Record<string, string>; values: Point[] }[] }
  | { resultType: 'scalar' | 'string'; result: Point };

function sameValue(a: string, b: string): boolean {
  if (a === b) return true;
  const x = Number(a === '+Inf' ? Infinity : a === '-Inf' ? -Infinity : a);
  const y = Number(b === '+Inf' ? Infinity : b === '-Inf' ? -Infinity : b);
  if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) && Number.isNaN(y);
  if (!Number.isFinite(x) || !Number.isFinite(y)) return x === y;
  return Math.abs(x - y) <= REL_TOLERANCE * Math.max(Math.abs(x), Math.abs(y)) || Math.abs(x - y) < 1e-12;
}

const key = (m: Record<string, string>) => JSON.stringify(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : 1)));

function diffData(where: string, p: Data, s: Data, ordered: boolean): string[] {
  const out: string[] = [];
  if (p.resultType === 'scalar' || p.resultType === 'string') {
    const sp = (s as typeof p).result;
    if (p.result[0] !== sp[0] || !sameValue(p.result[1], sp[1])) out.push(`${where}: ${JSON.stringify(p.result)} vs ${JSON.stringify(sp)}`);
    return out;
  }
  const points = (r: Data) =>
    new Map(
      (r.result as ({ metric: Record<string, string> } & ({ value: Point } | { values: Point[] }))[]).map((x) => [
        key(x.metric),
        'values' in x ? x.values : [x.value],
      ]),
    );
  const pm = points(p);
  const sm = points(s);
  for (const k of pm.keys()) if (!sm.has(k)) out.push(`${where}: series ${k} only in Prometheus`);
  for (const k of sm.keys()) if (!pm.has(k)) out.push(`${where}: series ${k} only in Strata`);
  for (const [k, pv] of pm) {
    const sv = sm.get(k);
    if (!sv) continue;
    if (pv.length !== sv.length) {
      out.push(`${where}: ${k} has ${pv.length} points in Prometheus, ${sv.length} in Strata`);
      continue;
    }
    for (let i = 0; i < pv.length; i++) {
      if (pv[i][0] !== sv[i][0] || !sameValue(pv[i][1], sv[i][1])) {
        out.push(`${where}: ${k} at ${pv[i][0]}: ${pv[i][1]} vs ${sv[i][0]} ${sv[i][1]}`);
        break;
      }
    }
  }
  if (ordered && out.length === 0) {
    const order = (r: Data) => (r.result as { metric: Record<string, string> }[]).map((x) => key(x.metric)).join('|');
    if (order(p) !== order(s)) out.push(`${where}: order differs`);
  }
  return out.slice(0, 5);
}

// --- The queries -----------------------------------------------------------------------

const QUERIES = [
  // Selectors, offsets, @, staleness.
  'http_requests_total',
  'http_requests_total{code="500", method!="POST"}',
  '{__name__=~"memory_.*", job=~"api|db"}',
  'memory_bytes offset 10m',
  'temperature_celsius offset -7m',
  'http_requests_total @ $AT',
  'rate(http_requests_total[5m] @ $AT)',
  'stale_gauge',
  'gone_gauge',
  'last_over_time(stale_gauge[10m])',
  'count_over_time(stale_gauge[10m])',
  'absent_over_time(stale_gauge[5m])',
  // Counters.
  'rate(http_requests_total[5m])',
  'irate(http_requests_total[2m])',
  'increase(http_requests_total[10m])',
  'resets(http_requests_total[30m])',
  'changes(up[30m])',
  'rate(http_requests_total[5m] offset 30m)',
  // Gauges.
  'delta(temperature_celsius[10m])',
  'idelta(temperature_celsius[5m])',
  'deriv(memory_bytes[10m])',
  'predict_linear(memory_bytes[15m], 3600)',
  'avg_over_time(temperature_celsius[10m])',
  'min_over_time(temperature_celsius[7m])',
  'max_over_time(memory_bytes[13m])',
  'sum_over_time(up[10m])',
  'quantile_over_time(0.9, temperature_celsius[20m])',
  'stddev_over_time(temperature_celsius[30m])',
  'stdvar_over_time(memory_bytes[30m])',
  'present_over_time(gone_gauge[10m])',
  // Classic histograms.
  'histogram_quantile(0.9, sum by (le, job) (rate(request_duration_seconds_bucket[5m])))',
  'histogram_quantile(0.5, rate(request_duration_seconds_bucket[10m]))',
  'histogram_quantile(0.99, sum by (le) (increase(request_duration_seconds_bucket[30m])))',
  'rate(request_duration_seconds_sum[5m]) / rate(request_duration_seconds_count[5m])',
  'count by (le) (request_duration_seconds_bucket)',
  // Aggregations.
  'sum by (job) (rate(http_requests_total[5m]))',
  'sum without (instance, method) (rate(http_requests_total[5m]))',
  'avg by (job) (temperature_celsius)',
  'max by (instance) (memory_bytes)',
  'min without (job) (temperature_celsius)',
  'count(up == 1)',
  'group by (job) (memory_bytes)',
  'stddev(temperature_celsius)',
  'stdvar by (job) (memory_bytes)',
  'topk(3, rate(http_requests_total[5m]))',
  'bottomk by (job) (1, memory_bytes)',
  'quantile(0.75, temperature_celsius)',
  'quantile by (job) (0.25, memory_bytes)',
  'count_values("reading", floor(temperature_celsius))',
  // Binary operators and matching.
  'rate(http_requests_total{code="500"}[5m]) / ignoring(code) rate(http_requests_total{code="200"}[5m])',
  'rate(http_requests_total[5m]) * on(job, instance) group_left up',
  'memory_bytes * on(job, instance) group_left(version) target_info',
  'sum by (job, instance) (rate(http_requests_total[5m])) / on(job, instance) memory_bytes * 1e9',
  'memory_bytes > 6e8',
  'temperature_celsius > bool 21',
  'up == bool 0',
  'sum by (job) (rate(http_requests_total[5m])) > bool 1',
  'memory_bytes and on(instance) temperature_celsius > 22',
  'up or on() vector(0)',
  'memory_bytes unless on(job, instance) temperature_celsius < 20',
  '-memory_bytes % 7 + 2 ^ 3',
  '(temperature_celsius - 20) atan2 10',
  // Subqueries.
  'max_over_time(rate(http_requests_total[1m])[10m:30s])',
  'avg_over_time(temperature_celsius[20m:1m])',
  'min_over_time(sum by (job) (rate(http_requests_total[2m]))[30m:])',
  'rate(sum by (job) (http_requests_total)[15m:45s])',
  // Functions.
  'absent(nonexistent_metric{job="x"})',
  'absent(up)',
  'label_replace(up, "host", "$1", "instance", "i(.*)")',
  'label_join(up, "target", "/", "job", "instance")',
  'sort(memory_bytes)',
  'sort_desc(temperature_celsius)',
  'clamp(temperature_celsius, 18, 25)',
  'clamp_min(temperature_celsius, 21) + clamp_max(temperature_celsius, 19)',
  'round(temperature_celsius, 0.5)',
  'abs(delta(temperature_celsius[5m]))',
  'sgn(deriv(temperature_celsius[5m]))',
  'ceil(temperature_celsius) - floor(temperature_celsius)',
  'sqrt(memory_bytes) + ln(memory_bytes) + log2(memory_bytes) + log10(memory_bytes)',
  'exp(temperature_celsius / 10)',
  'time()',
  'timestamp(up)',
  'vector(time()) - on() group_right timestamp(up)',
  'hour(timestamp(up)) + minute(timestamp(up)) / 60',
  'day_of_week() + day_of_month() + days_in_month() + month() + year()',
  'scalar(sum(up))',
  'up * scalar(count(up))',
  'sum(rate(http_requests_total[5m])) + vector(1)',
];

// --- The data --------------------------------------------------------------------------

function generate(): SeriesInput[] {
  const rand = mulberry32(42);
  const n = SPAN / INTERVAL + 1;
  const ts = (i: number) => T0 + 500 + i * INTERVAL;
  const out: SeriesInput[] = [];
  const add = (labels: Record<string, string>, value: (i: number) => number | 'stale' | undefined) => {
    const samples: SeriesInput['samples'] = [];
    for (let i = 0; i < n; i++) {
      const v = value(i);
      if (v === undefined) continue;
      samples.push(v === 'stale' ? { value: NaN, timestamp: ts(i), stale: true } : { value: v, timestamp: ts(i) });
    }
    out.push({
      labels: Object.entries(labels)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, value]) => ({ name, value })),
      samples,
    });
  };
  const buckets = ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '+Inf'];
  for (const job of ['api', 'db', 'cache']) {
    for (let inst = 0; inst < 4; inst++) {
      const base = { job, instance: `i${inst}` };
      // An instance restarts (its counters reset) every so often.
      const restartEvery = 180 + inst * 97 + job.length * 13;
      for (const method of ['GET', 'POST']) {
        for (const code of ['200', '500']) {
          let c = rand() * 1000;
          const rate = (code === '200' ? 20 : 1) * (method === 'GET' ? 3 : 1) * (1 + rand());
          add({ __name__: 'http_requests_total', ...base, method, code }, (i) => {
            if (i > 0 && i % restartEvery === 0) c = rand() * 5;
            else c += rate * (0.5 + rand());
            return Math.round(c * 100) / 100;
          });
        }
      }
      let mem = 4e8 + rand() * 4e8;
      add({ __name__: 'memory_bytes', ...base }, () => (mem += (rand() - 0.45) * 1e6));
      let temp = 18 + rand() * 6;
      add({ __name__: 'temperature_celsius', ...base }, () => (temp = Math.min(30, Math.max(15, temp + (rand() - 0.5) * 0.8))));
      add({ __name__: 'up', ...base }, (i) => ((i + inst * 7) % 97 < 3 ? 0 : 1));
      add({ __name__: 'target_info', ...base, version: `1.${inst}.0` }, () => 1);
      // A classic histogram, reset with the instance.
      const counts = new Array<number>(buckets.length).fill(0);
      let sum = 0;
      const hist: number[][] = [];
      const sums: number[] = [];
      for (let i = 0; i < n; i++) {
        if (i > 0 && i % restartEvery === 0) {
          counts.fill(0);
          sum = 0;
        }
        const observations = Math.floor(rand() * 20);
        for (let o = 0; o < observations; o++) {
          const v = Math.exp(rand() * 6 - 6) * (job === 'db' ? 3 : 1);
          sum += v;
          for (let b = 0; b < buckets.length; b++) if (b === buckets.length - 1 || v <= Number(buckets[b])) counts[b]++;
        }
        hist.push([...counts]);
        sums.push(sum);
      }
      buckets.forEach((le, b) => add({ __name__: 'request_duration_seconds_bucket', ...base, le }, (i) => hist[i][b]));
      add({ __name__: 'request_duration_seconds_sum', ...base }, (i) => sums[i]);
      add({ __name__: 'request_duration_seconds_count', ...base }, (i) => hist[i][buckets.length - 1]);
    }
  }
  // Ends with a staleness marker an hour in; and one that simply stops after two hours.
  add({ __name__: 'stale_gauge', job: 'api' }, (i) => (i < 240 ? 10 + (i % 7) : i === 240 ? 'stale' : undefined));
  add({ __name__: 'gone_gauge', job: 'db' }, (i) => (i < 480 ? i / 3 : undefined));
  return out;
}

/** The series cut into time slices of `sliceMs`, oldest first (each slice holds every series' samples in it). */
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

function findPrometheus(): string | undefined {
  for (const p of ['/usr/bin/prometheus', '/usr/local/bin/prometheus']) if (existsSync(p)) return p;
  const r = spawnSync('which', ['prometheus']);
  return r.status === 0 ? r.stdout.toString().trim() : undefined;
}
