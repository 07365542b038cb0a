// The ring watcher's health metrics: partitions by state and owners by heartbeat health.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { createLogger } from '@strata/service';
import { MemoryKv } from './memory-kv.ts';
import { PARTITION_RING_KEY, type PartitionRingDesc } from './partition-ring-desc.ts';
import { PartitionRingWatcher } from './ring-watcher.ts';

test('strata_partition_ring_owners counts owners by heartbeat health, strata_partition_ring_partitions by state', async () => {
  const kv = new MemoryKv();
  const now = Date.now();
  const owner = (id: string, partition: number, heartbeatTimestamp: number) => ({
    id,
    partition,
    zone: id.split('-')[2],
    addr: '127.0.0.1:9095',
    registeredTimestamp: now - 3_600_000,
    heartbeatTimestamp,
  });
  const desc: PartitionRingDesc = {
    partitions: { '0': { id: 0, state: 'ACTIVE', stateTimestamp: now }, '1': { id: 1, state: 'PENDING', stateTimestamp: now } },
    owners: {
      'ingester-zone-a-0': owner('ingester-zone-a-0', 0, now),
      'ingester-zone-b-0': owner('ingester-zone-b-0', 0, now - 120_000),
      'ingester-zone-a-1': owner('ingester-zone-a-1', 1, now - 5_000),
    },
  };
  await kv.cas<PartitionRingDesc>(PARTITION_RING_KEY, () => ({ value: desc }));
  const registry = new Registry();
  const watcher = new PartitionRingWatcher({ kv, logger: createLogger('test', 'silent'), registry, heartbeatTimeoutMs: 60_000 });
  await watcher.start();
  try {
    const text = await registry.metrics();
    assert.match(text, /strata_partition_ring_owners\{health="healthy"\} 2/);
    assert.match(text, /strata_partition_ring_owners\{health="unhealthy"\} 1/);
    assert.match(text, /strata_partition_ring_partitions\{state="ACTIVE"\} 1/);
    assert.match(text, /strata_partition_ring_partitions\{state="PENDING"\} 1/);
    assert.match(text, /strata_partition_ring_stale 0/);
  } finally {
    await watcher.stop();
  }
});
