// The HA tracker: election, dedup and failover with a fake clock on the
// in-process KV; one elected replica under concurrent first pushes through
// several distributors sharing a real redis-server; Redis down → 503.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KvUnavailableError, MemoryKv, RedisKv } from '@strata/ring';
import { LocalRedis } from '@strata/local-cluster';
import { createLogger } from '@strata/service';
import { HaTracker, validateTimeouts, type HaTrackerOptions } from './ha-tracker.ts';
import { HaTrackerError } from './errors.ts';
import { findHaLabels, withoutLabel } from './labels.ts';

const logger = createLogger('test', 'silent');
const S = 1000;

function tracker(kv: HaTrackerOptions['kv'], now: () => number): HaTracker {
  return new HaTracker({ kv, updateTimeoutMs: 15 * S, updateTimeoutJitterMaxMs: 0, failoverTimeoutMs: 30 * S, logger, now });
}

test('the first replica is elected; the other is rejected until the elected one is silent for the failover timeout', async () => {
  const kv = new MemoryKv();
  let t = 1_700_000_000_000;
  const t0 = t;
  const d1 = tracker(kv, () => t);
  const d2 = tracker(kv, () => t); // a second distributor on the same KV
  assert.deepEqual(await d1.checkReplica('team-a', 'prod', 'r1'), { accepted: true, elected: 'r1' });
  assert.deepEqual(await d2.checkReplica('team-a', 'prod', 'r2'), { accepted: false, elected: 'r1' });
  // r1 pushes every 5s through both distributors for 40s; r2 is always rejected.
  for (t = t0 + 5 * S; t <= t0 + 40 * S; t += 5 * S) {
    assert.equal((await (t % 2 ? d1 : d2).checkReplica('team-a', 'prod', 'r1')).accepted, true);
    assert.equal((await d1.checkReplica('team-a', 'prod', 'r2')).accepted, false);
    assert.equal((await d2.checkReplica('team-a', 'prod', 'r2')).accepted, false);
  }
  // The KV keeps r1's timestamp at most update-timeout old: it was last written at t0+30s.
  const stored = await kv.get<{ replica: string; receivedAt: number }>('ha-tracker/team-a/prod');
  assert.equal(stored!.replica, 'r1');
  assert.equal(stored!.receivedAt, t0 + 30 * S);
  // r1 stops after t0+40s. Failover happens 30s after the stored timestamp.
  t = t0 + 59 * S;
  assert.equal((await d2.checkReplica('team-a', 'prod', 'r2')).accepted, false);
  t = t0 + 60 * S;
  assert.deepEqual(await d2.checkReplica('team-a', 'prod', 'r2'), { accepted: true, elected: 'r2' });
  // Every distributor now follows r2, and r1 (back again) is the one rejected.
  t += 1;
  assert.deepEqual(await d1.checkReplica('team-a', 'prod', 'r1'), { accepted: false, elected: 'r2' });
  assert.equal((await d1.checkReplica('team-a', 'prod', 'r2')).accepted, true);
  const after = await kv.get<{ replica: string; electedChanges: number }>('ha-tracker/team-a/prod');
  assert.equal(after!.replica, 'r2');
  assert.equal(after!.electedChanges, 1);
  // Clusters and tenants are independent.
  assert.equal((await d1.checkReplica('team-a', 'staging', 'r1')).accepted, true);
  assert.equal((await d1.checkReplica('team-b', 'prod', 'r1')).accepted, true);
});

test('the KV unreachable: no replica is accepted on a guess (503), only on what was checked within the update timeout', async () => {
  const kv = new MemoryKv();
  let t = 1_700_000_000_000;
  const d = tracker(kv, () => t);
  assert.equal((await d.checkReplica('team-a', 'prod', 'r1')).accepted, true);
  kv.failWith = new KvUnavailableError('redis 127.0.0.1:6379 did not answer: connect ECONNREFUSED');
  // Within the update timeout the last check stands (the KV could not have failed over yet) ...
  t += 10 * S;
  assert.equal((await d.checkReplica('team-a', 'prod', 'r1')).accepted, true);
  assert.equal((await d.checkReplica('team-a', 'prod', 'r2')).accepted, false);
  // ... after it, the elected replica's push needs the KV: 503, not acceptance.
  t += 6 * S;
  await assert.rejects(
    d.checkReplica('team-a', 'prod', 'r1'),
    (e: unknown) => e instanceof HaTrackerError && e.kind === 'unavailable' && /retry/.test(e.message),
  );
  // A cluster never checked before: 503 for every replica.
  await assert.rejects(d.checkReplica('team-a', 'other', 'r1'), HaTrackerError);
  await assert.rejects(d.checkReplica('team-a', 'other', 'r2'), HaTrackerError);
  // Past the failover timeout the other replica is not accepted on a guess either.
  t += 20 * S;
  await assert.rejects(d.checkReplica('team-a', 'prod', 'r2'), HaTrackerError);
});

