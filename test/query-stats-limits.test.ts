// Query insight and per-tenant query limits against the real processes: a query-scheduler, a
// query-frontend and a single process whose querier pulls work from the scheduler, with a
// runtime overrides file. stats=all answers Prometheus 3.16's shape (the same keys and the same
// sample counts as a Prometheus 3.16 holding the same data, started with promql-per-step-stats),
// directly and through the frontend (with the queue time); each max_fetched_*_per_query refuses
// one tenant's query with 422 naming the limit and its value while a tenant with a higher override
// is answered; max_query_lookback clamps the range instead of refusing; the frontend's slow-query
// line carries the fetched series, samples and chunk bytes; cardinality/active_series is per tenant.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { compressBody, encodeWriteRequest, type SeriesInput } from '@strata/remote-write';
import { api, push, waitFor } from './support/client.ts';
import { startPrometheus3, type Prometheus3 } from './support/prometheus3.ts';
import { startSingleProcess, type SingleProcess } from './support/single-process.ts';

/** Each tenant's overrides: one limit low enough to refuse a 3-series query, or all of them high. */
const OVERRIDES = `overrides:
  small-series: { max_fetched_series_per_query: 2 }
  small-chunks: { max_fetched_chunks_per_query: 2 }
  small-bytes: { max_fetched_chunk_bytes_per_query: 20 }
  short-lookback: { max_query_lookback: 1m }
  big: { max_fetched_series_per_query: 1000, max_fetched_chunks_per_query: 1000, max_fetched_chunk_bytes_per_query: 10000000 }
`;
const TENANTS = ['small-series', 'small-chunks', 'small-bytes', 'short-lookback', 'big'];
const org = (tenant: string) => ({ 'X-Scope-OrgID': tenant });

interface Stats {
  timings: Record<string, number>;
  samples: Record<string, unknown> & { totalQueryableSamples: number; totalQueryableSamplesPerStep?: [number, number][] };
  strata?: Record<string, number>;
}

