// The frontend's routes in front of a scheduler and two querier workers running the real
// Prometheus API (over a memory querier), all over gRPC on loopback in one process.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { labelsFromRecord } from '@strata/model';
import { MemoryQuerier } from '@strata/model/testing';
import { Engine } from '@strata/promql';
import { cardinalityRoutes, registerPrometheusApi } from '@strata/querier';
import { FrontendTransport, QuerierWorker, QueryScheduler, injectingHandler } from '@strata/query-scheduler';
import { listenOnLoopback } from '@strata/query-scheduler/testing';
import { createHttpServer, createLogger, type Logger } from '@strata/service';
import type { StatusPage } from '@strata/ui';
import { registerQueryFrontend, type QueryFrontendOptions } from './frontend.ts';

const silent = createLogger('test', 'silent');
const T1 = { 'x-scope-orgid': 't1' };
const cleanups: (() => Promise<void> | void)[] = [];
const logged: { obj: Record<string, unknown>; msg: string }[] = [];
let frontendApp: FastifyInstance;
let querierApp: FastifyInstance;
let scheduler: QueryScheduler;
let busy = false;
let page: StatusPage;
/** The frontend's options, read per request: a test may change its timeout. */
let frontendOpts: QueryFrontendOptions;
const registry = new Registry();

async function grpcServer(add: (s: grpc.Server) => void): Promise<string> {
  const server = new grpc.Server();
  add(server);
  cleanups.push(() => void server.forceShutdown());
  return listenOnLoopback(server);
}

function querierHttp(): FastifyInstance {
  const heads = new MemoryQuerier();
  const ts = new Float64Array([0, 15_000, 30_000, 45_000, 60_000]);
  for (const inst of ['a', 'b']) heads.append('t1', labelsFromRecord({ __name__: 'req_total', job: 'api', instance: inst }), ts, [1, 2, 3, 4, 5]);
  const registry = new Registry();
  const app = createHttpServer({ logger: silent, registry, readiness: { notReadyReason: () => undefined } });
  registerPrometheusApi(app, {
    querier: heads,
    engine: new Engine({ querier: heads }),
    multitenancyEnabled: true,
    logger: silent,
    registry,
    prefixes: ['/api/v1', '/prometheus/api/v1'],
    routes: cardinalityRoutes({ headWindowMs: 3_600_000, now: () => 60_000 }),
  });
  return app;
}

