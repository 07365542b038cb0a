// The ingester's side of the ring on the in-process KV with a fake clock:
// registration, PENDING → ACTIVE, heartbeats and their expiry, downscale and
// shutdown preparation (also over HTTP), and what readers do when the KV is
// empty or down.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { createLogger } from '@strata/service';
import { MemoryKv } from './memory-kv.ts';
import { KvUnavailableError } from './errors.ts';
import { PartitionInstanceLifecycler, type PartitionLifecyclerOptions } from './lifecycler.ts';
import { PARTITION_RING_KEY, eligibleOwnersCount, isHealthy, normalizeRingDesc, type PartitionRingDesc } from './partition-ring-desc.ts';
import { PartitionRingWatcher } from './ring-watcher.ts';
import { WritePartitions } from './write-partitions.ts';
import { registerIngesterRingRoutes, registerRingStatusPage, type RingStatusJson } from './http.ts';
import { NoWritablePartitionError } from './partition-ring.ts';

const logger = createLogger('test', 'silent');
const SECOND = 1000;

class Clock {
  t = 1_700_000_000_000;
  now = () => this.t;
  advance(ms: number) {
    this.t += ms;
  }
}

function lifecycler(kv: MemoryKv, clock: Clock, id: string, over: Partial<PartitionLifecyclerOptions> = {}) {
  const m = /^ingester-zone-([a-z])-(\d+)$/.exec(id)!;
  return new PartitionInstanceLifecycler({
    kv,
    instanceId: id,
    zone: m[1],
    partition: Number(m[2]),
    address: () => `10.0.0.${m[2]}:9095`,
    heartbeatPeriodMs: 15 * SECOND,
    heartbeatTimeoutMs: 60 * SECOND,
    minOwnersCount: 1,
    minOwnersDurationMs: 10 * SECOND,
    deleteInactivePartitionAfterMs: 0,
    pollIntervalMs: 3_600_000, // the test drives reconcile() itself
    logger,
    now: clock.now,
    ...over,
  });
}

async function ringDesc(kv: MemoryKv): Promise<PartitionRingDesc> {
  return normalizeRingDesc(await kv.get<PartitionRingDesc>(PARTITION_RING_KEY));
}

test('an ingester registers its partition PENDING, and it turns ACTIVE once owned for min-partition-owners-duration', async () => {
  const kv = new MemoryKv();
  const clock = new Clock();
  const l = lifecycler(kv, clock, 'ingester-zone-a-0');
  await l.start();
  let d = await ringDesc(kv);
  assert.equal(d.partitions[0].state, 'PENDING');
  assert.deepEqual(
    { ...d.owners['ingester-zone-a-0'] },
    { id: 'ingester-zone-a-0', partition: 0, zone: 'a', addr: '10.0.0.0:9095', registeredTimestamp: clock.t, heartbeatTimestamp: clock.t },
  );
  clock.advance(9 * SECOND);
  await l.reconcile();
  assert.equal((await ringDesc(kv)).partitions[0].state, 'PENDING');
  clock.advance(1 * SECOND);
  await l.reconcile();
  d = await ringDesc(kv);
  assert.equal(d.partitions[0].state, 'ACTIVE');
  assert.equal(d.partitions[0].stateTimestamp, clock.t);
  // The zone-b ingester of the same partition joins as a second owner without changing the state.
  const b = lifecycler(kv, clock, 'ingester-zone-b-0');
  await b.start();
  d = await ringDesc(kv);
  assert.deepEqual(Object.keys(d.owners).sort(), ['ingester-zone-a-0', 'ingester-zone-b-0']);
  assert.equal(d.partitions[0].state, 'ACTIVE');
  await l.stop();
  await b.stop();
});

test('min-partition-owners-count: a partition waits for enough owners', async () => {
  const kv = new MemoryKv();
  const clock = new Clock();
  const a = lifecycler(kv, clock, 'ingester-zone-a-1', { minOwnersCount: 2 });
  await a.start();
  clock.advance(60 * SECOND);
  await a.reconcile();
  assert.equal((await ringDesc(kv)).partitions[1].state, 'PENDING');
  const b = lifecycler(kv, clock, 'ingester-zone-b-1', { minOwnersCount: 2 });
  await b.start();
  clock.advance(10 * SECOND);
  await a.reconcile();
  assert.equal((await ringDesc(kv)).partitions[1].state, 'ACTIVE');
  await a.stop();
  await b.stop();
});

