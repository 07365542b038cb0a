// The ingester's block lifecycle without Kafka: a scripted partition feeds
// records; blocks are cut, shipped to a filesystem bucket, the head truncated
// and the offset committed only past shipped data; restarts replay from the
// committed offset and lose nothing; failed and half-done uploads are retried.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { encodeWriteRequest } from '@strata/remote-write';
import { FilesystemBucket, type Bucket, type PutBody } from '@strata/objstore';
import { createLogger } from '@strata/service';
import { BucketStore } from '@strata/storegateway';
import { Ingester, type IngestRecord, type RecordSource } from './index.ts';

const logger = createLogger('test', 'silent');
const R = 10_000;
const T0 = 1_700_000_000_000;
const SERIES = 20;

/** A partition in memory: delivers from the committed offset, remembers commits across "restarts". */
class Partition {
  records: IngestRecord[] = [];
  committed: bigint | null = null;

  push(tenant: string, t: number): void {
    const timeseries = Array.from({ length: SERIES }, (_, s) => ({
      labels: [
        { name: '__name__', value: 'm' },
        { name: 'series', value: String(s) },
      ],
      samples: [{ value: value(s, t), timestamp: t }],
    }));
    this.records.push({ tenant, offset: BigInt(this.records.length), value: encodeWriteRequest({ timeseries }) });
  }

  source(onRecords: (b: IngestRecord[]) => Promise<void> | void): RecordSource & { deliver(): Promise<void> } {
    let next = this.committed ?? 0n;
    const start = next;
    return {
      start: async () => undefined,
      stop: async () => undefined,
      waitCaughtUp: async () => undefined,
      commit: async (o) => {
        this.committed = o;
      },
      position: () => (next === start ? start : next),
      deliver: async () => {
        while (next < BigInt(this.records.length)) {
          const batch = this.records.slice(Number(next), Number(next) + 7);
          await onRecords(batch);
          next += BigInt(batch.length);
        }
      },
    };
  }
}

function value(s: number, t: number): number {
  return s * 1000 + (t - T0) / 1000;
}

/** A bucket whose puts can be made to fail, or to fail right after the chunks of a block (a crash mid-upload). */
class FlakyBucket extends FilesystemBucket {
  failPuts = false;
  crashAfterChunks = false;
  override async put(key: string, body: PutBody): Promise<void> {
    if (this.failPuts) throw new Error('injected: bucket unavailable');
    await super.put(key, body);
    if (this.crashAfterChunks && key.includes('/chunks/')) throw new Error('injected: crash after chunks');
  }
}

async function setup(root: string, partition: Partition, bucket: Bucket) {
  let deliver!: () => Promise<void>;
  const ingester = new Ingester({
    identity: { id: 'ingester-zone-a-0', zone: 'a', partition: 0 },
    maxLagForReady: 0,
    logger,
    registry: new Registry(),
    createSource: (on) => {
      const s = partition.source(on);
      deliver = s.deliver;
      return s;
    },
    blocksStorage: { bucket, dir: join(root, 'tsdb'), blockRangeMs: R, retentionMs: 1e15, headCompactionIntervalMs: 3_600_000, headCompactionIdleTimeoutMs: 0 },
  });
  await ingester.start();
  await new Promise((r) => setImmediate(r));
  return { ingester, deliver: () => deliver() };
}

async function readAll(ingester: Ingester, tenant = 'team-a'): Promise<Map<string, number[][]>> {
  const out = new Map<string, number[][]>();
  for (const s of await ingester.select({ tenant, matchers: [{ type: '=', name: '__name__', value: 'm' }], mint: 0, maxt: 1e15 })) {
    out.set(
      s.labels[1].value,
      Array.from(s.timestamps, (t, i) => [t, s.values[i]]),
    );
  }
  return out;
}

function assertEverything(got: Map<string, number[][]>, times: number[]): void {
  assert.equal(got.size, SERIES);
  for (let s = 0; s < SERIES; s++) {
    assert.deepEqual(
      got.get(String(s)),
      times.map((t) => [t, value(s, t)]),
      `series ${s}`,
    );
  }
}

