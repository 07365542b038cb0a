import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { labelsFromRecord } from '@strata/model';
import { Engine } from '@strata/promql';
import type { QueryResult, RangeQueryParams } from '@strata/promql';
import type { CacheBackend } from './results-cache.ts';
import { ResultsCache, isSplittable, missingRanges, splitByInterval } from './results-cache.ts';
import { RedisCacheBackend } from './redis-cache.ts';
import { MemoryQuerier } from '@strata/model/testing';

const H = 3_600_000;
const DAY = 24 * H;

class MapBackend implements CacheBackend {
  readonly data = new Map<string, string>();
  async get(key: string) {
    return this.data.get(key) ?? null;
  }
  async set(key: string, value: string) {
    this.data.set(key, value);
  }
}

/** Three days of a counter and a gauge every minute, for two tenants. */
function data(): MemoryQuerier {
  const heads = new MemoryQuerier();
  const n = 3 * 24 * 60;
  const ts = Float64Array.from({ length: n }, (_, i) => i * 60_000);
  for (const tenant of ['t1', 't2']) {
    for (const job of ['a', 'b']) {
      const counter = Float64Array.from({ length: n }, (_, i) => (i % 500) * (job === 'a' ? 2 : 3) + (tenant === 't2' ? 1000 : 0));
      heads.append(tenant, labelsFromRecord({ __name__: 'c_total', job }), ts, counter);
      heads.append(
        tenant,
        labelsFromRecord({ __name__: 'g', job }),
        ts,
        Float64Array.from({ length: n }, (_, i) => Math.sin(i / 30)),
      );
    }
  }
  return heads;
}

function runs(engine: Engine) {
  const calls: [number, number][] = [];
  const exec = (p: RangeQueryParams): Promise<QueryResult> => {
    calls.push([p.start, p.end]);
    return engine.rangeQuery(p);
  };
  return { calls, exec };
}

describe('results cache', () => {
  const heads = data();
  const engine = new Engine({ querier: heads });
  const now = 3 * DAY;

  it('splits at interval boundaries on the step grid and finds what extents miss', () => {
    assert.deepEqual(splitByInterval(DAY - 2 * H, DAY + H, H, DAY), [
      [DAY - 2 * H, DAY - H],
      [DAY, DAY + H],
    ]);
    assert.deepEqual(
      splitByInterval(0, 10, 7, 8),
      [
        [0, 7],
        [14, 14],
      ].slice(0, 1),
    );
    assert.deepEqual(missingRanges([{ start: 20, end: 40 }], 0, 100, 10), [
      [0, 10],
      [50, 100],
    ]);
    assert.deepEqual(missingRanges([{ start: 0, end: 100 }], 10, 90, 10), []);
    assert.equal(isSplittable('sum(rate(c_total[5m]))'), true);
    assert.equal(isSplittable('c_total @ end()'), false);
    assert.equal(isSplittable('c_total offset -5m'), false);
    assert.equal(isSplittable('sum(c_total) / scalar(end())'), false);
    assert.equal(isSplittable('rate(c_total[step()*4])'), true);
    assert.equal(isSplittable('rate(c_total[range()])'), false);
    assert.equal(isSplittable('c_total offset step()'), false);
  });

  it('answers exactly like the engine, from the cache the second time, per tenant', async () => {
    const backend = new MapBackend();
    const cache = new ResultsCache({ backend, splitIntervalMs: DAY, maxFreshnessMs: 10 * 60_000, ttlMs: DAY, now: () => now });
    for (const query of ['sum by (job) (rate(c_total[5m]))', 'max_over_time(g[17m]) * 2', 'avg(g) + time() - time()']) {
      const p = { tenant: 't1', query, start: 6 * H, end: now - 60_000, step: 5 * 60_000 };
      const direct = await engine.rangeQuery(p);
      const first = runs(engine);
      assert.deepEqual(await cache.rangeQuery(p, first.exec), direct, query);
      assert.equal(first.calls.length, 3); // Three days, three splits.
      const second = runs(engine);
      const cached = await cache.rangeQuery(p, second.exec);
      assert.deepEqual(cached, direct, query);
      // Everything up to 10 minutes ago came from the cache; only the newest point ran again.
      assert.deepEqual(second.calls, [[now - 5 * 60_000, now - 5 * 60_000]]);
      // Another tenant never sees t1's entries.
      const other = runs(engine);
      const t2 = await cache.rangeQuery({ ...p, tenant: 't2' }, other.exec);
      assert.equal(other.calls.length, 3);
      assert.deepEqual(t2, await engine.rangeQuery({ ...p, tenant: 't2' }));
    }
  });

  it('extends cached extents when a dashboard window moves, and aligns to the step', async () => {
    const backend = new MapBackend();
    const cache = new ResultsCache({ backend, splitIntervalMs: DAY, maxFreshnessMs: 10 * 60_000, ttlMs: DAY, now: () => now });
    const query = 'sum(rate(c_total[5m]))';
    const step = 60_000;
    await cache.rangeQuery({ tenant: 't1', query, start: DAY + H, end: DAY + 3 * H, step }, runs(engine).exec);
    const moved = runs(engine);
    const r = await cache.rangeQuery({ tenant: 't1', query, start: DAY + 2 * H + 7, end: DAY + 4 * H + 30_000, step }, moved.exec);
    assert.deepEqual(moved.calls, [[DAY + 3 * H + step, DAY + 4 * H]]);
    // Start and end were aligned down to the step.
    assert.deepEqual(r, await engine.rangeQuery({ tenant: 't1', query, start: DAY + 2 * H, end: DAY + 4 * H, step }));
  });

  it("runs at most the tenant's max_query_parallelism splits of one query at once", async () => {
    const parallelism: Record<string, number> = { t1: 1, t2: 3 };
    const cache = new ResultsCache({
      backend: new MapBackend(),
      splitIntervalMs: DAY,
      maxFreshnessMs: 0,
      ttlMs: DAY,
      now: () => now,
      concurrency: (t) => parallelism[t],
    });
    for (const tenant of ['t1', 't2']) {
      let running = 0;
      let most = 0;
      const exec = async (p: RangeQueryParams): Promise<QueryResult> => {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 10));
        running--;
        return engine.rangeQuery(p);
      };
      // Three days: three splits.
      await cache.rangeQuery({ tenant, query: 'sum(c_total)', start: 0, end: 3 * DAY - H, step: H }, exec);
      assert.equal(most, parallelism[tenant], tenant);
    }
  });

  it('runs queries that depend on their own range unsplit and uncached', async () => {
    const backend = new MapBackend();
    const cache = new ResultsCache({ backend, splitIntervalMs: DAY, maxFreshnessMs: 0, ttlMs: DAY, now: () => now });
    const p = { tenant: 't1', query: 'g @ end()', start: 0, end: 2 * DAY, step: H };
    const r = runs(engine);
    assert.deepEqual(await cache.rangeQuery(p, r.exec), await engine.rangeQuery(p));
    assert.deepEqual(r.calls, [[0, 2 * DAY]]);
    assert.equal(backend.data.size, 0);
  });
});

