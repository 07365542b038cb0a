import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labelsFromRecord, type Series } from '@strata/model';
import { FilesystemBucket, type Bucket } from '@strata/objstore';
import { createLogger } from '@strata/service';
import { writeBlock } from '@strata/tsdb';
import { BucketStore, blockFileKey, buildBucketIndex, markForDeletion, readBucketIndex, uploadBlock, writeBucketIndex } from './index.ts';

const logger = createLogger('test', 'silent');

function series(name: string, from: number, n: number, v0 = 0): Series {
  const timestamps = new Float64Array(n);
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    timestamps[i] = from + i * 1000;
    values[i] = v0 + i;
  }
  return { labels: labelsFromRecord({ __name__: name, job: 'j' }), timestamps, values };
}

async function ship(bucket: Bucket, dir: string, tenant: string, s: Series[]): Promise<string> {
  const w = await writeBlock({ dir, series: s, mint: -Infinity, maxt: Infinity });
  await uploadBlock(bucket, tenant, w!.meta.ulid, w!.dir);
  return w!.meta.ulid;
}

test('queries blocks in the bucket per tenant, merges overlaps, hides partial and deleted blocks', async () => {
  const root = await mkdtemp(join(tmpdir(), 'strata-bstore-'));
  try {
    const bucket = new FilesystemBucket(join(root, 'bucket'));
    const local = join(root, 'local');
    let now = 1_800_000_000_000;
    const a = await ship(bucket, local, 'team-a', [series('m', 0, 100)]);
    const a2 = await ship(bucket, local, 'team-a', [series('m', 0, 100), series('n', 50_000, 10)]); // the other zone's copy, plus more
    await ship(bucket, local, 'team-b', [series('m', 0, 10, 1000)]);
    // A crashed upload: chunks but no meta.json.
    await bucket.put(blockFileKey('team-a', '01JDQ0000000000000000000AB', 'index'), new Uint8Array(10));

    const store = new BucketStore({
      bucket,
      logger,
      syncIntervalMs: 0,
      ignoreDeletionMarksDelayMs: 0,
      bucketIndexEnabled: true,
      warmStartPeriodMs: 1e15,
      now: () => now,
    });
    await store.start();
    assert.equal(store.notReadyReason(), undefined);
    const m = [{ type: '=' as const, name: '__name__', value: 'm' }];
    const [got] = await store.select({ tenant: 'team-a', matchers: m, mint: 0, maxt: 1e12 });
    assert.equal(got.timestamps.length, 100, 'zone copies count once');
    const b = await store.select({ tenant: 'team-b', matchers: m, mint: 0, maxt: 1e12 });
    assert.equal(b[0].values[0], 1000, 'team-b sees only its own block');
    assert.deepEqual(await store.labelValues({ tenant: 'team-a', name: '__name__', matchers: [], mint: 0, maxt: 1e12 }), ['m', 'n']);
    assert.deepEqual(await store.select({ tenant: 'nobody', matchers: m, mint: 0, maxt: 1e12 }), []);
    assert.equal((await store.select({ tenant: 'team-a', matchers: m, mint: 10_000, maxt: 19_999 }))[0].timestamps.length, 10);

    // The bucket index lists complete blocks only; once present the store reads it instead of listing.
    const { index } = await buildBucketIndex(bucket, 'team-a', now);
    assert.deepEqual(index.blocks.map((x) => x.block_id).sort(), [a, a2].sort());
    assert.equal(index.blocks[0].segments_format, '1b6d');
    await markForDeletion(bucket, 'team-a', a2, now - 1000);
    await writeBucketIndex(bucket, 'team-a', (await buildBucketIndex(bucket, 'team-a', now)).index);
    const read = await readBucketIndex(bucket, 'team-a');
    assert.deepEqual(
      read?.block_deletion_marks.map((x) => x.block_id),
      [a2],
    );
    assert.deepEqual(
      (await store.blocksOf('team-a')).map((x) => x.ulid),
      [a],
      'marked block is skipped',
    );
    assert.deepEqual(await store.labelValues({ tenant: 'team-a', name: '__name__', matchers: [], mint: 0, maxt: 1e12 }), ['m']);
    now += 1;
    await store.stop();
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test(
  "Prometheus' own blocks (promtool create-blocks-from openmetrics) read back exactly through the bucket",
  { skip: existsSync('/usr/bin/promtool') ? false : 'no promtool' },
  async () => {
    const root = await mkdtemp(join(tmpdir(), 'strata-bstore-prom-'));
    try {
      const T = 1_732_950_000_000;
      const want = new Map<string, [number, number][]>();
      const lines = ['# TYPE prom_made gauge'];
      for (let s = 0; s < 5; s++) {
        const list: [number, number][] = [];
        for (let k = 0; k < 700; k++) {
          const t = T + k * 15_000 + (k === 300 ? 7_200_000 : 0) + (k > 300 ? 7_200_000 : 0);
          const v = s === 0 && k % 100 === 7 ? NaN : s * 1000 + k * 0.25;
          list.push([t, v]);
          lines.push(`prom_made{s="${s}"} ${Number.isNaN(v) ? 'NaN' : v} ${(t / 1000).toFixed(3)}`);
        }
        want.set(String(s), list);
      }
      lines.push('# EOF', '');
      await writeFile(join(root, 'in.om'), lines.join('\n'));
      execFileSync('/usr/bin/promtool', ['tsdb', 'create-blocks-from', 'openmetrics', join(root, 'in.om'), join(root, 'prom')], { stdio: 'ignore' });
      const bucket = new FilesystemBucket(join(root, 'bucket'));
      const ulids = (await readdir(join(root, 'prom'))).filter((n) => /^[0-9A-Z]{26}$/.test(n));
      assert.ok(ulids.length >= 2);
      for (const u of ulids) await uploadBlock(bucket, 'prom', u, join(root, 'prom', u));
      const store = new BucketStore({ bucket, logger, syncIntervalMs: 0, ignoreDeletionMarksDelayMs: 0, bucketIndexEnabled: true, warmStartPeriodMs: 0 });
      const got = await store.select({ tenant: 'prom', matchers: [{ type: '=', name: '__name__', value: 'prom_made' }], mint: 0, maxt: 1e15 });
      assert.equal(got.length, 5);
      for (const s of got) {
        const w = want.get(s.labels[1].value)!;
        assert.deepEqual(
          Array.from(s.timestamps),
          w.map(([t]) => t),
        );
        w.forEach(([, v], i) => assert.ok(Number.isNaN(v) ? Number.isNaN(s.values[i]) : s.values[i] === v, `${s.labels[1].value}[${i}]`));
      }
      await store.stop();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  },
);