test('ha_max_clusters: a new cluster over the limit is refused (400) on every distributor; known ones pass; silent ones are forgotten after the entry TTL', async () => {
  const kv = new MemoryKv();
  let t = 1_700_000_000_000;
  const d1 = tracker(kv, () => t);
  const d2 = tracker(kv, () => t);
  assert.equal((await d1.checkReplica('team-a', 'eu', 'r1', 2)).accepted, true);
  assert.equal((await d2.checkReplica('team-a', 'us', 'r1', 2)).accepted, true);
  const tooMany = (e: unknown) =>
    e instanceof HaTrackerError &&
    e.kind === 'bad-input' &&
    e.code === 'err-strata-too-many-ha-clusters' &&
    /maximum of 2 HA clusters and "ap"/.test(e.message);
  await assert.rejects(d1.checkReplica('team-a', 'ap', 'r1', 2), tooMany);
  await assert.rejects(d2.checkReplica('team-a', 'ap', 'r2', 2), tooMany);
  // A distributor that never saw "eu" still lets it through (the list is in the KV), and its follower is still deduped.
  const d3 = tracker(kv, () => t);
  assert.equal((await d3.checkReplica('team-a', 'eu', 'r1', 2)).accepted, true);
  assert.equal((await d3.checkReplica('team-a', 'eu', 'r2', 2)).accepted, false);
  // Limits are per tenant; 0 means none.
  assert.equal((await d1.checkReplica('team-b', 'ap', 'r1', 2)).accepted, true);
  for (let i = 0; i < 5; i++) assert.equal((await d1.checkReplica('team-c', `c${i}`, 'r1', 0)).accepted, true);
  // A raised limit applies to the next push.
  assert.equal((await d1.checkReplica('team-a', 'ap', 'r1', 3)).accepted, true);
  // "us" and "ap" keep pushing; "eu" goes silent and is forgotten after 30m, making room for "sa".
  for (let step = 0; step < 31; step++) {
    t += 60 * S;
    await d1.checkReplica('team-a', 'us', 'r1', 3);
    await d2.checkReplica('team-a', 'ap', 'r1', 3);
  }
  assert.equal((await d2.checkReplica('team-a', 'sa', 'r1', 3)).accepted, true);
  const list = await kv.get<{ clusters: Record<string, number> }>('ha-tracker-clusters/team-a');
  assert.deepEqual(Object.keys(list!.clusters).sort(), ['ap', 'sa', 'us']);
});

test('timeouts are validated as Mimir does: failover ≥ update + jitter + 1s', () => {
  assert.doesNotThrow(() => validateTimeouts(15 * S, 5 * S, 30 * S));
  assert.throws(() => validateTimeouts(15 * S, 5 * S, 20 * S), /at least 1s greater/);
  assert.throws(() => validateTimeouts(15 * S, -1, 30 * S), /negative/);
});

test('HA labels come from a series; the replica label is removed, the array kept when absent', () => {
  const labels = [
    { name: '__name__', value: 'up' },
    { name: '__replica__', value: 'r1' },
    { name: 'cluster', value: 'prod' },
  ];
  assert.deepEqual(findHaLabels(labels, 'cluster', '__replica__'), { cluster: 'prod', replica: 'r1' });
  assert.deepEqual(findHaLabels(labels, 'dc', 'replica'), { cluster: '', replica: '' });
  assert.deepEqual(
    withoutLabel(labels, '__replica__').map((l) => l.name),
    ['__name__', 'cluster'],
  );
  assert.equal(withoutLabel(labels, 'nope'), labels);
});

describe('HA tracker on a real redis-server', { timeout: 120_000 }, () => {
  let dir: string;
  let redis: LocalRedis;
  const kvs: RedisKv[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-ha-redis-'));
    redis = await LocalRedis.start(dir);
    for (let i = 0; i < 4; i++) {
      const kv = new RedisKv({ endpoint: redis.endpoint, timeoutMs: 500 });
      await kv.start();
      kvs.push(kv);
    }
  });

  after(async () => {
    for (const kv of kvs) await kv.stop();
    await redis?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('concurrent first pushes of two replicas through four distributors elect exactly one', async () => {
    for (let round = 0; round < 10; round++) {
      const trackers = kvs.map((kv) => tracker(kv, Date.now));
      const cluster = `race-${round}`;
      const calls = Array.from({ length: 40 }, (_, i) =>
        trackers[i % 4].checkReplica('team-a', cluster, i % 2 ? 'r2' : 'r1').then((d) => ({ replica: i % 2 ? 'r2' : 'r1', ...d })),
      );
      const decisions = await Promise.all(calls);
      const electedSeen = new Set(decisions.map((d) => d.elected));
      assert.equal(electedSeen.size, 1, `round ${round}: decisions name ${[...electedSeen]}`);
      const [elected] = electedSeen;
      for (const d of decisions) assert.equal(d.accepted, d.replica === elected, `round ${round}: ${d.replica} accepted=${d.accepted}, elected ${elected}`);
      assert.equal((await kvs[0].get<{ replica: string }>(`ha-tracker/team-a/${cluster}`))!.replica, elected);
    }
  });

  test('ha_max_clusters under concurrent new clusters through four distributors: exactly the limit is admitted', async () => {
    for (let round = 0; round < 5; round++) {
      const trackers = kvs.map((kv) => tracker(kv, Date.now));
      const tenant = `tenant-max-${round}`;
      const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => trackers[i % 4].checkReplica(tenant, `c${i}`, 'r1', 5)));
      const admitted = results.filter((r) => r.status === 'fulfilled').length;
      const refused = results.filter((r) => r.status === 'rejected' && r.reason instanceof HaTrackerError && r.reason.kind === 'bad-input').length;
      assert.equal(admitted, 5, `round ${round}: ${admitted} admitted`);
      assert.equal(refused, 7, `round ${round}: ${refused} refused as bad-input (400 at the push edge)`);
      const list = await kvs[0].get<{ clusters: Record<string, number> }>(`ha-tracker-clusters/${tenant}`);
      assert.equal(Object.keys(list!.clusters).length, 5);
    }
  });

  test('Redis down: checks that need the KV fail with 503', async () => {
    const d = tracker(kvs[0], Date.now);
    assert.equal((await d.checkReplica('team-a', 'down-test', 'r1')).accepted, true);
    await redis.kill('SIGKILL');
    try {
      await assert.rejects(d.checkReplica('team-a', 'never-seen', 'r1'), (e: unknown) => e instanceof HaTrackerError && e.kind === 'unavailable');
    } finally {
      await redis.restart();
    }
  });
});