test('heartbeats: written every heartbeat period; an owner that stops is unhealthy after the timeout and stops counting', async () => {
  const kv = new MemoryKv();
  const clock = new Clock();
  const a = lifecycler(kv, clock, 'ingester-zone-a-0');
  await a.start();
  const t0 = clock.t;
  clock.advance(14 * SECOND);
  await a.reconcile();
  assert.equal((await ringDesc(kv)).owners['ingester-zone-a-0'].heartbeatTimestamp, t0, 'no write before the period');
  clock.advance(1 * SECOND);
  await a.reconcile();
  assert.equal((await ringDesc(kv)).owners['ingester-zone-a-0'].heartbeatTimestamp, t0 + 15 * SECOND);
  // The ingester dies (no more reconciles): healthy until the heartbeat timeout, then not.
  clock.advance(60 * SECOND);
  let o = (await ringDesc(kv)).owners['ingester-zone-a-0'];
  assert.equal(isHealthy(o, clock.t, 60 * SECOND), true);
  clock.advance(1);
  o = (await ringDesc(kv)).owners['ingester-zone-a-0'];
  assert.equal(isHealthy(o, clock.t, 60 * SECOND), false);
  assert.equal(eligibleOwnersCount(await ringDesc(kv), 0, clock.t, 10 * SECOND, 60 * SECOND), 0);
  // The status page says so.
  const watcher = new PartitionRingWatcher({ kv, logger });
  await watcher.start();
  const app = Fastify();
  registerRingStatusPage(app, {
    snapshot: () => ({ ring: watcher.ring(), source: watcher.status().source, kv: kv.description }),
    heartbeatTimeoutMs: 60 * SECOND,
    now: clock.now,
  });
  const res = await app.inject({ url: '/ingester/partition-ring', headers: { accept: 'application/json' } });
  const json = res.json() as RingStatusJson;
  assert.equal(json.partitions[0].owners[0].healthy, false);
  assert.equal(json.partitions[0].owners[0].heartbeat_age_seconds, 60);
  const html = await app.inject({ url: '/ingester/partition-ring' });
  assert.match(html.headers['content-type'] as string, /text\/html/);
  assert.match(html.body, /UNHEALTHY/);
  await watcher.stop();
  await a.stop();
});

test('prepare-partition-downscale: 409 while PENDING, POST → INACTIVE, GET shows it, DELETE → ACTIVE', async () => {
  const kv = new MemoryKv();
  const clock = new Clock();
  const l = lifecycler(kv, clock, 'ingester-zone-a-2');
  const app = Fastify();
  registerIngesterRingRoutes(app, { lifecycler: l, logger });
  assert.equal((await app.inject({ method: 'POST', url: '/ingester/prepare-partition-downscale' })).statusCode, 503, 'not running yet');
  await l.start();
  let res = await app.inject({ method: 'POST', url: '/ingester/prepare-partition-downscale' });
  assert.equal(res.statusCode, 409);
  assert.match(res.body, /PENDING/);
  clock.advance(10 * SECOND);
  await l.reconcile();
  res = await app.inject({ method: 'GET', url: '/ingester/prepare-partition-downscale' });
  assert.deepEqual(res.json(), { timestamp: 0, state: 'ACTIVE' });
  clock.advance(5 * SECOND);
  res = await app.inject({ method: 'POST', url: '/ingester/prepare-partition-downscale' });
  assert.deepEqual(res.json(), { timestamp: Math.floor(clock.t / 1000), state: 'INACTIVE' });
  assert.equal((await ringDesc(kv)).partitions[2].state, 'INACTIVE');
  // A reconcile does not bring an INACTIVE partition back.
  clock.advance(60 * SECOND);
  await l.reconcile();
  res = await app.inject({ method: 'GET', url: '/ingester/prepare-partition-downscale' });
  assert.equal(res.json().state, 'INACTIVE');
  res = await app.inject({ method: 'DELETE', url: '/ingester/prepare-partition-downscale' });
  assert.deepEqual(res.json(), { timestamp: 0, state: 'ACTIVE' });
  await l.stop();
});

