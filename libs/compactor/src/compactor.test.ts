import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labelsFromRecord, type Series } from '@strata/model';
import { FilesystemBucket, type Bucket } from '@strata/objstore';
import { createLogger } from '@strata/service';
import { BucketStore, readBucketIndex, uploadBlock, blockFileKey } from '@strata/storegateway';
import { writeBlock } from '@strata/tsdb';
import { Registry } from 'prom-client';
import { Compactor } from './index.ts';

const logger = createLogger('test', 'silent');
const S = 1000;

function series(s: number, from: number, to: number): Series {
  const n = (to - from) / S;
  const timestamps = Float64Array.from({ length: n }, (_, i) => from + i * S);
  const values = Float64Array.from(timestamps, (t) => s * 1e6 + t / S);
  return { labels: labelsFromRecord({ __name__: 'm', s: String(s) }), timestamps, values };
}

/** Both zones' ingesters upload a block for each 10s range in [0, 130s). */
async function zoneBlocks(bucket: Bucket, dir: string, tenant: string): Promise<void> {
  for (let a = 0; a < 130 * S; a += 10 * S) {
    for (const zone of ['a', 'b']) {
      const w = await writeBlock({
        dir: join(dir, zone),
        series: [0, 1, 2].map((s) => series(s, a, a + 10 * S)),
        mint: a,
        maxt: a + 10 * S,
        minTime: a,
        maxTime: a + 10 * S,
      });
      await uploadBlock(bucket, tenant, w!.meta.ulid, w!.dir);
    }
  }
}

test('zone copies merged, levels compacted, nothing duplicated or lost; marks, deletions, retention, partial uploads, bucket index', async () => {
  const root = await mkdtemp(join(tmpdir(), 'strata-compactor-'));
  try {
    const bucket = new FilesystemBucket(join(root, 'bucket'));
    await zoneBlocks(bucket, join(root, 'src'), 't1');
    let now = Date.now();
    const compactor = new Compactor({
      bucket,
      logger,
      dataDir: join(root, 'work'),
      ranges: [10 * S, 60 * S, 120 * S],
      compactionIntervalMs: 3_600_000,
      cleanupIntervalMs: 3_600_000,
      deletionDelayMs: 60_000,
      firstLevelWaitMs: 0,
      retentionMs: () => 0,
      partialBlockDeletionDelayMs: 60_000,
      enabledTenants: [],
      now: () => now,
    });
    const n = await compactor.compactTenant('t1');
    assert.ok(n >= 13 + 2, `compactions: ${n}`);
    await compactor.updateIndex('t1');
    const idx = (await readBucketIndex(bucket, 't1'))!;
    const marked = new Set(idx.block_deletion_marks.map((m) => m.block_id));
    const live = idx.blocks.filter((b) => !marked.has(b.block_id)).sort((a, b) => a.min_time - b.min_time);
    // [0,120s) in one 120s block (levels 10s -> 60s -> 120s); the newest 10s range stays.
    assert.deepEqual(
      live.map((b) => [b.min_time, b.max_time]),
      [
        [0, 120 * S],
        [120 * S, 130 * S],
      ],
    );
    assert.equal(live[0].compaction_level, 4);
    for (let i = 1; i < live.length; i++) assert.ok(live[i].min_time >= live[i - 1].max_time, 'no overlaps left');

    const store = new BucketStore({
      bucket,
      logger,
      syncIntervalMs: 0,
      ignoreDeletionMarksDelayMs: 0,
      bucketIndexEnabled: true,
      warmStartPeriodMs: 0,
      now: () => now,
    });
    const got = await store.select({ tenant: 't1', matchers: [], mint: 0, maxt: 1e12 });
    assert.equal(got.length, 3);
    for (const s of got) {
      assert.equal(s.timestamps.length, 130, 'every sample exactly once');
      assert.equal(s.values[129], Number(s.labels[1].value) * 1e6 + 129);
    }

    // A failed upload and the deletion delay.
    await bucket.put(blockFileKey('t1', '01JDQ0000000000000000000AB', 'chunks/000001'), new Uint8Array(8));
    now = Date.now() + 61_000; // past both delays, however long the compactions above took
    const c = await compactor.cleanupTenant('t1');
    assert.equal(c.deleted, marked.size);
    assert.equal(c.partialDeleted, 1);
    assert.deepEqual((await bucket.list('t1/')).filter((k) => k.endsWith('/') && k !== 't1/markers/').length, 2);

    // Retention: everything older than the tenant's period is marked.
    const withRetention = new Compactor({
      ...{
        bucket,
        logger,
        dataDir: join(root, 'work'),
        ranges: [10 * S],
        compactionIntervalMs: 1,
        cleanupIntervalMs: 1,
        deletionDelayMs: 1e9,
        firstLevelWaitMs: 0,
      },
      retentionMs: (t) => (t === 't1' ? now - 125 * S : 0),
      partialBlockDeletionDelayMs: 0,
      enabledTenants: ['t1'],
      now: () => now,
    });
    assert.equal((await withRetention.cleanupTenant('t1')).markedForDeletion, 1);
    await store.stop();
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('strata_compactor_last_successful_run_timestamp_seconds moves only after a pass in which every tenant succeeded', async () => {
  const root = await mkdtemp(join(tmpdir(), 'strata-compactor-'));
  try {
    const fs = new FilesystemBucket(join(root, 'bucket'));
    await zoneBlocks(fs, join(root, 'src'), 't1');
    await zoneBlocks(fs, join(root, 'src-bad'), 'bad');
    let failBad = true;
    // Reads of tenant "bad" fail while failBad is set (a broken block, an unreachable prefix).
    const bucket = new Proxy(fs, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          if (failBad && (prop === 'get' || prop === 'getRange') && String(args[0]).startsWith('bad/'))
            return Promise.reject(new Error('injected read failure'));
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const registry = new Registry();
    let now = 1_800_000_000_000;
    const compactor = new Compactor({
      bucket,
      logger,
      registry,
      dataDir: join(root, 'work'),
      ranges: [10 * S, 60 * S, 120 * S],
      compactionIntervalMs: 3_600_000,
      cleanupIntervalMs: 3_600_000,
      deletionDelayMs: 60_000,
      firstLevelWaitMs: 0,
      retentionMs: () => 0,
      partialBlockDeletionDelayMs: 60_000,
      enabledTenants: [],
      now: () => now,
    });
    const last = async () => (await registry.getSingleMetric('strata_compactor_last_successful_run_timestamp_seconds')!.get()).values[0]?.value ?? 0;
    await compactor.compact();
    assert.equal(await last(), 0, 'a pass with a failed tenant is no success');
    failBad = false;
    now += 60_000;
    await compactor.compact();
    assert.equal(await last(), now / 1000);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