describe('stats=all and per-tenant query limits, through the query-frontend and directly', { timeout: 300_000 }, () => {
  let dir: string;
  let scheduler: AppProcess;
  let frontend: AppProcess;
  let strata: SingleProcess;
  let prometheus: Prometheus3;
  // Whole seconds, so Prometheus and Strata parse the same times.
  const t0 = Math.floor((Date.now() - 150_000) / 1000) * 1000;
  const end = String((t0 + 8 * 15_000) / 1000);
  const series: SeriesInput[] = ['a', 'b', 'c'].map((instance, i) => ({
    labels: [
      { name: '__name__', value: 'http_requests_total' },
      { name: 'job', value: 'api' },
      { name: 'instance', value: instance },
    ],
    samples: Array.from({ length: 9 }, (_, k) => ({ value: (i + 1) * k * 10, timestamp: t0 + k * 15_000 })),
  }));

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-query-stats-'));
    writeFileSync(join(dir, 'overrides.yaml'), OVERRIDES);
    const [schedHttp, schedGrpc, feHttp, feGrpc] = await freePorts(4);
    scheduler = new AppProcess({
      name: 'query-scheduler',
      target: 'query-scheduler',
      httpPort: schedHttp,
      logFile: join(dir, 'query-scheduler.log'),
      args: [`-server.http-listen-port=${schedHttp}`, `-server.grpc-listen-port=${schedGrpc}`],
    });
    scheduler.start();
    await scheduler.waitReady();
    frontend = new AppProcess({
      name: 'query-frontend',
      target: 'query-frontend',
      httpPort: feHttp,
      logFile: join(dir, 'query-frontend.log'),
      args: [
        `-server.http-listen-port=${feHttp}`,
        `-server.grpc-listen-port=${feGrpc}`,
        `-query-frontend.scheduler-address=127.0.0.1:${schedGrpc}`,
        '-query-frontend.log-queries-longer-than=1ms',
        '-auth.multitenancy-enabled=true',
        `-runtime-config.file=${join(dir, 'overrides.yaml')}`,
      ],
    });
    frontend.start();
    await frontend.waitReady();
    strata = await startSingleProcess('query-stats-querier', [
      '-auth.multitenancy-enabled=true',
      `-querier.scheduler-address=127.0.0.1:${schedGrpc}`,
      '-querier.id=querier-all',
      `-runtime-config.file=${join(dir, 'overrides.yaml')}`,
    ]);
    for (const tenant of TENANTS) {
      const res = await push(strata.strata.url, series, org(tenant));
      assert.equal(res.status, 200, res.body);
    }
    prometheus = await startPrometheus3(dir, ['--web.enable-remote-write-receiver', '--enable-feature=promql-per-step-stats']);
    const res = await fetch(`${prometheus.url}/api/v1/write`, {
      method: 'POST',
      body: compressBody(encodeWriteRequest({ timeseries: series })),
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' },
    });
    assert.equal(res.status, 204, await res.text());
    // Each limited tenant's series consumed, asked through an endpoint no fetch limit applies to.
    for (const tenant of TENANTS.filter((t) => t !== 'short-lookback')) {
      await waitFor(`${tenant}'s series are queryable`, async () => {
        const r = await api<string[]>(strata.strata.url, '/prometheus/api/v1/label/instance/values', {}, { headers: org(tenant) });
        return r.data?.length === 3 ? true : undefined;
      });
    }
  });

  after(async () => {
    prometheus?.stop();
    await strata?.stop();
    await frontend?.kill('SIGTERM');
    await scheduler?.kill('SIGTERM');
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  const queries: [string, Record<string, string>][] = [
    ['/api/v1/query', { query: 'http_requests_total', time: String((t0 + 8 * 15_000) / 1000), stats: 'all' }],
    ['/api/v1/query', { query: 'sum(rate(http_requests_total[1m]))', time: String((t0 + 8 * 15_000) / 1000), stats: 'all' }],
    ['/api/v1/query_range', { query: 'rate(http_requests_total[1m])', start: String(t0 / 1000 + 30), end: String(t0 / 1000 + 120), step: '15', stats: 'all' }],
    ['/api/v1/query_range', { query: 'http_requests_total', start: String(t0 / 1000), end: String(t0 / 1000 + 120), step: '30', stats: 'true' }],
  ];

  test("stats answers Prometheus 3.16's keys and sample counts, directly and through the frontend", async () => {
    for (const [path, params] of queries) {
      const want = await api<{ stats: Stats }>(prometheus.url, path, params);
      assert.equal(want.httpStatus, 200, JSON.stringify(want));
      for (const url of [strata.strata.url, frontend.url]) {
        const got = await api<{ stats: Stats }>(url, `/prometheus${path}`, params, { headers: org('big') });
        assert.equal(got.httpStatus, 200, JSON.stringify(got));
        const what = `${url === frontend.url ? 'frontend' : 'querier'} ${params.query} stats=${params.stats}`;
        assert.deepEqual(Object.keys(got.data), Object.keys(want.data), what);
        assert.deepEqual(Object.keys(got.data.stats.timings), Object.keys(want.data.stats.timings), what);
        assert.deepEqual(Object.keys(got.data.stats.samples), Object.keys(want.data.stats.samples), what);
        for (const k of ['totalQueryableSamples', 'totalQueryableSamplesPerStep', 'samplesRead', 'samplesReadPerStep', 'seriesTouched']) {
          assert.deepEqual(got.data.stats.samples[k], want.data.stats.samples[k], `${what}: ${k}`);
        }
        assert.ok(got.data.stats.samples.totalQueryableSamples > 0, what);
        assert.ok(Number(got.data.stats.samples.peakSamples) > 0, what);
        assert.ok(got.data.stats.timings.evalTotalTime > 0 && got.data.stats.timings.execTotalTime >= got.data.stats.timings.evalTotalTime, what);
        const extra = got.data.stats.strata ?? {};
        assert.equal(extra.fetchedSeriesCount, 3, what);
        assert.ok(extra.fetchedChunksCount > 0 && extra.fetchedChunkBytes > 0 && extra.fetchedSamplesCount > 0, what);
        if (url === frontend.url) {
          assert.equal(typeof extra.queueTime, 'number', what);
          assert.equal(got.data.stats.timings.execQueueTime, extra.queueTime, what);
        }
      }
    }
  });

  test("each max_fetched_*_per_query refuses one tenant's query with 422 naming the limit and its value; a higher override answers", async () => {
    const refusals: [string, RegExp][] = [
      ['small-series', /maximum number of series \(limit: 2 series\).*max_fetched_series_per_query/],
      ['small-chunks', /maximum number of chunks \(limit: 2 chunks\).*max_fetched_chunks_per_query/],
      ['small-bytes', /aggregated chunks size limit \(limit: 20 bytes\).*max_fetched_chunk_bytes_per_query/],
    ];
    const params = { query: 'http_requests_total', start: String(t0 / 1000), end, step: '15' };
    for (const url of [frontend.url, strata.strata.url]) {
      for (const [tenant, message] of refusals) {
        const r = await api(url, '/prometheus/api/v1/query_range', params, { headers: org(tenant) });
        assert.equal(r.httpStatus, 422, `${tenant}: ${JSON.stringify(r)}`);
        assert.equal(r.errorType, 'execution');
        assert.match(r.error ?? '', message);
      }
      const ok = await api<{ result: unknown[] }>(url, '/prometheus/api/v1/query_range', params, { headers: org('big') });
      assert.equal(ok.httpStatus, 200, JSON.stringify(ok));
      assert.equal(ok.data.result.length, 3);
    }
  });

  test('max_query_lookback moves the start of the range up instead of refusing it; another tenant reads it all', async () => {
    // A series pushed now (the setup's length varies), from 3 minutes ago to 5 s ago.
    const now = Math.floor(Date.now() / 1000) * 1000;
    const probe: SeriesInput = {
      labels: [{ name: '__name__', value: 'lookback_probe' }],
      samples: Array.from({ length: 13 }, (_, k) => ({ value: k, timestamp: now - 180_000 + k * 15_000 - 5_000 })),
    };
    for (const tenant of ['short-lookback', 'big']) assert.equal((await push(strata.strata.url, [probe], org(tenant))).status, 200);
    const params = { query: 'lookback_probe', start: String((now - 180_000) / 1000), end: String(now / 1000), step: '15' };
    type Matrix = { result: { values: [number, string][] }[] };
    const clamped = await waitFor('the probe is queryable', async () => {
      const r = await api<Matrix>(frontend.url, '/prometheus/api/v1/query_range', params, { headers: org('short-lookback') });
      return r.data?.result?.length === 1 ? r : undefined;
    });
    const first = clamped.data.result[0].values[0][0];
    assert.ok(first * 1000 >= Date.now() - 65_000, `first step ${first} is within the last minute`);
    const full = await waitFor('the probe is queryable for another tenant', async () => {
      const r = await api<Matrix>(frontend.url, '/prometheus/api/v1/query_range', params, { headers: org('big') });
      return r.data?.result?.length === 1 ? r : undefined;
    });
    assert.equal(full.data.result[0].values[0][0], (now - 180_000) / 1000);
  });

  test("Mimir's cardinality active_series answers the tenant's series, directly and through the frontend", async () => {
    const selector = encodeURIComponent('{job="api"}');
    for (const url of [strata.strata.url, frontend.url]) {
      const mine = await fetch(`${url}/prometheus/api/v1/cardinality/active_series?selector=${selector}`, { headers: org('big') });
      assert.equal(mine.status, 200);
      assert.deepEqual(
        ((await mine.json()) as { data: Record<string, string>[] }).data.map((s) => s.instance),
        ['a', 'b', 'c'],
      );
      const none = await fetch(`${url}/prometheus/api/v1/cardinality/active_series?selector=${selector}`, { headers: org('nobody') });
      assert.deepEqual(await none.json(), { data: [] });
    }
  });

  test('the slow-query log line has the tenant, query, range, step, wall and queue time, series, samples and chunk bytes', async () => {
    const line = readFileSync(frontend.opts.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('slow query') && l.includes('rate(http_requests_total[1m])') && l.includes('query_range'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((e) => e.tenant === 'big');
    assert.ok(line, 'a slow-query line for the range query');
    assert.equal(line.step, '15');
    assert.equal(typeof line.wall_ms, 'number');
    assert.equal(typeof line.queue_ms, 'number');
    assert.equal(line.fetched_series, 3);
    assert.ok(Number(line.fetched_samples) > 0 && Number(line.fetched_chunk_bytes) > 0 && Number(line.fetched_chunks) > 0, JSON.stringify(line));
  });
});
