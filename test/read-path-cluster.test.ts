// The multi-process layout with the read path's front half (LocalCluster queryFrontend): Kafka,
// a distributor, 2 partitions x 2 zones of ingesters, a query-scheduler, a query-frontend and two
// queriers pulling from the scheduler. Queries through the frontend answer as a querier does
// directly, and the work spreads over both queriers.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCluster } from '@strata/local-cluster';
import { api, push, waitFor } from './support/client.ts';

const TENANT = { 'X-Scope-OrgID': 'team-a' };

describe('a cluster with a query-frontend, a query-scheduler and two queriers', { timeout: 300_000 }, () => {
  let dir: string;
  let cluster: LocalCluster;
  const t0 = Date.now() - 300_000;
  const end = String((t0 + 19 * 15_000) / 1000);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-read-path-'));
    cluster = await LocalCluster.start({
      dataDir: dir,
      partitions: 2,
      queryFrontend: true,
      queriers: 2,
      extraArgs: { 'query-frontend': ['-query-frontend.log-queries-longer-than=1ms'], querier: ['-querier.max-concurrent=2'] },
    });
    const series = Array.from({ length: 40 }, (_, i) => ({
      labels: [
        { name: '__name__', value: 'node_cpu_seconds_total' },
        { name: 'cpu', value: String(i) },
        { name: 'instance', value: `host-${i % 10}` },
        { name: 'mode', value: ['idle', 'user', 'system', 'iowait'][i % 4] },
      ],
      samples: Array.from({ length: 20 }, (_, k) => ({ value: (i + 1) * k, timestamp: t0 + k * 15_000 })),
    }));
    const res = await push(cluster.distributorUrl, series, TENANT);
    assert.equal(res.status, 200, res.body);
    await waitFor('both partitions consumed', async () => {
      const r = await api<{ result: unknown[] }>(
        cluster.querierUrl,
        '/prometheus/api/v1/query',
        { query: 'node_cpu_seconds_total', time: end },
        { headers: TENANT },
      );
      return r.data?.result?.length === 40 ? true : undefined;
    });
  });

  after(async () => {
    await cluster?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('through the frontend: the same answers as a querier gives directly, run by both queriers', async () => {
    const queries: Record<string, string>[] = [
      { query: 'sum by (mode) (rate(node_cpu_seconds_total[1m]))', time: end },
      { query: 'quantile by (mode) (0.9, rate(node_cpu_seconds_total[2m]))', start: String(t0 / 1000), end, step: '15' },
      { query: 'topk(3, node_cpu_seconds_total)', time: end },
    ];
    for (let round = 0; round < 8; round++) {
      await Promise.all(
        queries.map(async (params) => {
          const path = 'step' in params ? '/prometheus/api/v1/query_range' : '/prometheus/api/v1/query';
          const [direct, fronted] = await Promise.all([
            api(cluster.querierUrl, path, params, { headers: TENANT }),
            api(cluster.frontendUrl, path, params, { headers: TENANT }),
          ]);
          assert.equal(fronted.httpStatus, 200, fronted.error);
          assert.deepEqual(fronted, direct, params.query);
        }),
      );
    }
    const ran = new Set(
      readFileSync(cluster.process('query-frontend').opts.logFile, 'utf8')
        .split('\n')
        .filter((l) => l.includes('slow query'))
        .map((l) => (JSON.parse(l) as { querier: string }).querier),
    );
    assert.deepEqual([...ran].sort(), ['querier', 'querier-1']);
  });
});
