import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labelsFromRecord, type Labels, type Matcher } from '@strata/model';
import { Head, emptyAppendStats } from '../index.ts';
import { HeadChunks } from './head-chunks.ts';

const HOUR = 3_600_000;
const ALL: Matcher[] = [{ type: '=~', name: '__name__', value: '.+' }];

/** Runs `body` with a fresh temporary directory, removed afterwards whatever happens. */
function withTempDir(body: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'strata-head-chunks-'));
  try {
    body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** 20 series, a sample every 15 s for `hours`, values that do not compress to nothing. */
function fill(head: Head, hours: number): void {
  const stats = emptyAppendStats();
  const labels: Labels[] = Array.from({ length: 20 }, (_, i) => labelsFromRecord({ __name__: 'm', i: String(i) }));
  for (let t = 0; t < hours * HOUR; t += 15_000) {
    for (const [i, l] of labels.entries()) head.append(l, new Float64Array([t]), new Float64Array([Math.sin(t / 1e6 + i) * 1000]), stats);
  }
  assert.equal(stats.appended, 20 * hours * 240);
}

function answers(head: Head, mint: number, maxt: number): unknown {
  const ids = head.seriesIds(ALL);
  return {
    samples: head.select(ALL, mint, maxt).map((s) => [s.labels, [...s.timestamps], [...s.values]]),
    chunks: head.seriesOf(ids, 0, ids.length, mint, maxt, 'chunks').map((s) => s.chunks?.map((c) => [c.minTime, c.maxTime, [...c.data]])),
    block: head.snapshotForBlock(0, 2 * HOUR).map((s) => [s.labels, s.chunks.map((c) => [c.minTime, c.maxTime, [...c.data]])]),
  };
}

test('closed chunks kept in files answer every read exactly as chunks kept in memory', () =>
  withTempDir((dir) => {
    const onDisk = new Head({ chunkRangeMs: 2 * HOUR, chunksDir: join(dir, 'chunks_head') });
    const inMemory = new Head({ chunkRangeMs: 2 * HOUR });
    fill(onDisk, 3);
    fill(inMemory, 3);
    const files = onDisk.chunkFiles;
    assert.ok(files !== null && files.bytes > 20 * 5 * 100, `closed chunks are in files: ${JSON.stringify(files)}`);
    assert.equal(files.error, null);
    assert.equal(inMemory.chunkFiles, null);
    for (const [mint, maxt] of [
      [0, 3 * HOUR],
      [HOUR, HOUR + 60_000],
      [2 * HOUR - 1, 2 * HOUR],
    ]) {
      assert.deepEqual(answers(onDisk, mint, maxt), answers(inMemory, mint, maxt), `reads of [${mint}, ${maxt}]`);
    }
    onDisk.truncate(2 * HOUR);
    inMemory.truncate(2 * HOUR);
    assert.deepEqual(answers(onDisk, 0, 3 * HOUR), answers(inMemory, 0, 3 * HOUR), 'after truncation');
    onDisk.close();
  }));

test('segments roll over at their size, go once truncation passes their newest chunk, and start empty', () =>
  withTempDir((dir) => {
    writeFileSync(join(dir, '000001'), 'left by the previous process');
    const chunks = new HeadChunks(dir, 1000);
    assert.equal(existsSync(join(dir, '000001')), false, "the previous process's files are gone");
    const refs: { slab: unknown; off: number; bytes: Uint8Array }[] = [];
    for (let i = 0; i < 50; i++) {
      const bytes = Uint8Array.from({ length: 90 }, (_, k) => (i * 7 + k) & 255);
      const off = chunks.copy(bytes, i * 1000);
      refs.push({ slab: chunks.slab, off, bytes });
    }
    // 11 chunks of 90 bytes fill a 1000-byte segment: 5 segments, 4 full on disk, each ≤ 1000 bytes.
    assert.equal(chunks.numSegments, 5);
    assert.equal(chunks.diskBytes, 50 * 90);
    const names = readdirSync(dir).sort();
    assert.deepEqual(names, ['000001', '000002', '000003', '000004', '000005']);
    assert.equal(statSync(join(dir, '000001')).size, 11 * 90, 'a segment is written out when the next one starts');
    for (const r of refs) {
      const seg = r.slab as { read(off: number, len: number): Uint8Array };
      assert.deepEqual(seg.read(r.off, 90), r.bytes);
    }
    // Segment 1 holds chunks ending at 0..10 s, segment 2 at 11..21 s.
    chunks.truncateBefore(21_000);
    assert.deepEqual(readdirSync(dir).sort(), ['000002', '000003', '000004', '000005']);
    chunks.truncateBefore(21_001);
    assert.deepEqual(readdirSync(dir).sort(), ['000003', '000004', '000005']);
    chunks.close();
  }));

test('a directory that cannot be written keeps the chunks in memory and loses nothing', () =>
  withTempDir((dir) => {
    writeFileSync(join(dir, 'not-a-dir'), '');
    const head = new Head({ chunkRangeMs: 2 * HOUR, chunksDir: join(dir, 'not-a-dir', 'chunks_head') });
    const inMemory = new Head({ chunkRangeMs: 2 * HOUR });
    fill(head, 1);
    fill(inMemory, 1);
    const files = head.chunkFiles;
    assert.match(String(files?.error?.message), /ENOTDIR/);
    assert.equal(files?.bytes, 0);
    assert.deepEqual(answers(head, 0, HOUR), answers(inMemory, 0, HOUR));
    head.close();
  }));

test('reads through the block cache see chunks flushed after their block was first read', () =>
  withTempDir((dir) => {
    const chunks = new HeadChunks(dir);
    const refs: { seg: { read(off: number, len: number, cached?: boolean): Uint8Array }; off: number; bytes: Uint8Array }[] = [];
    const write = (n: number) => {
      for (let i = 0; i < n; i++) {
        const bytes = Uint8Array.from({ length: 90 }, (_, k) => (refs.length * 13 + k) & 255);
        const off = chunks.copy(bytes, refs.length);
        refs.push({ seg: chunks.slab as never, off, bytes });
      }
    };
    write(300); // 27,000 bytes: the first 16 KiB buffer went to the file
    assert.deepEqual(refs[0].seg.read(refs[0].off, 90), refs[0].bytes, 'first read caches the block as far as the file goes');
    write(300); // more is flushed into the blocks read before
    for (const [i, r] of refs.entries()) {
      assert.deepEqual(r.seg.read(r.off, 90), r.bytes, `chunk ${i} through the cache`);
      assert.deepEqual(r.seg.read(r.off, 90, false), r.bytes, `chunk ${i} read alone`);
    }
    chunks.close();
  }));

test('the write buffer serves every flush and segment in turn without changing a chunk read before', () =>
  withTempDir((dir) => {
    const chunks = new HeadChunks(dir, 200_000);
    const refs: { seg: { read(off: number, len: number, cached?: boolean): Uint8Array }; off: number; bytes: Uint8Array; seen: Uint8Array }[] = [];
    for (let i = 0; i < 6000; i++) {
      const bytes = Uint8Array.from({ length: 20 + (i % 150) }, (_, k) => (i * 31 + k * 7) & 255);
      const off = chunks.copy(bytes, i);
      const seg = chunks.slab as never as (typeof refs)[number]['seg'];
      // Read while the chunk is still in the write buffer: the copy must survive the buffer's reuse.
      refs.push({ seg, off, bytes, seen: seg.read(off, bytes.length) });
    }
    assert.ok(chunks.numSegments >= 3, `${chunks.numSegments} segments`);
    for (const [i, r] of refs.entries()) {
      assert.deepEqual(r.seen, r.bytes, `chunk ${i} as read when written`);
      assert.deepEqual(r.seg.read(r.off, r.bytes.length), r.bytes, `chunk ${i} read again`);
    }
    chunks.close();
  }));

test("a chunked read of a few series holds its own chunks, not the files' read blocks they sit in", () =>
  withTempDir((dir) => {
    // Series created in one order and sent in another: each wave of closed chunks lies in the
    // files in sending order, so one series' chunks sit in blocks full of other series' chunks.
    const head = new Head({ chunkRangeMs: 2 * HOUR, chunksDir: join(dir, 'chunks_head') });
    const stats = emptyAppendStats();
    const n = 2000;
    const labels: Labels[] = Array.from({ length: n }, (_, i) => labelsFromRecord({ __name__: 'm', i: String(i) }));
    const order = labels.map((_, i) => (i * 1237) % n);
    for (const l of labels) head.append(l, new Float64Array([0]), new Float64Array([1]), stats);
    for (let t = 15_000; t < 480 * 15_000; t += 15_000) {
      for (const i of order) head.append(labels[i], new Float64Array([t]), new Float64Array([Math.sin(t / 1e6 + i) * 1000]), stats);
    }
    const files = head.chunkFiles;
    assert.ok(files !== null && files.bytes > 1_000_000, `closed chunks are in files: ${JSON.stringify(files)}`);
    const ids = head.seriesIds([{ type: '=', name: 'i', value: '7' }]);
    const [s] = head.seriesOf(ids, 0, ids.length, 0, 2 * HOUR, 'chunks');
    const chunks = s.chunks ?? [];
    assert.equal(chunks.length, 4);
    const own = chunks.reduce((sum, c) => sum + c.data.length, 0);
    const held = [...new Set(chunks.map((c) => c.data.buffer))].reduce((sum, b) => sum + b.byteLength, 0);
    // One slab of the query's arena (64 KiB) holds them all; views would hold four blocks of the files.
    assert.ok(held <= 64 * 1024 + own, `the answer holds ${held} bytes for its ${own} bytes of chunks`);
    head.close();
  }));