test('cuts, ships, truncates and commits only past shipped data; a restart replays from the commit and loses nothing', async () => {
  const root = await mkdtemp(join(tmpdir(), 'strata-ingester-'));
  try {
    const bucket = new FlakyBucket(join(root, 'bucket'));
    const p = new Partition();
    const times = Array.from({ length: 60 }, (_, i) => T0 + i * 1000);
    for (const t of times) p.push('team-a', t);

    let { ingester, deliver } = await setup(root, p, bucket);
    await deliver();
    assert.equal(ingester.notReadyReason(), undefined);
    await ingester.tick();
    // The head's newest sample is T0+59s: ranges ending by T0+54s (half a range back) are cut.
    const blocks = (await bucket.list('team-a/')).filter((k) => /[0-9A-Z]{26}\/$/.test(k));
    assert.ok(blocks.length >= 4, `blocks in the bucket: ${blocks.length}`);
    assert.ok(p.committed !== null && p.committed > 0n && p.committed < 60n, `committed ${p.committed}`);
    assertEverything(await readAll(ingester), times);
    const store = new BucketStore({ bucket, logger, syncIntervalMs: 0, ignoreDeletionMarksDelayMs: 0, bucketIndexEnabled: true, warmStartPeriodMs: 0 });
    const inStore = await store.select({ tenant: 'team-a', matchers: [], mint: 0, maxt: 1e15 });
    assert.equal(inStore.length, SERIES);
    const committed = p.committed!;
    // Everything before the committed offset is in the bucket.
    for (const s of inStore) assert.ok(s.timestamps[s.timestamps.length - 1] >= T0 + Number(committed - 1n) * 1000);

    // A crash (no flush, no graceful stop): the next process replays from the commit only.
    await ingester.stop();
    p.push('team-a', T0 + 60_000);
    ({ ingester, deliver } = await setup(root, p, bucket));
    await deliver();
    assertEverything(await readAll(ingester), [...times, T0 + 60_000]);

    // Uploads failing: the block is cut locally, the head keeps the data, nothing more is committed.
    for (let i = 61; i < 80; i++) p.push('team-a', T0 + i * 1000);
    await deliver();
    bucket.failPuts = true;
    const before = p.committed;
    await ingester.tick();
    assert.equal(p.committed, before);
    assertEverything(await readAll(ingester), [...times, ...Array.from({ length: 20 }, (_, i) => T0 + (60 + i) * 1000)]);
    bucket.failPuts = false;
    await ingester.tick();
    assert.ok(p.committed! > before!);

    // Flush: everything in blocks, everything committed.
    await ingester.flush();
    assert.equal(p.committed, 80n);
    assert.equal(ingester.head('team-a')?.numSeries, 0);
    assertEverything(
      await readAll(ingester),
      Array.from({ length: 80 }, (_, i) => T0 + i * 1000),
    );
    await ingester.stop();
    await store.stop();
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('a crash mid-upload leaves no visible partial block; the restart completes the upload', async () => {
  const root = await mkdtemp(join(tmpdir(), 'strata-ingester-crash-'));
  try {
    const bucket = new FlakyBucket(join(root, 'bucket'));
    const p = new Partition();
    const times = Array.from({ length: 30 }, (_, i) => T0 + i * 1000);
    for (const t of times) p.push('team-b', t);
    let { ingester, deliver } = await setup(root, p, bucket);
    await deliver();
    bucket.crashAfterChunks = true;
    await assert.rejects(ingester.flush(), /crash after chunks/);
    await ingester.stop();
    assert.ok(!p.committed, 'nothing past the first record committed');
    const store = new BucketStore({ bucket, logger, syncIntervalMs: 0, ignoreDeletionMarksDelayMs: 0, bucketIndexEnabled: true, warmStartPeriodMs: 0 });
    assert.deepEqual(await store.blocksOf('team-b'), [], 'the half-uploaded block (no meta.json) is invisible');
    const partial = (await bucket.list('team-b/'))[0];
    assert.ok(partial, 'its chunks are there');

    bucket.crashAfterChunks = false;
    ({ ingester, deliver } = await setup(root, p, bucket));
    await deliver();
    await ingester.flush();
    assert.ok(await bucket.exists(`${partial}meta.json`), 'the same block was completed');
    assertEverything(await readAll(ingester, 'team-b'), times);
    const got = await store.select({ tenant: 'team-b', matchers: [], mint: 0, maxt: 1e15 });
    assert.equal(got.length, SERIES);
    for (const s of got) assert.equal(s.timestamps.length, 30, 'every sample in the bucket, once');
    assert.equal(p.committed, 30n);
    assert.deepEqual(
      (await readdir(join(root, 'tsdb', 'team-b'))).filter((n) => n.includes('tmp')),
      [],
    );
    await ingester.stop();
    await store.stop();
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
