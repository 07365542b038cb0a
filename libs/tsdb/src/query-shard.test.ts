// A query shard matcher (__query_shard__="i_of_n") on the head and on a block: the shards of a
// select are disjoint, together they are the whole select, and the head
// and a block of the same series put each series in the same shard.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labelsFromRecord, labelsKey, queryShardMatcher, type Matcher, type Series } from '@strata/model';
import { BlockReader, Head, emptyAppendStats, writeBlock } from './index.ts';

const SERIES = 200;
const any: Matcher = { type: '=~', name: '__name__', value: 'up|down' };
const keys = (ss: Series[]) => ss.map((s) => labelsKey(s.labels));

test('query shards split the head and a block alike: disjoint and complete', async () => {
  const head = new Head();
  const all: Series[] = [];
  for (let i = 0; i < SERIES; i++) {
    const labels = labelsFromRecord({ __name__: i % 2 ? 'up' : 'down', instance: `host-${i}`, job: `j${i % 3}` });
    head.append(labels, new Float64Array([1000, 2000]), new Float64Array([i, i]), emptyAppendStats());
    all.push({ labels, timestamps: Float64Array.of(1000, 2000), values: Float64Array.of(i, i) });
  }
  const dir = await mkdtemp(join(tmpdir(), 'strata-query-shard-'));
  try {
    const written = await writeBlock({ dir, mint: 0, maxt: 10_000, series: all });
    const block = await BlockReader.openDir(written!.dir);
    try {
      const whole = keys(head.select([any], 0, 10_000));
      assert.equal(whole.length, SERIES);
      for (const count of [1, 3, 8]) {
        const fromHead: string[][] = [];
        for (let index = 0; index < count; index++) {
          const matchers = [any, queryShardMatcher({ index, count })];
          const h = keys(head.select(matchers, 0, 10_000)).sort();
          assert.deepEqual(
            keys(await block.select({ matchers, mint: 0, maxt: 10_000 })).sort(),
            h,
            `shard ${index + 1} of ${count}: the block's series are the head's`,
          );
          fromHead.push(h);
        }
        const union = fromHead.flat();
        assert.equal(new Set(union).size, union.length, 'disjoint');
        assert.deepEqual(union.sort(), [...whole].sort(), 'complete');
        if (count === 8)
          assert.ok(
            fromHead.every((h) => h.length > 0 && h.length < SERIES / 2),
            'spread over the shards',
          );
      }
    } finally {
      await block.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a malformed shard matcher is refused naming it', () => {
  const head = new Head();
  for (const value of ['0_of_4', '5_of_4', 'x', '1of4']) {
    assert.throws(() => head.select([any, { type: '=', name: '__query_shard__', value }], 0, 1), new RegExp(`invalid __query_shard__ matcher ="${value}"`));
  }
  assert.throws(() => head.select([any, { type: '=~', name: '__query_shard__', value: '1_of_2' }], 0, 1), /invalid __query_shard__ matcher =~/);
});
