import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Labels, Matcher, Series } from '@strata/model';
import { writeBlock } from './block-writer.ts';
import { BlockReader } from './block-reader.ts';
import { MemoryByteSource } from './byte-source.ts';
import { parseBlockMeta } from './meta.ts';
import { createUlidGenerator, isUlid, ulidTime } from './ulid.ts';
import { HI_WORD, LO_WORD } from '../chunkenc/xor-chunk.ts';

const T0 = 1_700_000_000_000;

function labels(rec: Record<string, string>): Labels {
  return Object.entries(rec)
    .map(([name, value]) => ({ name, value }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function setBits(values: Float64Array, i: number, hi: number, lo: number): void {
  const w = new Uint32Array(values.buffer, values.byteOffset, values.length * 2);
  w[2 * i + HI_WORD] = hi;
  w[2 * i + LO_WORD] = lo;
}

function bits(values: Float64Array): number[] {
  return Array.from(new Uint32Array(values.buffer, values.byteOffset, values.length * 2));
}

function makeSeries(): Series[] {
  const out: Series[] = [];
  const jobs = ['api', 'db', 'cache'];
  for (let i = 0; i < 30; i++) {
    const rec: Record<string, string> = { __name__: i % 2 ? 'http_requests_total' : 'up', job: jobs[i % 3], instance: `host-${i}` };
    if (i % 5 === 0) rec.zone = i % 10 === 0 ? 'eu' : 'us';
    if (i === 7) rec.path = '/ünïcödé/😀';
    const n = 50 + i * 13;
    const ts = new Float64Array(n);
    const vs = new Float64Array(n);
    let t = T0 - 3_600_000 + i * 7;
    for (let k = 0; k < n; k++) {
      ts[k] = t;
      t += k % 11 === 0 ? 15_000 + (k % 3) * 1_000_003 : 15_000 + (k % 4);
      vs[k] = i % 2 ? i * 1000 + k : Math.sin(k) * 1e6;
    }
    if (n > 10) setBits(vs, 10, 0x7ff00000, 2); // stale marker
    if (n > 20) setBits(vs, 20, 0x7ff80000, 0xdeadbeef); // NaN payload
    if (n > 30) vs[30] = -Infinity;
    out.push({ labels: labels(rec), timestamps: ts, values: vs });
  }
  return out;
}

/** What a reader must return for [mint, maxt] given block range [bmint, bmaxt). */
function expected(series: Series[], matches: (l: Labels) => boolean, mint: number, maxt: number, bmint: number, bmaxt: number): Series[] {
  const out: Series[] = [];
  for (const s of series) {
    if (!matches(s.labels)) continue;
    const idx: number[] = [];
    s.timestamps.forEach((t, k) => {
      if (t >= mint && t <= maxt && t >= bmint && t < bmaxt) idx.push(k);
    });
    if (idx.length === 0) continue;
    const ts = Float64Array.from(idx, (k) => s.timestamps[k]);
    const vs = new Float64Array(idx.length);
    const src = new Uint32Array(s.values.buffer);
    const dst = new Uint32Array(vs.buffer);
    idx.forEach((k, j) => {
      dst[2 * j] = src[2 * k];
      dst[2 * j + 1] = src[2 * k + 1];
    });
    out.push({ labels: s.labels, timestamps: ts, values: vs });
  }
  return out.sort((a, b) => cmp(a.labels, b.labels));
}

function cmp(a: Labels, b: Labels): number {
  const enc = (l: Labels) => Buffer.from(l.map((x) => `${x.name}\u0000${x.value}\u0001`).join(''), 'utf8');
  return Buffer.compare(enc(a), enc(b));
}

function assertSameSeries(got: Series[], want: Series[]): void {
  assert.equal(got.length, want.length, 'series count');
  for (let i = 0; i < want.length; i++) {
    assert.deepEqual(got[i].labels, want[i].labels);
    assert.deepEqual(Array.from(got[i].timestamps), Array.from(want[i].timestamps), `timestamps of series ${i}`);
    assert.deepEqual(bits(got[i].values), bits(want[i].values), `value bits of series ${i}`);
  }
}

async function withTmp(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'strata-block-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const get = (l: Labels, n: string) => l.find((x) => x.name === n)?.value ?? '';

test('block round trip: every sample comes back bit-exact, clipped to the block range', () =>
  withTmp(async (dir) => {
    const series = makeSeries();
    const bmint = T0 - 3_000_000;
    const bmaxt = T0 + 3_000_000;
    const written = await writeBlock({ dir, series, mint: bmint, maxt: bmaxt });
    assert.ok(written);
    const { meta } = written;
    assert.ok(isUlid(meta.ulid));
    assert.deepEqual(await readdir(dir), [meta.ulid], 'only the final block dir remains');
    assert.deepEqual((await readdir(written.dir)).sort(), ['chunks', 'index', 'meta.json', 'tombstones']);

    const all = expected(series, () => true, -Infinity, Infinity, bmint, bmaxt);
    const numSamples = all.reduce((n, s) => n + s.timestamps.length, 0);
    assert.equal(meta.stats.numSeries, all.length);
    assert.equal(meta.stats.numSamples, numSamples);
    assert.equal(
      meta.stats.numChunks,
      all.reduce((n, s) => n + Math.ceil(s.timestamps.length / 120), 0),
    );
    assert.equal(meta.minTime, Math.min(...all.map((s) => s.timestamps[0])));
    assert.equal(meta.maxTime, Math.max(...all.map((s) => s.timestamps[s.timestamps.length - 1])) + 1);
    const onDisk = parseBlockMeta(await readFile(join(written.dir, 'meta.json'), 'utf8'));
    assert.deepEqual(onDisk, meta);
    assert.deepEqual(meta.thanos?.downsample, { resolution: 0 });
    assert.deepEqual(meta.compaction, { level: 1, sources: [meta.ulid] });

    const r = await BlockReader.openDir(written.dir);
    try {
      assertSameSeries(await r.select({ matchers: [], mint: -Infinity, maxt: Infinity }), all);
      assertSameSeries(await r.select({ matchers: [{ type: '=~', name: '__name__', value: '.+' }], mint: -Infinity, maxt: Infinity }), all);

      const mint = T0 - 1_000_000;
      const maxt = T0 - 500_000;
      const cases: [Matcher[], (l: Labels) => boolean][] = [
        [[{ type: '=', name: 'job', value: 'api' }], (l) => get(l, 'job') === 'api'],
        [[{ type: '!=', name: 'job', value: 'api' }], (l) => get(l, 'job') !== 'api'],
        [[{ type: '=~', name: 'instance', value: 'host-1.*' }], (l) => /^host-1.*$/.test(get(l, 'instance'))],
        [
          [
            { type: '!~', name: 'instance', value: 'host-[0-5]' },
            { type: '=', name: '__name__', value: 'up' },
          ],
          (l) => !/^host-[0-5]$/.test(get(l, 'instance')) && get(l, '__name__') === 'up',
        ],
        // Matchers that match "" also select series without the label.
        [[{ type: '=', name: 'zone', value: '' }], (l) => get(l, 'zone') === ''],
        [[{ type: '!=', name: 'zone', value: 'eu' }], (l) => get(l, 'zone') !== 'eu'],
        [[{ type: '=~', name: 'zone', value: 'us|' }], (l) => ['us', ''].includes(get(l, 'zone'))],
        [[{ type: '!=', name: 'zone', value: '' }], (l) => get(l, 'zone') !== ''],
        [[{ type: '=', name: 'nope', value: 'x' }], () => false],
        [[{ type: '!=', name: 'nope', value: 'x' }], () => true],
        [[{ type: '=', name: 'path', value: '/ünïcödé/😀' }], (l) => get(l, 'path') === '/ünïcödé/😀'],
        // Regexes are fully anchored.
        [[{ type: '=~', name: 'job', value: 'ap' }], () => false],
      ];
      for (const [matchers, fn] of cases) {
        assertSameSeries(await r.select({ matchers, mint, maxt }), expected(series, fn, mint, maxt, bmint, bmaxt));
      }
      assert.deepEqual(await r.select({ matchers: [], mint: T0 + 10_000_000, maxt: T0 + 20_000_000 }), [], 'outside the block');

      assert.deepEqual(await r.labelNames({ matchers: [], mint: -Infinity, maxt: Infinity }), ['__name__', 'instance', 'job', 'path', 'zone']);
      assert.deepEqual(await r.labelValues({ name: 'job', matchers: [], mint: -Infinity, maxt: Infinity }), ['api', 'cache', 'db']);
      assert.deepEqual(
        await r.labelValues({ name: 'zone', matchers: [{ type: '=', name: 'job', value: 'api' }], mint: -Infinity, maxt: Infinity }),
        ['us', 'eu'].filter((z) => all.some((s) => get(s.labels, 'job') === 'api' && get(s.labels, 'zone') === z)).sort(),
      );
      assert.deepEqual(await r.labelNames({ matchers: [{ type: '=', name: 'instance', value: 'host-7' }], mint: -Infinity, maxt: Infinity }), [
        '__name__',
        'instance',
        'job',
        'path',
      ]);
    } finally {
      await r.close();
    }
  }));

test('block spanning several chunk segments, read through in-memory byte sources', () =>
  withTmp(async (dir) => {
    const series = makeSeries();
    const written = await writeBlock({ dir, series, mint: -Infinity, maxt: Infinity, segmentSize: 4096, samplesPerChunk: 50 });
    assert.ok(written);
    const segs = (await readdir(join(written.dir, 'chunks'))).sort();
    assert.ok(segs.length > 3, `expected several segments, got ${segs.length}`);
    assert.deepEqual(written.meta.thanos?.segment_files, segs);
    const r = await BlockReader.open({
      index: new MemoryByteSource(await readFile(join(written.dir, 'index'))),
      chunkSegments: await Promise.all(segs.map(async (s) => new MemoryByteSource(await readFile(join(written.dir, 'chunks', s))))),
    });
    assertSameSeries(
      await r.select({ matchers: [], mint: -Infinity, maxt: Infinity }),
      expected(series, () => true, -Infinity, Infinity, -Infinity, Infinity),
    );
  }));

test('reads are coalesced: a select over every series costs a handful of range reads', () =>
  withTmp(async (dir) => {
    const written = await writeBlock({ dir, series: makeSeries(), mint: -Infinity, maxt: Infinity });
    assert.ok(written);
    const reads: string[] = [];
    const counting = (name: string, bytes: Uint8Array) => {
      const inner = new MemoryByteSource(bytes);
      return {
        size: () => inner.size(),
        read: (offset: number, length: number) => {
          reads.push(`${name}@${offset}+${length}`);
          return inner.read(offset, length);
        },
      };
    };
    const r = await BlockReader.open({
      index: counting('index', await readFile(join(written.dir, 'index'))),
      chunkSegments: [counting('chunks', await readFile(join(written.dir, 'chunks', '000001')))],
    });
    const opened = reads.length;
    const got = await r.select({ matchers: [{ type: '=~', name: 'job', value: 'api|db' }], mint: -Infinity, maxt: Infinity });
    assert.equal(got.length, 20);
    const perSelect = reads.length - opened;
    assert.ok(perSelect <= 6, `select took ${perSelect} reads: ${reads.slice(opened).join(' ')}`);
  }));

test('corruption is detected by checksums', () =>
  withTmp(async (dir) => {
    const written = await writeBlock({ dir, series: makeSeries(), mint: -Infinity, maxt: Infinity });
    assert.ok(written);
    const index = await readFile(join(written.dir, 'index'));
    const chunk = await readFile(join(written.dir, 'chunks', '000001'));
    const badChunk = Uint8Array.from(chunk);
    badChunk[100] ^= 0x10;
    const r = await BlockReader.open({ index: new MemoryByteSource(index), chunkSegments: [new MemoryByteSource(badChunk)] });
    await assert.rejects(r.select({ matchers: [], mint: -Infinity, maxt: Infinity }), /checksum mismatch/);
    const badIndex = Uint8Array.from(index);
    badIndex[20] ^= 0x01; // inside the symbol table
    await assert.rejects(BlockReader.open({ index: new MemoryByteSource(badIndex), chunkSegments: [new MemoryByteSource(chunk)] }), /checksum/);
  }));

test('writes nothing for an empty range and rejects bad input', () =>
  withTmp(async (dir) => {
    assert.equal(await writeBlock({ dir, series: makeSeries(), mint: 0, maxt: 1000 }), null);
    assert.deepEqual(await readdir(dir), []);
    const s: Series = { labels: labels({ a: 'b' }), timestamps: Float64Array.of(1, 1), values: Float64Array.of(1, 2) };
    await assert.rejects(writeBlock({ dir, series: [s], mint: 0, maxt: 10 }), /strictly increase/);
    const d: Series = { labels: labels({ a: 'b' }), timestamps: Float64Array.of(1), values: Float64Array.of(1) };
    await assert.rejects(writeBlock({ dir, series: [d, d], mint: 0, maxt: 10 }), /appears twice/);
    assert.deepEqual(await readdir(dir), [], 'failed writes leave no temp dir behind');
  }));

test('ULIDs are well-formed, time-ordered and monotonic within a millisecond', () => {
  let now = 1_700_000_000_123;
  const gen = createUlidGenerator({ now: () => now });
  const a = gen();
  const b = gen();
  now += 1;
  const c = gen();
  assert.ok(isUlid(a) && isUlid(b) && isUlid(c));
  assert.equal(ulidTime(a), 1_700_000_000_123);
  assert.ok(a < b && b < c, `${a} < ${b} < ${c}`);
  const fixed = createUlidGenerator({ now: () => 0, random: (x) => x.fill(0xff) });
  assert.equal(fixed(), '0000000000ZZZZZZZZZZZZZZZZ');
  assert.throws(() => fixed(), /overflow/);
});
