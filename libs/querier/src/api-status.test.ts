// Status endpoints, parse_query, Mimir's cardinality API and delete_series
// through registerPrometheusApi, in Prometheus' and Mimir's shapes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { labelsFromRecord, applyTombstonesAll, type Tombstone } from '@strata/model';
import { MemoryQuerier } from '@strata/model/testing';
import { Engine } from '@strata/promql';
import { createHttpServer, createLogger } from '@strata/service';
import { adminRoutes, cardinalityRoutes, registerPrometheusApi, statusRoutes, type ApiQuerier } from './index.ts';

const NOW = 1_000_000;

function server() {
  const q = new MemoryQuerier();
  for (const [job, insts] of [
    ['api', 3],
    ['db', 1],
  ] as const) {
    for (let i = 0; i < insts; i++) q.append('t1', labelsFromRecord({ __name__: 'up', job, instance: `h${i}` }), [NOW - 60_000, NOW - 30_000], [1, 1]);
  }
  q.append('t1', labelsFromRecord({ __name__: 'req_total', job: 'api' }), [NOW - 10_000], [5]);
  q.append('t2', labelsFromRecord({ __name__: 'other', job: 'x' }), [NOW - 10_000], [5]);
  const deleted: { tenant: string; tombstones: Tombstone[] }[] = [];
  const registry = new Registry();
  const app = createHttpServer({ logger: createLogger('test', 'silent'), registry, readiness: { notReadyReason: () => undefined } });
  const config = {
    'querier.timeout': 120_000,
    'blocks-storage.s3.secret-access-key': 'hunter2',
    'blocks-storage.s3.access-key-id': 'AKIA',
    'auth.tokens-file': '/etc/tokens.yaml',
  };
  registerPrometheusApi(app, {
    querier: q,
    engine: new Engine({ querier: q }),
    multitenancyEnabled: true,
    logger: createLogger('test', 'silent'),
    registry,
    prefixes: ['/api/v1', '/prometheus/api/v1'],
    // Deletions recorded here are applied on read, as the bucket's deletion filter does.
    readFilter: (inner: ApiQuerier): ApiQuerier => ({
      select: async (p) =>
        applyTombstonesAll(
          await inner.select(p),
          deleted.filter((d) => d.tenant === p.tenant).flatMap((d) => d.tombstones),
        ),
      labelNames: (p) => inner.labelNames(p),
      labelValues: (p) => inner.labelValues(p),
    }),
    routes: [
      ...statusRoutes({ config, headWindowMs: 3_600_000, now: () => NOW, startTime: new Date(0) }),
      ...cardinalityRoutes({ headWindowMs: 3_600_000, now: () => NOW }),
      ...adminRoutes([{ deleteSeries: async (tenant, tombstones) => deleted.push({ tenant, tombstones }) }]),
    ],
  });
  return { app, deleted };
}

const get = async (app: ReturnType<typeof server>['app'], url: string, tenant = 't1') => {
  const res = await app.inject({ method: 'GET', url, headers: { 'x-scope-orgid': tenant } });
  return { status: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> & { data: never } };
};

test('status/config is YAML with secrets redacted; status/flags strings; runtimeinfo in Prometheus field names', async () => {
  const { app } = server();
  const config = await get(app, '/api/v1/status/config');
  assert.equal(config.status, 200);
  const yaml = (config.body.data as { yaml: string }).yaml;
  assert.match(yaml, /^blocks-storage\.s3\.secret-access-key: "<secret>"$/m);
  assert.match(yaml, /^blocks-storage\.s3\.access-key-id: "AKIA"$/m);
  assert.match(yaml, /^querier\.timeout: 120000$/m);
  assert.doesNotMatch(yaml, /hunter2/);
  const flags = await get(app, '/prometheus/api/v1/status/flags');
  assert.deepEqual(flags.body.data, {
    'querier.timeout': '120000',
    'blocks-storage.s3.secret-access-key': '<secret>',
    'blocks-storage.s3.access-key-id': 'AKIA',
    'auth.tokens-file': '/etc/tokens.yaml',
  });
  const rt = (await get(app, '/api/v1/status/runtimeinfo')).body.data as Record<string, unknown>;
  for (const k of ['startTime', 'CWD', 'reloadConfigSuccess', 'lastConfigTime', 'corruptionCount', 'goroutineCount', 'GOMAXPROCS', 'storageRetention'])
    assert.ok(k in rt, k);
  assert.equal(rt.startTime, '1970-01-01T00:00:00.000Z');
  assert.ok((rt.GOMAXPROCS as number) >= 1);
});

