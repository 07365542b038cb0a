// The partition ring and the HA tracker across real processes, a real Kafka
// broker and a real redis-server: ingesters register and their partitions turn
// ACTIVE on the distributor's ring page; of two HA replicas pushing the same
// series only the elected one's samples are stored (the other gets 202), the
// replica label is gone from stored series, and when the elected replica stops
// for longer than the failover timeout the other one takes over; a tenant's HA
// cluster beyond ha_max_clusters is refused with 400.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCluster } from '@strata/local-cluster';
import { RedisKv } from '@strata/ring';
import { api, push, waitFor, type MatrixSeries } from './support/client.ts';

const TENANT = { 'X-Scope-OrgID': 'team-ha' };
const FAILOVER_MS = 3000;

describe('partition ring and HA tracker in Redis (multi-process)', { timeout: 600_000 }, () => {
  let cluster: LocalCluster;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-ha-ring-'));
    cluster = await LocalCluster.start({
      dataDir: dir,
      partitions: 2,
      zones: ['a'],
      redis: true,
      extraArgs: {
        ingester: ['-ingester.partition-ring.min-partition-owners-duration=1s', '-ingester.ring.heartbeat-period=1s'],
        distributor: [
          '-distributor.ha-tracker.enable=true',
          '-distributor.ha-tracker.enable-for-all-users=true',
          '-distributor.ha-tracker.update-timeout=1s',
          '-distributor.ha-tracker.update-timeout-jitter-max=0s',
          `-distributor.ha-tracker.failover-timeout=${FAILOVER_MS / 1000}s`,
          '-distributor.ha-tracker.max-clusters=2',
        ],
      },
    });
  });

  after(async () => {
    await cluster?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('the ring status page lists both partitions ACTIVE, each owned by its registered ingester', async () => {
    const res = await fetch(`${cluster.distributorUrl}/ingester/partition-ring`, { headers: { accept: 'application/json' } });
    assert.equal(res.status, 200);
    const ring = (await res.json()) as {
      source: string;
      kv: string;
      write_partitions: number[];
      partitions: { id: number; state: string; owners: { id: string; addr: string; healthy: boolean }[] }[];
    };
    assert.equal(ring.source, 'kv');
    assert.equal(ring.kv, `redis ${cluster.redis!.endpoint}`);
    assert.deepEqual(
      ring.partitions.map((p) => [p.id, p.state]),
      [
        [0, 'ACTIVE'],
        [1, 'ACTIVE'],
      ],
    );
    assert.deepEqual(ring.write_partitions, [0, 1]);
    for (const p of ring.partitions) {
      assert.equal(p.owners.length, 1);
      assert.equal(p.owners[0].id, `ingester-zone-a-${p.id}`);
      assert.match(p.owners[0].addr, /^127\.0\.0\.1:\d+$/);
      assert.equal(p.owners[0].healthy, true);
    }
    const html = await fetch(`${cluster.distributorUrl}/ingester/partition-ring`);
    assert.match(html.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await html.text(), /<td class="ACTIVE">ACTIVE<\/td>/);
  });

  test('two HA replicas: only the elected one is stored, without __replica__; the other takes over after the failover timeout', async () => {
    const series = (replica: string, t: number, value: number) =>
      [0, 1, 2, 3].map((i) => ({
        labels: [
          { name: '__name__', value: 'ha_metric' },
          { name: '__replica__', value: replica },
          { name: 'cluster', value: 'prod' },
          { name: 'instance', value: `host-${i}` },
        ],
        samples: [{ value: value + i, timestamp: t }],
      }));
    const sent = { r1: [] as number[], r2: [] as number[] };
    let t = Date.now() - 60_000;
    // Both replicas scrape the same targets every "second"; r1 pushes first and is elected.
    for (let round = 0; round < 5; round++) {
      t += 1000;
      const a = await push(cluster.distributorUrl, series('r1', t, 1000 + round * 10), TENANT);
      assert.equal(a.status, 200, `r1 round ${round}: ${a.status} ${a.body}`);
      sent.r1.push(t);
      const b = await push(cluster.distributorUrl, series('r2', t, 2000 + round * 10), TENANT);
      assert.equal(b.status, 202, `r2 round ${round}: ${b.status} ${b.body}`);
      assert.match(b.body, /"r1" is the elected one/);
      await new Promise((r) => setTimeout(r, 300));
    }
    // r1 stops. r2 keeps pushing: 202 until r1 has been silent for the failover timeout, then 200.
    const stoppedAt = Date.now();
    let takeoverAfterMs: number | undefined;
    for (let round = 5; round < 60 && takeoverAfterMs === undefined; round++) {
      t += 1000;
      const b = await push(cluster.distributorUrl, series('r2', t, 2000 + round * 10), TENANT);
      if (b.status === 200) {
        takeoverAfterMs = Date.now() - stoppedAt;
        sent.r2.push(t);
      } else {
        assert.equal(b.status, 202, `r2 round ${round}: ${b.status} ${b.body}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(takeoverAfterMs !== undefined, 'r2 never took over');
    assert.ok(takeoverAfterMs >= FAILOVER_MS - 1000, `r2 took over after ${takeoverAfterMs}ms, before the failover timeout`);
    // r2 is elected now; r1 coming back is the one dropped.
    t += 1000;
    assert.equal((await push(cluster.distributorUrl, series('r2', t, 9000), TENANT)).status, 200);
    sent.r2.push(t);
    const late = await push(cluster.distributorUrl, series('r1', t, 7000), TENANT);
    assert.equal(late.status, 202);

    // What is stored: 4 series (no __replica__), r1's values before the takeover, r2's after, nothing else.
    const want = new Map<number, number>();
    sent.r1.forEach((ts, round) => want.set(ts, 1000 + round * 10));
    const stored = await waitFor('every accepted sample to be queryable', async () => {
      const res = await api<{ resultType: string; result: MatrixSeries[] }>(
        cluster.querierUrl,
        '/prometheus/api/v1/query',
        { query: 'ha_metric[10m]', time: String((t + 1000) / 1000) },
        { headers: TENANT },
      );
      if (res.httpStatus !== 200) throw new Error(`${res.httpStatus} ${res.error}`);
      const total = res.data.result.reduce((n, s) => n + s.values.length, 0);
      return total === 4 * (sent.r1.length + sent.r2.length) ? res.data.result : undefined;
    });
    assert.equal(stored.length, 4);
    for (const s of stored) {
      assert.deepEqual(Object.keys(s.metric).sort(), ['__name__', 'cluster', 'instance'], 'the replica label is not stored');
      const i = Number(s.metric.instance.slice('host-'.length));
      const byTime = new Map(s.values.map(([ts, v]) => [Math.round(ts * 1000), Number(v)]));
      for (const [ts, v] of want) assert.equal(byTime.get(ts), v + i, `${s.metric.instance} at ${ts}: r1's value`);
      for (const ts of sent.r2) assert.ok(byTime.get(ts)! >= 2000 + i, `${s.metric.instance} at ${ts}: r2's value after the takeover`);
      assert.ok(![...byTime.values()].some((v) => v >= 7000 && v < 8000), 'nothing from r1 after it lost the election');
    }
  });

  test('ha_max_clusters (2): a third HA cluster of a tenant gets 400 with the reason and is not stored; the first two go on', async () => {
    const headers = { 'X-Scope-OrgID': 'team-max' };
    const t = Date.now() - 60_000;
    const series = (cluster: string, v: number) => [
      {
        labels: [
          { name: '__name__', value: 'ha_max_metric' },
          { name: '__replica__', value: 'r1' },
          { name: 'cluster', value: cluster },
        ],
        samples: [{ value: v, timestamp: t + v }],
      },
    ];
    assert.equal((await push(cluster.distributorUrl, series('eu', 1), headers)).status, 200);
    assert.equal((await push(cluster.distributorUrl, series('us', 2), headers)).status, 200);
    const third = await push(cluster.distributorUrl, series('ap', 3), headers);
    assert.equal(third.status, 400, third.body);
    assert.match(third.body, /tenant "team-max" already has the maximum of 2 HA clusters and "ap" would be one more \(err-strata-too-many-ha-clusters\)/);
    assert.equal((await push(cluster.distributorUrl, series('eu', 4), headers)).status, 200, 'a known cluster still passes');
    const stored = await waitFor('eu and us stored', async () => {
      const r = await api<{ result: MatrixSeries[] }>(
        cluster.querierUrl,
        '/prometheus/api/v1/query',
        { query: 'ha_max_metric[10m]', time: String(Date.now() / 1000) },
        { headers },
      );
      return r.data.result.length === 2 && r.data.result.every((x) => x.values.length === (x.metric.cluster === 'eu' ? 2 : 1)) ? r : undefined;
    });
    assert.deepEqual(stored.data.result.map((x) => x.metric.cluster).sort(), ['eu', 'us'], 'nothing of "ap" stored');
    // The tenant's cluster list is in Redis, where every distributor reads it.
    const kv = new RedisKv({ endpoint: cluster.redis!.endpoint, timeoutMs: 2000 });
    await kv.start();
    try {
      const list = await kv.get<{ clusters: Record<string, number> }>('ha-tracker-clusters/team-max');
      assert.deepEqual(Object.keys(list!.clusters).sort(), ['eu', 'us']);
    } finally {
      await kv.stop();
    }
  });

  test('Redis down: HA pushes get 503 (never accepted unchecked), other pushes still go out on the last known ring; Redis back empty: all recovers', async () => {
    const redis = cluster.redis!;
    const ha = (replica: string, t: number) => [
      {
        labels: [
          { name: '__name__', value: 'ha_down' },
          { name: '__replica__', value: replica },
          { name: 'cluster', value: 'dr' },
        ],
        samples: [{ value: 1, timestamp: t }],
      },
    ];
    const plain = (t: number, v: number) => [
      {
        labels: [
          { name: '__name__', value: 'plain_metric' },
          { name: 'job', value: 'x' },
        ],
        samples: [{ value: v, timestamp: t }],
      },
    ];
    const t0 = Date.now() - 30_000;
    assert.equal((await push(cluster.distributorUrl, ha('r1', t0), TENANT)).status, 200);

    const electedAt = Date.now();
    await redis.kill('SIGKILL');
    // Past the update timeout the elected replica needs Redis to go on: 503. The other one is still
    // rejected from what was checked (it cannot have been elected before the failover timeout) ...
    await new Promise((r) => setTimeout(r, 1200));
    let res = await push(cluster.distributorUrl, ha('r1', t0 + 1000), TENANT);
    assert.equal(res.status, 503, `r1: ${res.status} ${res.body}`);
    assert.match(res.body, /HA tracker cannot check/);
    assert.equal((await push(cluster.distributorUrl, ha('r2', t0 + 1000), TENANT)).status, 202);
    // ... and past the failover timeout it would need Redis to take over: 503 as well, never a blind acceptance.
    await new Promise((r) => setTimeout(r, Math.max(0, electedAt + FAILOVER_MS + 200 - Date.now())));
    res = await push(cluster.distributorUrl, ha('r2', t0 + 1000), TENANT);
    assert.equal(res.status, 503, `r2: ${res.status} ${res.body}`);
    assert.equal((await push(cluster.distributorUrl, plain(t0, 1), TENANT)).status, 200, 'writes without HA labels do not need Redis');
    const stale = (await (await fetch(`${cluster.distributorUrl}/ingester/partition-ring`, { headers: { accept: 'application/json' } })).json()) as {
      source: string;
      write_partitions: number[];
    };
    assert.equal(stale.source, 'stale');
    assert.deepEqual(stale.write_partitions, [0, 1]);

    await redis.restart();
    // Ingesters re-register within a heartbeat; the distributor reads the ring again.
    await cluster.waitPartitionsActive(2, 30_000);
    await waitFor(
      'HA pushes accepted again',
      async () => ((await push(cluster.distributorUrl, ha('r2', t0 + 2000), TENANT)).status === 200 ? true : undefined),
      30_000,
    );
    assert.equal((await push(cluster.distributorUrl, plain(t0 + 1000, 2), TENANT)).status, 200);
    await waitFor('the plain series readable', async () => {
      const res = await api<{ result: MatrixSeries[] }>(
        cluster.querierUrl,
        '/prometheus/api/v1/query',
        { query: 'plain_metric[10m]', time: String(Date.now() / 1000) },
        { headers: TENANT },
      );
      return res.httpStatus === 200 && res.data.result[0]?.values.length === 2 ? true : undefined;
    });
  });
});