test('prepare-shutdown: without it a stopped ingester stays an owner; with it, it leaves the ring; DELETE reverts', async () => {
  const kv = new MemoryKv();
  const clock = new Clock();
  const a = lifecycler(kv, clock, 'ingester-zone-a-0');
  await a.start();
  await a.stop();
  assert.ok((await ringDesc(kv)).owners['ingester-zone-a-0'], 'a plain restart keeps the registration');

  const b = lifecycler(kv, clock, 'ingester-zone-a-0');
  const app = Fastify();
  registerIngesterRingRoutes(app, { lifecycler: b, logger });
  await b.start();
  assert.equal((await app.inject({ url: '/ingester/prepare-shutdown' })).body, 'unset\n');
  assert.equal((await app.inject({ method: 'POST', url: '/ingester/prepare-shutdown' })).statusCode, 204);
  assert.equal((await app.inject({ url: '/ingester/prepare-shutdown' })).body, 'set\n');
  assert.equal((await app.inject({ method: 'DELETE', url: '/ingester/prepare-shutdown' })).statusCode, 204);
  assert.equal((await app.inject({ url: '/ingester/prepare-shutdown' })).body, 'unset\n');
  await app.inject({ method: 'POST', url: '/ingester/prepare-shutdown' });
  await b.stop();
  const d = await ringDesc(kv);
  assert.equal(d.owners['ingester-zone-a-0'], undefined);
  assert.ok(d.partitions[0], 'the partition itself stays (INACTIVE partitions are removed after delete-inactive-partition-after)');
});

test('an INACTIVE partition without owners is removed after delete-inactive-partition-after', async () => {
  const kv = new MemoryKv();
  const clock = new Clock();
  const gone = lifecycler(kv, clock, 'ingester-zone-a-1', { minOwnersDurationMs: 0 });
  await gone.start();
  await gone.prepareDownscale();
  gone.setRemoveOwnerOnShutdown(true);
  await gone.stop();
  const stays = lifecycler(kv, clock, 'ingester-zone-a-0', { minOwnersDurationMs: 0, deleteInactivePartitionAfterMs: 3600 * SECOND });
  await stays.start();
  assert.ok((await ringDesc(kv)).partitions[1]);
  clock.advance(3600 * SECOND);
  await stays.reconcile();
  assert.equal((await ringDesc(kv)).partitions[1], undefined);
  await stays.stop();
});

test('KV down at start: the ingester starts anyway and registers once the KV answers', async () => {
  const kv = new MemoryKv();
  const clock = new Clock();
  kv.failWith = new KvUnavailableError('redis 127.0.0.1:1 did not answer: connect ECONNREFUSED');
  const l = lifecycler(kv, clock, 'ingester-zone-a-0');
  await l.start();
  kv.failWith = undefined;
  assert.equal((await ringDesc(kv)).owners['ingester-zone-a-0'], undefined);
  await l.reconcile();
  assert.ok((await ringDesc(kv)).owners['ingester-zone-a-0']);
  await l.stop();
});

test('a KV that lost its data: the ingester re-creates its partition in the state it last saw, not PENDING', async () => {
  const kv = new MemoryKv();
  const clock = new Clock();
  const l = lifecycler(kv, clock, 'ingester-zone-a-0', { minOwnersDurationMs: 0 });
  await l.start();
  assert.equal((await ringDesc(kv)).partitions[0].state, 'ACTIVE');
  await kv.delete(PARTITION_RING_KEY);
  await l.reconcile();
  const d = await ringDesc(kv);
  assert.equal(d.partitions[0].state, 'ACTIVE');
  assert.ok(d.owners['ingester-zone-a-0']);
  await l.stop();
});

test('distributor writes: Kafka partitions before any ring, the ring once it exists, the last ring while the KV is empty or down', async () => {
  const kv = new MemoryKv();
  const clock = new Clock();
  const watcher = new PartitionRingWatcher({ kv, logger });
  await watcher.start();
  const writes = new WritePartitions({ watcher, partitionCount: async () => 3, logger });
  // Empty KV at startup: every Kafka partition.
  assert.deepEqual((await writes.lookup()).partitions, [0, 1, 2]);
  assert.equal((await writes.snapshot()).source, 'kafka-fallback');
  // Ingesters register: PENDING partitions are not written (503) ...
  const ls = [0, 1].map((n) => lifecycler(kv, clock, `ingester-zone-a-${n}`));
  for (const l of ls) await l.start();
  await new Promise((r) => setImmediate(r));
  await assert.rejects(async () => (await writes.lookup()).partitionFor(1), NoWritablePartitionError);
  // ... until they turn ACTIVE; partition 2 has no ingester and gets nothing.
  clock.advance(10 * SECOND);
  for (const l of ls) await l.reconcile();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual((await writes.lookup()).partitions, [0, 1]);
  // The KV loses everything: the last ring stays in use.
  await kv.delete(PARTITION_RING_KEY);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual((await writes.lookup()).partitions, [0, 1]);
  assert.equal(watcher.status().source, 'stale');
  for (const l of ls) await l.stop();
  await watcher.stop();
});

