// Frontend, scheduler and querier workers over real gRPC on loopback, in one process.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { setTimeout as sleep } from 'node:timers/promises';
import { FrontendTransport } from './frontend-transport.ts';
import { QuerierWorker, type QueryHandler } from './querier-worker.ts';
import { QueryScheduler } from './scheduler.ts';
import type { WireHttpRequest } from './wire.ts';
import { listenOnLoopback } from './testing.ts';

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function serve(add: (s: grpc.Server) => void): Promise<string> {
  const server = new grpc.Server();
  add(server);
  cleanups.push(() => void server.forceShutdown());
  return listenOnLoopback(server);
}

async function setup(maxOutstanding = 100): Promise<{ scheduler: QueryScheduler; schedulerAddress: string; registry: Registry; frontend: FrontendTransport }> {
  const registry = new Registry();
  const scheduler = new QueryScheduler({ maxOutstandingPerTenant: maxOutstanding, registry });
  const schedulerAddress = await serve((s) => scheduler.addTo(s));
  cleanups.push(() => scheduler.stop());
  // The frontend's address is known only once its server is bound: the transport asks for it per query.
  let frontendAddress = '';
  const frontend = new FrontendTransport({ schedulerAddress, frontendAddress: () => frontendAddress });
  frontendAddress = await serve((s) => frontend.addTo(s));
  cleanups.push(() => frontend.stop());
  return { scheduler, schedulerAddress, registry, frontend };
}

function worker(schedulerAddress: string, querierId: string, handle: QueryHandler, maxConcurrent = 1): QuerierWorker {
  const w = new QuerierWorker({ schedulerAddress, querierId, maxConcurrent, handle });
  w.start();
  cleanups.push(() => w.stop());
  return w;
}

function get(url: string): WireHttpRequest {
  return { method: 'GET', url, headers: [], body: Buffer.alloc(0) };
}

const echo: QueryHandler = async (tenant, req) => ({
  code: 200,
  headers: [{ key: 'content-type', values: ['text/plain'] }],
  body: Buffer.from(`${tenant} ${req.url}`),
});

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await sleep(10);
  assert.ok(check(), what);
}

test('a query goes frontend -> scheduler -> querier worker, and the answer comes straight back', async () => {
  const { schedulerAddress, frontend } = await setup();
  const w = worker(schedulerAddress, 'querier-1', echo);
  const r = await frontend.roundTrip('team-a', get('/api/v1/query?query=up'));
  assert.equal(r.response.code, 200);
  assert.equal(r.response.body.toString(), 'team-a /api/v1/query?query=up');
  assert.equal(r.querierId, 'querier-1');
  await until('the worker reports the scheduler connected', () => w.connected());
});

test("fairness: with one slot busy on a tenant's backlog, another tenant's query runs next", async () => {
  const { schedulerAddress, frontend, scheduler } = await setup();
  const order: string[] = [];
  worker(schedulerAddress, 'querier-1', async (tenant, req) => {
    await sleep(5);
    order.push(`${tenant}${req.url}`);
    return echo(tenant, req);
  });
  const noisy = Array.from({ length: 20 }, (_, i) => frontend.roundTrip('noisy', get(`/${i}`)));
  await until("noisy's backlog is queued", () => (scheduler.queue.lengths().get('noisy') ?? 0) >= 10);
  const finishedBefore = order.length;
  await frontend.roundTrip('quiet', get('/dashboard'));
  // From quiet's enqueue: the noisy query running then, and at most one more as the rotation reaches quiet.
  const noisyBetween = order.indexOf('quiet/dashboard') - finishedBefore;
  assert.ok(noisyBetween <= 2, `quiet's query ran after ${noisyBetween} more of noisy's (order: ${order.join(' ')})`);
  await Promise.all(noisy);
  assert.equal(order.length, 21);
});

test('over the per-tenant outstanding limit: refused with the limit named; other tenants still queue', async () => {
  const { schedulerAddress, frontend } = await setup(3);
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  worker(schedulerAddress, 'querier-1', async (tenant, req) => {
    await gate;
    return echo(tenant, req);
  });
  const first = frontend.roundTrip('noisy', get('/running')); // taken by the worker
  await sleep(50);
  const queued = [1, 2, 3].map((i) => frontend.roundTrip('noisy', get(`/${i}`)));
  await assert.rejects(frontend.roundTrip('noisy', get('/4')), {
    code: 'err-strata-too-many-outstanding-requests',
    kind: 'limit',
    message: /tenant noisy \(limit: 3\)/,
  });
  const other = frontend.roundTrip('quiet', get('/q'));
  release();
  assert.equal((await first).response.code, 200);
  assert.deepEqual(
    (await Promise.all(queued)).map((r) => r.response.code),
    [200, 200, 200],
  );
  assert.equal((await other).response.body.toString(), 'quiet /q');
});

test('a canceled query leaves the queue; a querier that dies mid-query gets its frontend a 503', async () => {
  const { scheduler, schedulerAddress, frontend, registry } = await setup();
  const abort = new AbortController();
  const canceled = frontend.roundTrip('a', get('/never'), { signal: abort.signal });
  await until('queued', () => scheduler.queue.lengths().get('a') === 1);
  abort.abort();
  await assert.rejects(canceled, { code: 'err-strata-query-canceled' });
  await until('the scheduler dropped it', () => scheduler.queue.lengths().size === 0);

  let started: () => void = () => undefined;
  const running = new Promise<void>((r) => (started = r));
  const w = worker(schedulerAddress, 'querier-dies', async () => {
    started();
    return new Promise(() => undefined); // never answers
  });
  const orphan = frontend.roundTrip('a', get('/slow'));
  await running;
  await w.stop(100); // the query never finishes: after the drain time its stream is closed under it
  const r = await orphan;
  assert.equal(r.response.code, 503);
  assert.match(r.response.body.toString(), /querier querier-dies went away while running the query; retry it/);
  assert.match(await registry.metrics(), /strata_query_scheduler_discarded_requests_total\{user="a",reason="querier-gone"\} 1/);
});

test('a querier that stops lets its running query finish and answer, and takes no new one', async () => {
  const { schedulerAddress, frontend, scheduler } = await setup();
  let started: () => void = () => undefined;
  const running = new Promise<void>((r) => (started = r));
  const w = worker(schedulerAddress, 'querier-stopping', async (tenant, req) => {
    started();
    await sleep(200);
    return echo(tenant, req);
  });
  const inflight = frontend.roundTrip('a', get('/finishing'));
  await running;
  const stopped = w.stop();
  const next = frontend.roundTrip('a', get('/after-stop'));
  assert.equal((await inflight).response.code, 200);
  await stopped;
  await until('the stopped querier left the scheduler', () => scheduler.queue.connectedQueriers().size === 0);
  assert.equal(scheduler.queue.lengths().get('a'), 1, 'the next query waits for another querier');
  worker(schedulerAddress, 'querier-next', echo);
  assert.equal((await next).response.body.toString(), 'a /after-stop');
});
