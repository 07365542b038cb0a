import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { labelsFromRecord } from '@strata/model';
import { Engine } from '@strata/promql';
import { emptyAppendStats } from '@strata/tsdb';
import { TenantHeads } from '@strata/tsdb/testing';
import { createHttpServer, createLogger } from '@strata/service';
import { registerPrometheusApi } from './index.ts';

function server() {
  const heads = new TenantHeads();
  const ts = new Float64Array([0, 15_000, 30_000, 45_000, 60_000]);
  for (const [job, inst] of [
    ['api', 'a'],
    ['api', 'b'],
    ['db', 'c'],
  ]) {
    heads.head('t1').append(labelsFromRecord({ __name__: 'up', job, instance: inst }), ts, new Float64Array([1, 1, 1, 0, 1]), emptyAppendStats());
  }
  heads.head('t2').append(labelsFromRecord({ __name__: 'secret', job: 'x' }), ts, new Float64Array(5), emptyAppendStats());
  const logger = createLogger('test', 'silent');
  const registry = new Registry();
  const app = createHttpServer({ logger, registry, readiness: { notReadyReason: () => undefined } });
  registerPrometheusApi(app, {
    querier: heads,
    engine: new Engine({ querier: heads }),
    multitenancyEnabled: true,
    logger,
    registry,
    prefixes: ['/api/v1', '/prometheus/api/v1'],
  });
  return app;
}

const T1 = { 'x-scope-orgid': 't1' };

test('instant query via GET and POST form, at both prefixes', async () => {
  const app = server();
  for (const [method, url, payload] of [
    ['GET', '/api/v1/query?query=sum%20by%20(job)(up)&time=30', undefined],
    ['POST', '/prometheus/api/v1/query', 'query=sum+by+(job)(up)&time=30'],
  ] as const) {
    const res = await app.inject({
      method,
      url,
      payload,
      headers: { ...T1, ...(payload ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.status, 'success');
    assert.deepEqual(
      body.data.result.sort((a: { metric: { job: string } }, b: { metric: { job: string } }) => a.metric.job.localeCompare(b.metric.job)),
      [
        { metric: { job: 'api' }, value: [30, '2'] },
        { metric: { job: 'db' }, value: [30, '1'] },
      ],
    );
  }
});

test('query_range returns a matrix; bad input maps to Prometheus error types', async () => {
  const app = server();
  const ok = await app.inject({ url: '/api/v1/query_range?query=up{instance="a"}&start=0&end=60&step=15s', headers: T1 });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.deepEqual(ok.json().data.result[0].values, [
    [0, '1'],
    [15, '1'],
    [30, '1'],
    [45, '0'],
    [60, '1'],
  ]);

  const parse = await app.inject({ url: '/api/v1/query?query=sum(', headers: T1 });
  assert.equal(parse.statusCode, 400);
  assert.equal(parse.json().errorType, 'bad_data');

  const tooMany = await app.inject({ url: '/api/v1/query_range?query=up&start=0&end=100000&step=1', headers: T1 });
  assert.equal(tooMany.statusCode, 400);
  assert.match(tooMany.json().error, /11,000 points/);

  const noTenant = await app.inject({ url: '/api/v1/query?query=up' });
  assert.equal(noTenant.statusCode, 401);
});

test('series, labels and label values honour match[], and tenants never see each other', async () => {
  const app = server();
  const series = await app.inject({ url: '/api/v1/series?match[]=up{job="api"}&start=0&end=60', headers: T1 });
  assert.equal(series.json().data.length, 2);
  const none = await app.inject({ url: '/api/v1/series?start=0&end=60', headers: T1 });
  assert.equal(none.statusCode, 400);
  const labels = await app.inject({ url: '/api/v1/labels', headers: T1 });
  assert.deepEqual(labels.json().data, ['__name__', 'instance', 'job']);
  const values = await app.inject({ url: '/prometheus/api/v1/label/instance/values?match[]=up{job="api"}', headers: T1 });
  assert.deepEqual(values.json().data, ['a', 'b']);
  const limited = await app.inject({ url: '/api/v1/label/instance/values?limit=1', headers: T1 });
  assert.deepEqual(limited.json().data, ['a']);
  const names = await app.inject({ url: '/api/v1/label/__name__/values', headers: { 'x-scope-orgid': 't2' } });
  assert.deepEqual(names.json().data, ['secret']);
});