describe('results cache on a real Redis', () => {
  let redis: ChildProcess;
  let port: number;
  before(async () => {
    port = await freePort();
    redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    while (!(await ping(port))) {
      if (Date.now() > deadline) throw new Error('redis-server did not start (apt-get install redis-server)');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  after(() => {
    if (redis.pid !== undefined && redis.exitCode === null) process.kill(redis.pid, 'SIGKILL');
  });

  it('stores extents with a TTL and serves them; a dead Redis only costs the cache', async () => {
    const heads = data();
    const engine = new Engine({ querier: heads });
    const backend = new RedisCacheBackend({ endpoint: `127.0.0.1:${port}` });
    await backend.start();
    const cache = new ResultsCache({ backend, splitIntervalMs: DAY, maxFreshnessMs: 10 * 60_000, ttlMs: 60_000, now: () => 3 * DAY });
    const p = { tenant: 't1', query: 'sum(rate(c_total[5m]))', start: 0, end: 2 * DAY, step: 10 * 60_000 };
    const direct = await engine.rangeQuery(p);
    assert.deepEqual(await cache.rangeQuery(p, runs(engine).exec), direct);
    const again = runs(engine);
    assert.deepEqual(await cache.rangeQuery(p, again.exec), direct);
    assert.deepEqual(again.calls, []);
    await backend.stop();

    // A long command timeout: an unreachable Redis must be skipped, not waited for.
    const dead = new RedisCacheBackend({ endpoint: '127.0.0.1:1', timeoutMs: 20_000 });
    await dead.start();
    const uncached = new ResultsCache({ backend: dead, splitIntervalMs: DAY, maxFreshnessMs: 0, ttlMs: 60_000, now: () => 3 * DAY });
    const started = Date.now();
    assert.deepEqual(await uncached.rangeQuery(p, runs(engine).exec), direct);
    const waited = Date.now() - started;
    console.log(`range query with an unreachable Redis: ${waited} ms`);
    assert.ok(waited < 800, `the query waited ${waited} ms for a dead Redis`);
    await dead.stop();
  });
});

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(500, () => done(false));
    s.once('error', () => done(false));
    s.once('connect', () => s.write('PING\r\n'));
    s.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen({ host: '127.0.0.1', port: 0 }, () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