test('a KV unreachable since startup: no ring, writes go to every Kafka partition; the watcher says why', async () => {
  const kv = new MemoryKv();
  kv.failWith = new KvUnavailableError('redis 127.0.0.1:1 did not answer: connect ECONNREFUSED');
  const watcher = new PartitionRingWatcher({ kv, logger });
  await watcher.start();
  const writes = new WritePartitions({ watcher, partitionCount: async () => 2, logger });
  assert.deepEqual((await writes.lookup()).partitions, [0, 1]);
  const snap = await writes.snapshot();
  assert.equal(snap.source, 'kafka-fallback');
  assert.match(snap.reason!, /ECONNREFUSED/);
  await watcher.stop();
});

test('a KV that comes back with part of the ring: readers keep the missing partitions until they are re-registered', async () => {
  const kv = new MemoryKv();
  const clock = new Clock();
  const ls = [0, 1, 2].map((n) => lifecycler(kv, clock, `ingester-zone-a-${n}`, { minOwnersDurationMs: 0 }));
  for (const l of ls) await l.start();
  // Partition 2 is scaled down properly: INACTIVE, its owner gone.
  await ls[2].prepareDownscale();
  ls[2].setRemoveOwnerOnShutdown(true);
  await ls[2].stop();
  const watcher = new PartitionRingWatcher({ kv, logger });
  await watcher.start();
  assert.deepEqual(watcher.ring()!.partitionIds(), [0, 1, 2]);
  // Redis restarts empty and only partition 1 has re-registered so far; partition 2 was removed on purpose meanwhile.
  await kv.delete(PARTITION_RING_KEY);
  await ls[1].reconcile();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(watcher.ring()!.partitionIds('ACTIVE'), [0, 1], 'partition 0 kept, so series do not move and queriers still read it');
  assert.equal(watcher.ring()!.owners(0)[0].id, 'ingester-zone-a-0');
  assert.equal(watcher.ring()!.state(2), undefined, 'an INACTIVE partition without owners is not brought back');
  assert.equal(watcher.status().source, 'stale');
  await ls[0].reconcile();
  await new Promise((r) => setImmediate(r));
  assert.equal(watcher.status().source, 'kv');
  assert.deepEqual(watcher.ring()!.partitionIds('ACTIVE'), [0, 1]);
  for (const l of ls.slice(0, 2)) await l.stop();
  await watcher.stop();
});

test('an ingester over an instance limit publishes it at once: distributors see the partition refuse writes until it clears', async () => {
  const kv = new MemoryKv();
  const clock = new Clock();
  const watcher = new PartitionRingWatcher({ kv, logger });
  await watcher.start();
  const writes = new WritePartitions({ watcher, partitionCount: async () => 2, logger });
  const ls = [lifecycler(kv, clock, 'ingester-zone-a-0'), lifecycler(kv, clock, 'ingester-zone-b-0'), lifecycler(kv, clock, 'ingester-zone-a-1')];
  for (const l of ls) await l.start();
  clock.advance(10 * SECOND);
  for (const l of ls) await l.reconcile();
  await new Promise((r) => setImmediate(r));
  assert.equal((await writes.lookup()).refusal(0), undefined);
  // Zone b's ingester of partition 0 is full: partition 0 refuses (its zone-a copy would still grow), partition 1 does not.
  ls[1].setOverLimit('150000 series in memory, at the limit of 150000');
  await new Promise((r) => setTimeout(r, 10));
  const lookup = await writes.lookup();
  assert.equal(lookup.refusal(0), 'ingester-zone-b-0: 150000 series in memory, at the limit of 150000');
  assert.equal(lookup.refusal(1), undefined);
  // A heartbeat keeps it; clearing it lets writes through again.
  clock.advance(15 * SECOND);
  await ls[1].reconcile();
  assert.equal((await ringDesc(kv)).owners['ingester-zone-b-0'].overLimit, '150000 series in memory, at the limit of 150000');
  ls[1].setOverLimit(undefined);
  await new Promise((r) => setTimeout(r, 10));
  assert.equal((await writes.lookup()).refusal(0), undefined);
  assert.equal('overLimit' in (await ringDesc(kv)).owners['ingester-zone-b-0'], false);
  for (const l of ls) await l.stop();
  await watcher.stop();
});
