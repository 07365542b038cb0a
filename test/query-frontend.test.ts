// The read path's front half as separate processes: a query-scheduler, a query-frontend, and a
// single process whose querier pulls work from the scheduler (-querier.scheduler-address).
// Queries sent to the frontend answer exactly what the querier answers directly; the scheduler
// counts the querier's worker streams; a slow query leaves its line in the frontend's log; with
// the scheduler gone the querier's /ready says so and the frontend answers 503.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { api, push, waitFor } from './support/client.ts';
import { startSingleProcess, type SingleProcess } from './support/single-process.ts';

const TENANT = { 'X-Scope-OrgID': 'team-a' };
const WORKERS = 3;

describe('query-frontend and query-scheduler in front of a querier', { timeout: 300_000 }, () => {
  let dir: string;
  let scheduler: AppProcess;
  let frontend: AppProcess;
  let strata: SingleProcess;
  const t0 = Date.now() - 120_000;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-query-frontend-'));
    const [schedHttp, schedGrpc, feHttp, feGrpc] = await freePorts(4);
    scheduler = new AppProcess({
      name: 'query-scheduler',
      target: 'query-scheduler',
      httpPort: schedHttp,
      logFile: join(dir, 'query-scheduler.log'),
      args: [`-server.http-listen-port=${schedHttp}`, `-server.grpc-listen-port=${schedGrpc}`, '-query-scheduler.max-outstanding-requests-per-tenant=50'],
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
      ],
    });
    frontend.start();
    await frontend.waitReady();
    strata = await startSingleProcess('query-frontend-querier', [
      '-auth.multitenancy-enabled=true',
      `-querier.scheduler-address=127.0.0.1:${schedGrpc}`,
      '-querier.id=querier-all',
      `-querier.max-concurrent=${WORKERS}`,
    ]);
    const series = ['a', 'b', 'c'].map((instance, i) => ({
      labels: [
        { name: '__name__', value: 'http_requests_total' },
        { name: 'job', value: 'api' },
        { name: 'instance', value: instance },
      ],
      samples: Array.from({ length: 8 }, (_, k) => ({ value: (i + 1) * k * 10, timestamp: t0 + k * 15_000 })),
    }));
    const res = await push(strata.strata.url, series, TENANT);
    assert.equal(res.status, 200, res.body);
  });

  after(async () => {
    await strata?.stop();
    await frontend?.kill('SIGTERM');
    await scheduler?.kill('SIGTERM');
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('a query through the frontend answers exactly what the querier answers directly', async () => {
    const end = String((t0 + 7 * 15_000) / 1000);
    const queries: [string, Record<string, string>][] = [
      ['/prometheus/api/v1/query', { query: 'sum by (instance) (rate(http_requests_total[1m]))', time: end }],
      ['/prometheus/api/v1/query_range', { query: 'http_requests_total', start: String(t0 / 1000), end, step: '15' }],
      ['/prometheus/api/v1/series', { 'match[]': 'http_requests_total' }],
      ['/prometheus/api/v1/label/instance/values', {}],
      ['/prometheus/api/v1/query', { query: 'sum(', time: end }],
    ];
    await waitFor('the pushed series are queryable', async () => {
      const r = await api<{ result: unknown[] }>(strata.strata.url, queries[0][0], queries[0][1], { headers: TENANT });
      return r.data?.result?.length === 3 ? true : undefined;
    });
    for (const [path, params] of queries) {
      const direct = await api(strata.strata.url, path, params, { headers: TENANT });
      const fronted = await api(frontend.url, path, params, { headers: TENANT });
      assert.equal(fronted.httpStatus, direct.httpStatus, path);
      assert.deepEqual(fronted, direct, path);
    }
    const other = await api<{ result: unknown[] }>(
      frontend.url,
      '/prometheus/api/v1/query',
      { query: 'http_requests_total' },
      { headers: { 'X-Scope-OrgID': 'team-b' } },
    );
    assert.deepEqual(other.data.result, [], "another tenant sees none of team-a's series");
  });

  test("the scheduler holds the querier's worker streams; the frontend logs a slow query with its queue time", async () => {
    const metrics = await (await fetch(`${scheduler.url}/metrics`)).text();
    assert.match(metrics, new RegExp(`strata_query_scheduler_connected_querier_clients(\\{[^}]*\\})? ${WORKERS}\\b`));
    assert.match(metrics, /strata_query_scheduler_queue_duration_seconds_count\{[^}]*user="team-a"[^}]*\} [1-9]/);
    const line = readFileSync(frontend.opts.logFile, 'utf8')
      .split('\n')
      .find((l) => l.includes('slow query') && l.includes('query_range'));
    assert.ok(line, 'a slow-query line for the range query');
    const entry = JSON.parse(line) as Record<string, unknown>;
    assert.equal(entry.tenant, 'team-a');
    assert.equal(entry.querier, 'querier-all');
    assert.equal(entry.step, '15');
    assert.equal(typeof entry.queue_ms, 'number');
  });

  test('without a scheduler the querier is not ready and says why; the frontend answers 503', async () => {
    await scheduler.kill('SIGTERM');
    await waitFor('the querier reports the lost scheduler', async () => {
      const r = await fetch(`${strata.strata.url}/ready`);
      const body = await r.text();
      return r.status === 503 && /not connected to the query-scheduler/.test(body) ? true : undefined;
    });
    const r = await api(frontend.url, '/prometheus/api/v1/query', { query: 'up' }, { headers: TENANT });
    assert.equal(r.httpStatus, 503);
    assert.equal(r.errorType, 'unavailable');
  });
});