/** Records info lines; the rest is silent. */
function recordingLogger(): Logger {
  return new Proxy(silent, {
    get(target, prop, receiver) {
      if (prop === 'info') return (obj: Record<string, unknown>, msg: string) => logged.push({ obj, msg });
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
}

before(async () => {
  scheduler = new QueryScheduler({ maxOutstandingPerTenant: 2, registry: new Registry() });
  const schedulerAddress = await grpcServer((s) => scheduler.addTo(s));
  cleanups.push(() => scheduler.stop());
  let frontendAddress = '';
  const transport = new FrontendTransport({ schedulerAddress, frontendAddress: () => frontendAddress });
  frontendAddress = await grpcServer((s) => transport.addTo(s));
  cleanups.push(() => transport.stop());
  querierApp = querierHttp();
  const inject = injectingHandler(querierApp);
  for (const id of ['querier-1', 'querier-2']) {
    const w = new QuerierWorker({
      schedulerAddress,
      querierId: id,
      maxConcurrent: 1,
      handle: async (tenant, req) => {
        while (busy) await new Promise((r) => setTimeout(r, 10));
        return inject(tenant, req);
      },
    });
    w.start();
    cleanups.push(() => w.stop());
  }
  frontendApp = createHttpServer({ logger: silent, registry, readiness: { notReadyReason: () => undefined } });
  page = registerQueryFrontend(
    frontendApp,
    (frontendOpts = {
      transport,
      prefixes: ['/api/v1', '/prometheus/api/v1'],
      multitenancyEnabled: true,
      logger: recordingLogger(),
      limits: (tenant) => ({
        maxQueriers: 0,
        maxTotalQueryLengthMs: tenant === 'limited' ? 3_600_000 : 0,
        blockedQueries:
          tenant === 'limited'
            ? [
                { pattern: 'count({__name__=~".+"})', regex: false, reason: 'it reads every series', timeRangeLongerThanMs: 0, stepSizeShorterThanMs: 0 },
                { pattern: '.*rate\\(.*\\[1s\\].*', regex: true, reason: '', timeRangeLongerThanMs: 0, stepSizeShorterThanMs: 10_000 },
              ]
            : [],
      }),
      registry,
      logQueriesLongerThanMs: 1,
      timeoutMs: 60_000,
    }),
  );
});

after(async () => {
  for (const c of cleanups.reverse()) await c();
});

test('through the frontend every read endpoint answers byte for byte what the querier answers', async () => {
  const requests = [
    { method: 'GET' as const, url: '/api/v1/query?query=sum(req_total)&time=60' },
    { method: 'GET' as const, url: '/prometheus/api/v1/query_range?query=rate(req_total[1m])&start=0&end=60&step=15' },
    { method: 'GET' as const, url: '/api/v1/series?match[]=req_total' },
    { method: 'GET' as const, url: '/api/v1/labels' },
    { method: 'GET' as const, url: '/api/v1/label/instance/values' },
    { method: 'GET' as const, url: '/api/v1/query?query=sum(' },
    { method: 'POST' as const, url: '/api/v1/query', payload: 'query=count(req_total)&time=60' },
    { method: 'GET' as const, url: '/prometheus/api/v1/cardinality/active_series?selector=req_total' },
    { method: 'GET' as const, url: '/prometheus/api/v1/cardinality/label_names' },
    { method: 'POST' as const, url: '/prometheus/api/v1/cardinality/label_values', payload: 'label_names[]=instance' },
  ];
  for (const r of requests) {
    const headers = { ...T1, ...(r.payload ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) };
    const direct = await querierApp.inject({ ...r, headers });
    const fronted = await frontendApp.inject({ ...r, headers });
    assert.equal(fronted.statusCode, direct.statusCode, r.url);
    assert.equal(fronted.body, direct.body, r.url);
    assert.equal(fronted.headers['content-type'], direct.headers['content-type'], r.url);
  }
  const active = await frontendApp.inject({ url: '/prometheus/api/v1/cardinality/active_series?selector=req_total', headers: T1 });
  assert.equal(active.json<{ data: unknown[] }>().data.length, 2);
});

test('the frontend authenticates the tenant itself: no org id is 401 and never reaches the queue', async () => {
  const r = await frontendApp.inject({ url: '/api/v1/query?query=up' });
  assert.equal(r.statusCode, 401);
  assert.match(r.json<{ error: string }>().error, /X-Scope-OrgID/);
});

test('over the outstanding limit a query is 429 naming the flag; the rest are answered', async () => {
  busy = true;
  let answered = 0;
  const all = Array.from({ length: 6 }, () => frontendApp.inject({ url: '/api/v1/query?query=up&time=60', headers: T1 }).finally(() => answered++));
  // Held until two were refused (the queriers hold two, the queue two).
  for (let i = 0; i < 250 && answered < 2; i++) await new Promise((r) => setTimeout(r, 20));
  busy = false;
  const codes = (await Promise.all(all)).map((r) => r.statusCode);
  // Two queriers hold one each, two wait in the queue: two are refused.
  assert.deepEqual(codes.filter((c) => c === 200).length, 4, codes.join(','));
  const refused = (await Promise.all(all)).find((r) => r.statusCode === 429);
  assert.equal(refused?.json<{ errorType: string }>().errorType, 'too_many_requests');
  assert.match(refused?.json<{ error: string }>().error ?? '', /-query-scheduler.max-outstanding-requests-per-tenant/);
});

test('a query slower than -query-frontend.log-queries-longer-than leaves one line with its tenant, range, step and queue time', async () => {
  logged.length = 0;
  await frontendApp.inject({ url: '/api/v1/query_range?query=rate(req_total[1m])&start=0&end=60&step=15', headers: T1 });
  const line = logged.find((l) => l.msg.startsWith('slow query'));
  assert.ok(line, JSON.stringify(logged));
  assert.equal(line.obj.tenant, 't1');
  assert.equal(line.obj.query, 'rate(req_total[1m])');
  assert.deepEqual([line.obj.start, line.obj.end, line.obj.step, line.obj.path], ['0', '60', '15', '/api/v1/query_range']);
  assert.equal(typeof line.obj.queue_ms, 'number');
  assert.match(String(line.obj.querier), /^querier-[12]$/);
  // What the querier fetched: both series, their samples in the window, and the chunks they fill.
  assert.deepEqual([line.obj.fetched_series, line.obj.fetched_samples, line.obj.fetched_chunks, line.obj.shards], [2, 10, 2, 0]);
  assert.ok(Number(line.obj.fetched_chunk_bytes) > 0);
});

test("stats=all through the frontend: Prometheus' stats with the scheduler's queue time as execQueueTime", async () => {
  const r = await frontendApp.inject({ url: '/api/v1/query_range?query=rate(req_total[1m])&start=0&end=60&step=15&stats=all', headers: T1 });
  assert.equal(r.statusCode, 200);
  type Stats = { timings: Record<string, number>; samples: Record<string, unknown>; strata: Record<string, number> };
  const stats = r.json<{ data: { stats: Stats } }>().data.stats;
  assert.deepEqual(Object.keys(stats.timings), ['evalTotalTime', 'resultSortTime', 'queryPreparationTime', 'innerEvalTime', 'execQueueTime', 'execTotalTime']);
  assert.equal(stats.timings.execQueueTime, stats.strata.queueTime);
  assert.ok(stats.timings.execTotalTime >= stats.timings.execQueueTime);
  assert.equal(stats.strata.fetchedSeriesCount, 2);
  // Steps 0..60 by 15, each rate window (t-60s, t] over samples at 0, 15, ..., 60.
  assert.deepEqual(stats.samples.totalQueryableSamplesPerStep, [
    [0, 2],
    [15, 4],
    [30, 6],
    [45, 8],
    [60, 8],
  ]);
  assert.equal(stats.samples.totalQueryableSamples, 28);
});

test("the tenant's blocked queries and max query length are refused with 400 before they are queued", async () => {
  const L = { 'x-scope-orgid': 'limited' };
  const blocked = await frontendApp.inject({ url: `/api/v1/query?query=${encodeURIComponent(' count({__name__=~".+"}) ')}&time=60`, headers: L });
  assert.equal(blocked.statusCode, 400);
  assert.equal(blocked.json<{ errorType: string }>().errorType, 'bad_data');
  assert.equal(
    blocked.json<{ error: string }>().error,
    'the request has been blocked by the cluster administrator it reads every series (err-strata-query-blocked)',
  );
  // The regex rule blocks only steps under 10 s.
  const q = encodeURIComponent('sum(rate(req_total[1s]))');
  assert.equal((await frontendApp.inject({ url: `/api/v1/query_range?query=${q}&start=0&end=60&step=5`, headers: L })).statusCode, 400);
  assert.equal((await frontendApp.inject({ url: `/api/v1/query_range?query=${q}&start=0&end=60&step=15`, headers: L })).statusCode, 200);
  const long = await frontendApp.inject({ url: '/api/v1/query_range?query=up&start=0&end=7260&step=60', headers: L });
  assert.equal(long.statusCode, 400);
  assert.match(long.json<{ error: string }>().error, /query length: 2h1m, limit: 1h\) \(err-strata-max-total-query-length\)/);
  // Another tenant is not limited.
  assert.equal((await frontendApp.inject({ url: '/api/v1/query_range?query=up&start=0&end=7260&step=60', headers: T1 })).statusCode, 200);
  const metrics = await registry.metrics();
  assert.match(metrics, /strata_query_frontend_rejected_queries_total\{user="limited",reason="blocked"\} 2/);
  assert.match(metrics, /strata_query_frontend_rejected_queries_total\{user="limited",reason="max-total-query-length"\} 1/);
});

test('the UI page lists the running queries and the slowest recent ones with tenant, querier and queue time', async () => {
  busy = true;
  const running = frontendApp.inject({ url: '/api/v1/query?query=count(req_total)&time=60', headers: T1 });
  await new Promise((r) => setTimeout(r, 100));
  const during = await page.sections();
  assert.deepEqual(
    during[0].rows?.map((r) => [r.tenant, r.query, r.status]),
    [['t1', 'count(req_total)', null]],
  );
  busy = false;
  assert.equal((await running).statusCode, 200);
  const after = await page.sections();
  assert.deepEqual(after[0].rows, []);
  const slowest = after[1].rows ?? [];
  assert.ok(slowest.length > 0);
  const top = slowest[0];
  assert.equal(top.tenant, 't1');
  assert.match(String(top.querier), /^querier-[12]$/);
  assert.equal(typeof top['ms in queue'], 'number');
  assert.ok(
    slowest.every((r, i) => i === 0 || Number(slowest[i - 1]['ms (wall)']) >= Number(r['ms (wall)'])),
    'slowest first',
  );
});

test('a query that gets no answer within -querier.timeout is 503 timeout naming the flag; nothing is left queued', async () => {
  frontendOpts.timeoutMs = 1000;
  busy = true;
  const began = Date.now();
  const hung = await Promise.all(Array.from({ length: 3 }, () => frontendApp.inject({ url: '/api/v1/query?query=up&time=60', headers: T1 })));
  busy = false;
  frontendOpts.timeoutMs = 60_000;
  assert.ok(Date.now() - began < 5000);
  // Two held by the queriers until released, one waiting in the queue: all three time out.
  for (const r of hung) {
    assert.equal(r.statusCode, 503);
    assert.equal(r.json<{ errorType: string }>().errorType, 'timeout');
    assert.match(r.json<{ error: string }>().error, /no answer within 1s \(-querier.timeout\)/);
  }
  // The frontend's cancel reaches the scheduler over its stream: the waiting query leaves the queue.
  for (let i = 0; i < 100 && scheduler.queue.lengths().size > 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(scheduler.queue.lengths().size, 0);
});
