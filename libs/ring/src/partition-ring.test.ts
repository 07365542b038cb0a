// Tokens and lookups of the partition ring: deterministic tokens, writes only
// to ACTIVE partitions, and consistent hashing (adding a partition moves about
// 1/(P+1) of the series, all of them to the new partition).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NoWritablePartitionError, PartitionRing } from './partition-ring.ts';
import { TOKENS_PER_PARTITION, fmix32, partitionTokens } from './tokens.ts';
import type { PartitionRingDesc, PartitionState } from './partition-ring-desc.ts';

function desc(states: PartitionState[]): PartitionRingDesc {
  const d: PartitionRingDesc = { partitions: {}, owners: {} };
  states.forEach((state, id) => (d.partitions[id] = { id, state, stateTimestamp: 0 }));
  return d;
}

/** Well-spread series tokens (the distributor's are fmix32 of an FNV hash too). */
const seriesTokens = (n: number) => Array.from({ length: n }, (_, i) => fmix32(i * 2654435761 + 17));

test('partition tokens are deterministic, unique, sorted, TOKENS_PER_PARTITION of them', () => {
  const a = partitionTokens(3);
  assert.equal(a.length, TOKENS_PER_PARTITION);
  assert.equal(new Set(a).size, TOKENS_PER_PARTITION);
  for (let i = 1; i < a.length; i++) assert.ok(a[i - 1] < a[i]);
  assert.deepEqual([...partitionTokens(3)], [...a]);
  assert.notDeepEqual([...partitionTokens(4)], [...a]);
});

test('a token goes to the partition owning the next ring token; the same token always to the same partition', () => {
  const ring = PartitionRing.fromDesc(desc(['ACTIVE', 'ACTIVE', 'ACTIVE']));
  const w = ring.writer();
  // A partition's own token maps to it.
  for (const id of [0, 1, 2]) for (const t of partitionTokens(id).slice(0, 10)) assert.equal(w.partitionFor(t), id);
  const counts = [0, 0, 0];
  for (const t of seriesTokens(30_000)) counts[w.partitionFor(t)]++;
  // Each third within ±25% with 128 tokens per partition.
  for (const c of counts) assert.ok(c > 7_500 && c < 12_500, `unbalanced: ${counts}`);
  const share = ring.ownership([0, 1, 2]);
  assert.ok(Math.abs([...share.values()].reduce((a, b) => a + b, 0) - 1) < 1e-9);
});

test('only ACTIVE partitions take writes; PENDING and INACTIVE keep their ring place but are skipped', () => {
  const ring = PartitionRing.fromDesc(desc(['ACTIVE', 'PENDING', 'INACTIVE', 'ACTIVE']));
  const w = ring.writer();
  assert.deepEqual(w.partitions, [0, 3]);
  const seen = new Set(seriesTokens(5000).map((t) => w.partitionFor(t)));
  assert.deepEqual([...seen].sort(), [0, 3]);
  // Kafka has only partitions 0..2: partition 3 is not written even though it is ACTIVE.
  assert.deepEqual(ring.writer(3).partitions, [0]);
  assert.equal(ring.writer(3).partitionFor(12345), 0);
});

test('no ACTIVE partition: writes fail with a retriable 503 naming the states', () => {
  const w = PartitionRing.fromDesc(desc(['PENDING', 'INACTIVE'])).writer();
  assert.throws(
    () => w.partitionFor(1),
    (err: unknown) =>
      err instanceof NoWritablePartitionError && err.kind === 'unavailable' && err.retriable && /0 ACTIVE, 1 PENDING, 1 INACTIVE/.test(err.message),
  );
});

test('activating a partition moves about 1/(P+1) of the series, every one of them to the new partition', () => {
  const tokens = seriesTokens(200_000);
  const report: string[] = [];
  for (const p of [1, 2, 3, 4, 8, 16, 32]) {
    // The new partition is already in the ring (PENDING), as it is when an ingester registers it.
    const before = PartitionRing.fromDesc(desc([...Array<PartitionState>(p).fill('ACTIVE'), 'PENDING'])).writer();
    const after = PartitionRing.fromDesc(desc(Array<PartitionState>(p + 1).fill('ACTIVE'))).writer();
    let moved = 0;
    for (const t of tokens) {
      const a = before.partitionFor(t);
      const b = after.partitionFor(t);
      if (a !== b) {
        moved++;
        assert.equal(b, p, `a series moved from ${a} to ${b}, not to the new partition ${p}`);
      }
    }
    const share = moved / tokens.length;
    report.push(`P=${p}→${p + 1}: ${(share * 100).toFixed(2)}% moved (ideal ${(100 / (p + 1)).toFixed(2)}%)`);
    assert.ok(share <= 1.5 / p, `P=${p}: ${share} of series moved, more than 1.5/P`);
    assert.ok(share >= 0.5 / (p + 1), `P=${p}: only ${share} moved; the new partition takes too little`);
  }
  console.log(`series moved when adding a partition:\n  ${report.join('\n  ')}`);
});

test('the all-ACTIVE fallback ring maps like a ring of the same ACTIVE partitions', () => {
  const fallback = PartitionRing.allActive(4).writer();
  const real = PartitionRing.fromDesc(desc(['ACTIVE', 'ACTIVE', 'ACTIVE', 'ACTIVE'])).writer();
  for (const t of seriesTokens(2000)) assert.equal(fallback.partitionFor(t), real.partitionFor(t));
});