test('status/tsdb: head stats and top-N tables of the tenant, Prometheus shape', async () => {
  const { app } = server();
  const r = await get(app, '/api/v1/status/tsdb?limit=2');
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.data, {
    headStats: { numSeries: 5, numLabelPairs: 7, chunkCount: 5, minTime: NOW - 60_000, maxTime: NOW - 10_000 },
    seriesCountByMetricName: [
      { name: 'up', value: 4 },
      { name: 'req_total', value: 1 },
    ],
    labelValueCountByLabelName: [
      { name: 'instance', value: 3 },
      { name: '__name__', value: 2 },
    ],
    memoryInBytesByLabelName: [
      { name: '__name__', value: 11 },
      { name: 'instance', value: 6 },
    ],
    seriesCountByLabelValuePair: [
      { name: '__name__=up', value: 4 },
      { name: 'job=api', value: 4 },
    ],
  });
  const other = await get(app, '/api/v1/status/tsdb', 't2');
  assert.equal((other.body.data as { headStats: { numSeries: number } }).headStats.numSeries, 1);
});

test('parse_query answers the AST as Prometheus translates it', async () => {
  const { app } = server();
  const q = encodeURIComponent('sum by (job) (rate(http_requests_total{job="api"}[5m] offset 1m)) > bool on(job) group_left(x) (-up @ 10)');
  const r = await get(app, `/api/v1/parse_query?query=${q}`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.data, {
    type: 'binaryExpr',
    op: '>',
    lhs: {
      type: 'aggregation',
      op: 'sum',
      expr: {
        type: 'call',
        func: { name: 'rate', argTypes: ['matrix'], variadic: 0, returnType: 'vector' },
        args: [
          {
            type: 'matrixSelector',
            name: 'http_requests_total',
            range: 300_000,
            offset: 60_000,
            matchers: [
              { name: 'job', value: 'api', type: '=' },
              { name: '__name__', value: 'http_requests_total', type: '=' },
            ],
            timestamp: null,
            startOrEnd: null,
            anchored: false,
            smoothed: false,
          },
        ],
      },
      param: null,
      grouping: ['job'],
      without: false,
    },
    rhs: {
      type: 'parenExpr',
      expr: {
        type: 'unaryExpr',
        op: '-',
        expr: {
          type: 'vectorSelector',
          name: 'up',
          offset: 0,
          matchers: [{ name: '__name__', value: 'up', type: '=' }],
          timestamp: 10_000,
          startOrEnd: null,
          anchored: false,
          smoothed: false,
        },
      },
    },
    matching: { card: 'many-to-one', labels: ['job'], on: true, include: ['x'], fillValues: { lhs: null, rhs: null } },
    bool: true,
  });
  const sub = await get(app, `/api/v1/parse_query?query=${encodeURIComponent('max_over_time(x[5m:1m] @ end()) + 1e21')}`);
  const d = sub.body.data as { lhs: { args: unknown[] }; rhs: unknown };
  assert.deepEqual(d.lhs.args[0], {
    type: 'subquery',
    expr: {
      type: 'vectorSelector',
      name: 'x',
      offset: 0,
      matchers: [{ name: '__name__', value: 'x', type: '=' }],
      timestamp: null,
      startOrEnd: null,
      anchored: false,
      smoothed: false,
    },
    range: 300_000,
    offset: 0,
    step: 60_000,
    timestamp: null,
    startOrEnd: 'end',
    alignEvalTime: false,
  });
  assert.deepEqual(d.rhs, { type: 'numberLiteral', val: '1000000000000000000000' }, "Go's 'f' format: no exponent");
  const bad = await get(app, '/api/v1/parse_query?query=sum(');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.errorType, 'bad_data');
});

