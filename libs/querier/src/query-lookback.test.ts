// max_query_lookback in the Prometheus API (Mimir's semantics: reads are clamped, not refused)
// and stats=true|all in Prometheus' shape with the query's fetched figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { labelsFromRecord } from '@strata/model';
import { MemoryQuerier } from '@strata/model/testing';
import { Engine } from '@strata/promql';
import { createHttpServer, createLogger } from '@strata/service';
import { QUERY_STATS_HEADER, registerPrometheusApi } from './index.ts';
import { clampRangeStart } from './query-lookback.ts';

const logger = createLogger('test', 'silent');

function api(lookback: Record<string, number>) {
  const q = new MemoryQuerier();
  const ts = new Float64Array(Array.from({ length: 21 }, (_, i) => i * 15_000));
  for (const tenant of ['near', 'far'])
    q.append(
      tenant,
      labelsFromRecord({ __name__: 'up', job: 'a' }),
      ts,
      Array.from(ts, () => 1),
    );
  const app = createHttpServer({ logger, registry: new Registry(), readiness: { notReadyReason: () => undefined } });
  registerPrometheusApi(app, {
    querier: q,
    engine: new Engine({ querier: q }),
    multitenancyEnabled: true,
    logger,
    registry: new Registry(),
    prefixes: ['/api/v1'],
    maxQueryLookbackMs: (t) => lookback[t] ?? 0,
    now: () => 300_000,
  });
  return app;
}

test('clampRangeStart moves the start up on the step grid, and gives up when the whole range is older', () => {
  assert.equal(clampRangeStart(0, 300_000, 60_000, 100_000), 120_000);
  assert.equal(clampRangeStart(200_000, 300_000, 60_000, 100_000), 200_000);
  assert.equal(clampRangeStart(0, 90_000, 60_000, 100_000), undefined);
});

test("a range query reaching past the tenant's max_query_lookback answers from the lookback on; another tenant's whole range", async () => {
  const app = api({ near: 120_000 });
  const url = '/api/v1/query_range?query=up&start=0&end=300&step=60';
  const near = await app.inject({ url, headers: { 'x-scope-orgid': 'near' } });
  assert.equal(near.statusCode, 200);
  type Matrix = { data: { result: { values: [number, string][] }[] } };
  assert.deepEqual(
    near.json<Matrix>().data.result[0].values.map((v) => v[0]),
    [180, 240, 300],
  );
  const far = await app.inject({ url, headers: { 'x-scope-orgid': 'far' } });
  assert.deepEqual(
    far.json<Matrix>().data.result[0].values.map((v) => v[0]),
    [0, 60, 120, 180, 240, 300],
  );
  // All of it older than the lookback: no series, not an error (as Mimir).
  const old = await app.inject({ url: '/api/v1/query_range?query=up&start=0&end=100&step=60', headers: { 'x-scope-orgid': 'near' } });
  assert.deepEqual(old.json<{ data: unknown }>().data, { resultType: 'matrix', result: [] });
  // Series and instant queries read nothing older either.
  const instant = await app.inject({ url: '/api/v1/query?query=up&time=100', headers: { 'x-scope-orgid': 'near' } });
  assert.deepEqual(instant.json<{ data: { result: unknown[] } }>().data.result, []);
  const series = await app.inject({ url: '/api/v1/series?match[]=up&start=0&end=100', headers: { 'x-scope-orgid': 'near' } });
  assert.deepEqual(series.json<{ data: unknown[] }>().data, []);
});

test("stats=all answers Prometheus' timings and samples, and Strata's fetched figures; every query sends them in a header", async () => {
  const app = api({});
  const r = await app.inject({ url: '/api/v1/query_range?query=sum(rate(up[1m]))&start=60&end=120&step=30&stats=all', headers: { 'x-scope-orgid': 'far' } });
  assert.equal(r.statusCode, 200);
  type Stats = { timings: Record<string, number>; samples: Record<string, unknown>; strata: Record<string, number> };
  const { data } = r.json<{ data: { resultType: string; stats: Stats } }>();
  assert.deepEqual(Object.keys(data), ['resultType', 'result', 'stats']);
  assert.deepEqual(Object.keys(data.stats.samples), [
    'totalQueryableSamplesPerStep',
    'totalQueryableSamples',
    'samplesReadPerStep',
    'samplesRead',
    'seriesTouched',
    'peakSamples',
  ]);
  // Each 1m window holds 4 samples (15 s apart, left-open).
  assert.deepEqual(data.stats.samples.totalQueryableSamplesPerStep, [
    [60, 4],
    [90, 4],
    [120, 4],
  ]);
  assert.equal(data.stats.strata.fetchedSeriesCount, 1);
  assert.match(String(r.headers[QUERY_STATS_HEADER]), /^series=1,chunks=1,chunk_bytes=\d+,samples=\d+,shards=0,/);
  const basic = await app.inject({ url: '/api/v1/query?query=up&time=120&stats=true', headers: { 'x-scope-orgid': 'far' } });
  const samples = basic.json<{ data: { stats: Stats } }>().data.stats.samples;
  assert.equal(samples.totalQueryableSamples, 1);
  assert.equal(samples.totalQueryableSamplesPerStep, undefined);
  const none = await app.inject({ url: '/api/v1/query?query=up&time=120', headers: { 'x-scope-orgid': 'far' } });
  assert.equal(none.json<{ data: { stats?: unknown } }>().data.stats, undefined);
});
