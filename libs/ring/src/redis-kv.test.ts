// The Redis KV against a real redis-server on a free loopback port (killed by
// pid after): atomic CAS under concurrent writers, TTLs, watching, fast
// failures while Redis is down, and the ring surviving a Redis restarted empty.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalRedis } from '@strata/local-cluster';
import { createLogger } from '@strata/service';
import { RedisKv } from './redis-kv.ts';
import { KvUnavailableError } from './errors.ts';
import { PartitionInstanceLifecycler } from './lifecycler.ts';
import { PartitionRingWatcher } from './ring-watcher.ts';
import { WritePartitions } from './write-partitions.ts';

const logger = createLogger('test', 'silent');

async function until(what: string, fn: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('Redis KV (real redis-server)', { timeout: 120_000 }, () => {
  let dir: string;
  let redis: LocalRedis;
  const clients: RedisKv[] = [];
  const client = async (pollIntervalMs = 50) => {
    const c = new RedisKv({ endpoint: redis.endpoint, timeoutMs: 500, pollIntervalMs });
    await c.start();
    clients.push(c);
    return c;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-redis-kv-'));
    redis = await LocalRedis.start(dir);
  });

  after(async () => {
    for (const c of clients) await c.stop();
    await redis?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('CAS is atomic under concurrent writers on several connections', async () => {
    const WRITERS = 24;
    const kvs = await Promise.all([client(), client(), client()]);
    // 24 at once: far more than the owners that ever race on a ring key, few enough that on a starved machine
    // no writer runs out of its compare-and-swap attempts (90 did, in parallel test runs at load 15).
    const writes = Array.from({ length: WRITERS }, (_, i) =>
      kvs[i % 3].cas<{ n: number; by: number[] }>('counter', (cur) => ({ value: { n: (cur?.n ?? 0) + 1, by: [...(cur?.by ?? []), i] } })),
    );
    await Promise.all(writes);
    const v = await kvs[0].get<{ n: number; by: number[] }>('counter');
    assert.equal(v!.n, WRITERS, 'no lost update');
    assert.deepEqual(
      [...v!.by].sort((a, b) => a - b),
      Array.from({ length: WRITERS }, (_, i) => i),
    );
  });

  test('no change means no write; delete; TTL expiry', async () => {
    const kv = await client();
    assert.equal(await kv.cas<number>('k', () => ({ value: 1 })), 1);
    assert.equal(await kv.cas<number>('k', () => undefined), 1);
    await kv.delete('k');
    assert.equal(await kv.get('k'), undefined);
    await kv.cas<number>('ttl', () => ({ value: 7, ttlMs: 150 }));
    assert.equal(await kv.get('ttl'), 7);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await kv.get('ttl'), undefined);
  });

  test("watch sees another client's writes", async () => {
    const [a, b] = await Promise.all([client(), client()]);
    const seen: (number | undefined)[] = [];
    const stop = a.watch<number>('w', (v) => seen.push(v));
    await until('the initial value', () => seen.length === 1);
    await b.cas<number>('w', () => ({ value: 5 }));
    await until('the change', () => seen.includes(5));
    stop();
    assert.deepEqual(seen, [undefined, 5]);
  });

  test('the ring outlives a Redis that dies and comes back empty; commands fail fast while it is down', async () => {
    const ingesterKv = await client();
    const distributorKv = await client();
    const l = new PartitionInstanceLifecycler({
      kv: ingesterKv,
      instanceId: 'ingester-zone-a-0',
      zone: 'a',
      partition: 0,
      address: () => '127.0.0.1:9095',
      heartbeatPeriodMs: 200,
      heartbeatTimeoutMs: 1000,
      minOwnersCount: 1,
      minOwnersDurationMs: 0,
      deleteInactivePartitionAfterMs: 0,
      pollIntervalMs: 50,
      logger,
    });
    await l.start();
    const watcher = new PartitionRingWatcher({ kv: distributorKv, logger });
    await watcher.start();
    const writes = new WritePartitions({ watcher, partitionCount: async () => 2, logger });
    await until('partition 0 ACTIVE', () => watcher.ring()?.state(0) === 'ACTIVE');
    assert.deepEqual((await writes.lookup()).partitions, [0]);

    await redis.kill('SIGKILL');
    const began = Date.now();
    await assert.rejects(distributorKv.get('anything'), KvUnavailableError);
    assert.ok(Date.now() - began < 2000, 'a command fails within the timeout, not after a queue drains');
    await until('the watcher to notice', () => watcher.status().source === 'stale');
    assert.deepEqual((await writes.lookup()).partitions, [0], 'the last known ring keeps writes going');

    await redis.restart();
    // The ingester re-registers its partition ACTIVE (its last state), and the distributor reads it again.
    await until('the ring back in Redis', async () => (await distributorKv.get('collectors/ingester-partitions').catch(() => undefined)) !== undefined);
    await until('the watcher to read it', () => watcher.status().source === 'kv');
    assert.equal(watcher.ring()?.state(0), 'ACTIVE');
    assert.deepEqual((await writes.lookup()).partitions, [0]);
    await watcher.stop();
    await l.stop();
  });
});
