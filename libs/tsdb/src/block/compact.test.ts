import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labelsFromRecord, type Series } from '@strata/model';
import { BlockReader, Head, compactBlocks, emptyAppendStats, writeBlock, writeBlockFromChunks } from '../index.ts';

function series(name: string, from: number, n: number, step = 1000): Series {
  const timestamps = new Float64Array(n);
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    timestamps[i] = from + i * step;
    values[i] = from / 1000 + i;
  }
  return { labels: labelsFromRecord({ __name__: name, job: 'j' }), timestamps, values };
}

test('a head cut written from its chunks reads back exactly', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'strata-headcut-'));
  try {
    const head = new Head({ chunkRangeMs: 3_600_000 });
    const stats = emptyAppendStats();
    const all = Array.from({ length: 20 }, (_, k) => series(`m${k}`, 0, 600, 10_000));
    // Scrape order (every series at t, then t + 10s): a head with a block range takes nothing half a range behind.
    for (let i = 0; i < 600; i++) for (const s of all) head.append(s.labels, s.timestamps.subarray(i, i + 1), s.values.subarray(i, i + 1), stats);
    assert.equal(stats.appended, 20 * 600);
    const cut = head.snapshotForBlock(0, 3_600_000);
    const written = await writeBlockFromChunks({ dir, series: cut });
    assert.ok(written);
    assert.deepEqual(written.meta.stats, { numSamples: 20 * 360, numSeries: 20, numChunks: 20 * 3 });
    const r = await BlockReader.openDir(written.dir);
    const got = await r.select({ matchers: [{ type: '=', name: '__name__', value: 'm7' }], mint: 0, maxt: 1e12 });
    await r.close();
    assert.equal(got[0].timestamps.length, 360);
    assert.equal(got[0].timestamps[359], 3_590_000);
    assert.equal(got[0].values[100], 100);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('vertical compaction merges zone copies and overlaps into one block without duplicates', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'strata-compact-'));
  try {
    const a = await writeBlock({ dir, series: [series('x', 0, 100), series('only_a', 0, 10)], mint: 0, maxt: 1e9 });
    const b = await writeBlock({ dir, series: [series('x', 0, 100), series('only_b', 5000, 10)], mint: 0, maxt: 1e9 });
    // Overlapping but not identical: x from 50s on, more samples.
    const c = await writeBlock({ dir, series: [series('x', 50_000, 100)], mint: 0, maxt: 1e9 });
    const readers = await Promise.all([a, b, c].map((w) => BlockReader.openDir(w!.dir)));
    const { block, stats } = await compactBlocks({ dir, blocks: readers });
    for (const r of readers) await r.close();
    assert.ok(block);
    assert.equal(block.meta.compaction.level, 2);
    assert.deepEqual(block.meta.compaction.sources, [a!.meta.ulid, b!.meta.ulid, c!.meta.ulid].sort());
    assert.equal(block.meta.compaction.parents?.length, 3);
    assert.equal(block.meta.stats.numSeries, 3);
    assert.equal(block.meta.stats.numSamples, 150 + 10 + 10);
    assert.equal(stats.duplicateSamples, 100 + 50);
    assert.equal(stats.seriesCopied, 2);
    const r = await BlockReader.openDir(block.dir);
    const [x] = await r.select({ matchers: [{ type: '=', name: '__name__', value: 'x' }], mint: 0, maxt: 1e12 });
    await r.close();
    assert.equal(x.timestamps.length, 150);
    for (let i = 1; i < 150; i++) assert.equal(x.timestamps[i] - x.timestamps[i - 1], 1000);
    assert.equal(x.values[149], 50 + 99);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
