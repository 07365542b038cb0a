// Ingester discovery from the partition ring with the static list as fallback.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartitionRing, type PartitionRingDesc } from '@strata/ring';
import { createLogger } from '@strata/service';
import type { Querier } from '@strata/model';
import { PartitionQuerier } from './partition-querier.ts';
import { RingIngesterDiscovery, type KnownIngester } from './ring-discovery.ts';

const logger = createLogger('test', 'silent');
const NOW = 1_700_000_000_000;

class FakeRingSource {
  current: PartitionRing | undefined;
  private listener: ((r: PartitionRing) => void) | undefined;
  onChange(l: (r: PartitionRing) => void) {
    this.listener = l;
    if (this.current) l(this.current);
    return () => (this.listener = undefined);
  }
  ring() {
    return this.current;
  }
  set(desc: PartitionRingDesc) {
    this.current = PartitionRing.fromDesc(desc);
    this.listener?.(this.current);
  }
}

function owner(id: string, partition: number, addr: string, heartbeatAgoMs = 0) {
  const zone = id.split('-')[2];
  return { id, partition, zone, addr, registeredTimestamp: NOW - 60_000, heartbeatTimestamp: NOW - heartbeatAgoMs };
}

test('static list until a ring exists; then ring owners (by their registered address), static entries only for instances the ring lacks', () => {
  const ring = new FakeRingSource();
  const querier = new PartitionQuerier({ replicas: [], logger });
  const opened: string[] = [];
  const closed: string[] = [];
  const staticIngesters: KnownIngester[] = [
    { id: 'ingester-zone-a-0', zone: 'a', partition: 0, address: 'static-a0:9095' },
    { id: 'ingester-zone-b-0', zone: 'b', partition: 0, address: 'static-b0:9095' },
  ];
  const d = new RingIngesterDiscovery({
    ring,
    staticIngesters,
    connect: (id, address) => {
      opened.push(`${id}@${address}`);
      return { querier: {} as Querier, close: () => closed.push(`${id}@${address}`) };
    },
    querier,
    heartbeatTimeoutMs: 60_000,
    logger,
    now: () => NOW,
  });
  d.start();
  assert.deepEqual(
    d.current(ring.ring()).map((i) => i.address),
    ['static-a0:9095', 'static-b0:9095'],
  );
  assert.deepEqual(querier.partitions, [0]);

  ring.set({
    partitions: {
      0: { id: 0, state: 'ACTIVE', stateTimestamp: NOW },
      1: { id: 1, state: 'INACTIVE', stateTimestamp: NOW },
      2: { id: 2, state: 'PENDING', stateTimestamp: NOW },
    },
    owners: {
      'ingester-zone-a-0': owner('ingester-zone-a-0', 0, '10.0.0.1:9095'),
      'ingester-zone-a-1': owner('ingester-zone-a-1', 1, '10.0.0.2:9095'),
      'ingester-zone-b-1': owner('ingester-zone-b-1', 1, '10.0.0.3:9095', 120_000), // heartbeat timed out
      'ingester-zone-a-2': owner('ingester-zone-a-2', 2, '10.0.0.4:9095'),
    },
  });
  const now = d
    .current(ring.ring())
    .map((i) => `${i.id}@${i.address}`)
    .sort();
  assert.deepEqual(now, [
    'ingester-zone-a-0@10.0.0.1:9095', // the ring's address wins over the static one
    'ingester-zone-a-1@10.0.0.2:9095', // INACTIVE partitions are still read; the unhealthy zone-b owner is skipped
    'ingester-zone-b-0@static-b0:9095', // not in the ring: the static fallback
  ]);
  assert.deepEqual(querier.partitions.sort(), [0, 1], 'the PENDING partition is not read');
  assert.ok(closed.includes('ingester-zone-a-0@static-a0:9095'), 'a replaced connection is closed');

  // A partition whose owners are all unhealthy is still read from them (better than nothing).
  ring.set({
    partitions: { 0: { id: 0, state: 'ACTIVE', stateTimestamp: NOW } },
    owners: { 'ingester-zone-a-0': owner('ingester-zone-a-0', 0, '10.0.0.1:9095', 120_000) },
  });
  assert.deepEqual(
    d
      .current(ring.ring())
      .map((i) => i.id)
      .sort(),
    ['ingester-zone-a-0', 'ingester-zone-b-0'],
  );
  d.stop();
  // A static list naming more partitions than the ring has: only the ring's partitions are read.
  const wide = new RingIngesterDiscovery({
    ring,
    staticIngesters: [...staticIngesters, { id: 'ingester-zone-a-7', zone: 'a', partition: 7, address: 'static-a7:9095' }],
    connect: () => ({ querier: {} as Querier, close: () => undefined }),
    querier: new PartitionQuerier({ replicas: [], logger }),
    heartbeatTimeoutMs: 60_000,
    logger,
    now: () => NOW,
  });
  assert.deepEqual(
    wide
      .current(undefined)
      .map((i) => i.partition)
      .sort(),
    [0, 0, 7],
    'no ring yet: the whole static list',
  );
  assert.deepEqual(
    wide
      .current(ring.ring())
      .map((i) => i.partition)
      .sort(),
    [0, 0],
    'partition 7 is not in the ring',
  );
  assert.equal(new Set(closed).size, new Set(opened).size, 'every connection closed on stop');
});