test("Mimir's cardinality label_names and label_values, with selector and limit", async () => {
  const { app } = server();
  const names = await get(app, '/prometheus/api/v1/cardinality/label_names?limit=2');
  assert.deepEqual(names.body, {
    label_values_count_total: 7,
    label_names_count: 3,
    cardinality: [
      { label_name: 'instance', label_values_count: 3 },
      { label_name: '__name__', label_values_count: 2 },
    ],
  });
  const sel = encodeURIComponent('{job="db"}');
  const values = await get(app, `/prometheus/api/v1/cardinality/label_values?label_names[]=job&label_names[]=instance&selector=${sel}`);
  assert.deepEqual(values.body, {
    series_count_total: 1,
    labels: [
      { label_name: 'instance', label_values_count: 1, series_count: 1, cardinality: [{ label_value: 'h0', series_count: 1 }] },
      { label_name: 'job', label_values_count: 1, series_count: 1, cardinality: [{ label_value: 'db', series_count: 1 }] },
    ],
  });
  const all = await get(app, '/prometheus/api/v1/cardinality/label_values?label_names[]=job&limit=1');
  assert.deepEqual(all.body, {
    series_count_total: 5,
    labels: [{ label_name: 'job', label_values_count: 2, series_count: 5, cardinality: [{ label_value: 'api', series_count: 4 }] }],
  });
  assert.equal((await get(app, '/prometheus/api/v1/cardinality/label_values')).status, 400);
});

test("Mimir's cardinality active_series: the tenant's series with a sample in the active window, selector required", async () => {
  const q = new MemoryQuerier();
  q.append('t1', labelsFromRecord({ __name__: 'up', job: 'api', instance: 'h1' }), [NOW - 10_000], [1]);
  q.append('t1', labelsFromRecord({ __name__: 'up', job: 'api', instance: 'h0' }), [NOW - 20_000], [1]);
  q.append('t1', labelsFromRecord({ __name__: 'up', job: 'api', instance: 'idle' }), [NOW - 120_000], [1]);
  q.append('t1', labelsFromRecord({ __name__: 'req_total', job: 'api' }), [NOW - 10_000], [1]);
  q.append('t2', labelsFromRecord({ __name__: 'up', job: 'other' }), [NOW - 10_000], [1]);
  const app = createHttpServer({ logger: createLogger('test', 'silent'), registry: new Registry(), readiness: { notReadyReason: () => undefined } });
  registerPrometheusApi(app, {
    querier: q,
    engine: new Engine({ querier: q }),
    multitenancyEnabled: true,
    logger: createLogger('test', 'silent'),
    registry: new Registry(),
    prefixes: ['/prometheus/api/v1'],
    routes: cardinalityRoutes({ headWindowMs: 3_600_000, activeWindowMs: 60_000, now: () => NOW }),
  });
  const sel = encodeURIComponent('{__name__="up"}');
  const active = await get(app, `/prometheus/api/v1/cardinality/active_series?selector=${sel}`);
  assert.equal(active.status, 200);
  assert.deepEqual(active.body, {
    data: [
      { __name__: 'up', instance: 'h0', job: 'api' },
      { __name__: 'up', instance: 'h1', job: 'api' },
    ],
  });
  const other = await get(app, `/prometheus/api/v1/cardinality/active_series?selector=${sel}`, 't2');
  assert.deepEqual(other.body, { data: [{ __name__: 'up', job: 'other' }] });
  const missing = await get(app, '/prometheus/api/v1/cardinality/active_series');
  assert.equal(missing.status, 400);
  assert.match(String(missing.body.error), /missing 'selector' parameter/);
});

test('admin delete_series: 204, one tombstone per match[], and the series reads as gone', async () => {
  const { app, deleted } = server();
  const res = await app.inject({
    method: 'POST',
    url: `/prometheus/api/v1/admin/tsdb/delete_series?match[]=${encodeURIComponent('up{job="api"}')}&start=${(NOW - 45_000) / 1000}&end=${NOW / 1000}`,
    headers: { 'x-scope-orgid': 't1' },
  });
  assert.equal(res.statusCode, 204);
  assert.deepEqual(deleted, [
    {
      tenant: 't1',
      tombstones: [
        {
          matchers: [
            { type: '=', name: 'job', value: 'api' },
            { type: '=', name: '__name__', value: 'up' },
          ],
          mint: NOW - 45_000,
          maxt: NOW,
        },
      ],
    },
  ]);
  const q = await get(app, `/api/v1/query?query=${encodeURIComponent('count_over_time(up[2m])')}&time=${NOW / 1000}`);
  const counts = (q.body.data as { result: { metric: { job: string }; value: [number, string] }[] }).result.map((r) => [r.metric.job, r.value[1]]);
  assert.deepEqual(counts.sort(), [
    ['api', '1'],
    ['api', '1'],
    ['api', '1'],
    ['db', '2'],
  ]);
  const noMatch = await app.inject({ method: 'POST', url: '/api/v1/admin/tsdb/delete_series', headers: { 'x-scope-orgid': 't1' } });
  assert.equal(noMatch.statusCode, 400);
});
