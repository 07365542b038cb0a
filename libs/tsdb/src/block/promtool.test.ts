// Acceptance tests against Prometheus itself (promtool 2.42): promtool must
// list and dump our blocks exactly, and our reader must return exactly what
// Prometheus wrote into blocks of its own.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Labels, Series } from '@strata/model';
import { writeBlock } from './block-writer.ts';
import { BlockReader } from './block-reader.ts';
import { ChunksReader } from './chunks-reader.ts';
import { FileByteSource } from './byte-source.ts';
import { IndexReader } from '../index/index-reader.ts';
import { HI_WORD, LO_WORD, XorChunkEncoder, decodeXorChunk } from '../chunkenc/xor-chunk.ts';
import { XOR_ENCODING } from '../chunkenc/chunk-encoding.ts';

const run = promisify(execFile);
const PROMTOOL = '/usr/bin/promtool';
const skip = existsSync(PROMTOOL) ? false : 'promtool is not installed';

const T0 = 1_732_950_000_000;

async function promtool(...args: string[]): Promise<string> {
  const { stdout } = await run(PROMTOOL, args, { maxBuffer: 256 * 1024 * 1024 });
  return stdout;
}

function bitsOf(values: Float64Array, i: number): [number, number] {
  const w = new Uint32Array(values.buffer, values.byteOffset + i * 8, 2);
  return [w[HI_WORD], w[LO_WORD]];
}

function setBits(values: Float64Array, i: number, hi: number, lo: number): void {
  const w = new Uint32Array(values.buffer, values.byteOffset + i * 8, 2);
  w[HI_WORD] = hi;
  w[LO_WORD] = lo;
}

/** Go's labels.String() for plain ASCII values: {a="b", c="d"}. */
function promLabels(labels: Labels): string {
  return '{' + labels.map((l) => `${l.name}=${JSON.stringify(l.value)}`).join(', ') + '}';
}

/** Parses Go's %g float output. */
function parseGoFloat(s: string): number {
  if (s === '+Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === 'NaN') return NaN;
  const v = Number(s);
  assert.ok(!Number.isNaN(v), `unparseable value ${s}`);
  return v;
}

/** `promtool tsdb dump` output: series string -> [timestamp, value][] in output order. */
function parseDump(out: string): Map<string, [number, number][]> {
  const bySeries = new Map<string, [number, number][]>();
  for (const line of out.split('\n')) {
    if (line === '') continue;
    const m = /^(\{.*\}) (\S+) (-?\d+)$/.exec(line);
    assert.ok(m, `unexpected dump line: ${line}`);
    let list = bySeries.get(m[1]);
    if (!list) bySeries.set(m[1], (list = []));
    list.push([Number(m[3]), parseGoFloat(m[2])]);
  }
  return bySeries;
}

function sameValue(got: number, want: number): boolean {
  return Number.isNaN(want) ? Number.isNaN(got) : Object.is(got, want);
}

/** 50 series x 500 samples with irregular intervals, large jumps and special values. */
function testSeries(): Series[] {
  const out: Series[] = [];
  for (let i = 0; i < 50; i++) {
    const labels: Labels = [
      { name: '__name__', value: i % 3 === 0 ? 'node_cpu_seconds_total' : 'http_requests_total' },
      { name: 'instance', value: `10.0.${i >> 4}.${i & 15}:9100` },
      { name: 'job', value: ['node', 'api', 'edge'][i % 3] },
    ];
    if (i % 4 === 0) labels.push({ name: 'zone', value: `z${i % 8}` });
    const ts = new Float64Array(500);
    const vs = new Float64Array(500);
    let t = T0 + i * 13;
    let v = i * 100;
    for (let k = 0; k < 500; k++) {
      ts[k] = t;
      const step = k % 97 === 50 ? 600_000 + k : k % 7 === 0 ? 15_000 + (k % 5) * 3 : 15_000;
      t += step;
      if (i % 2 === 0) v += (k * 7919) % 113;
      else v = Math.sin(k / 10) * 10 ** ((i % 9) - 4);
      vs[k] = v;
    }
    setBits(vs, 123, 0x7ff00000, 0x00000002); // stale marker
    if (i % 5 === 0) vs[200] = Infinity;
    if (i % 5 === 1) vs[201] = -Infinity;
    if (i % 5 === 2) vs[202] = -0;
    if (i % 5 === 3) setBits(vs, 203, 0x7ff80000, 0x00c0ffee); // NaN with a payload
    out.push({ labels, timestamps: ts, values: vs });
  }
  return out;
}

test('promtool lists and dumps a block we wrote, sample for sample', { skip, timeout: 120_000 }, async () => {
  const db = await mkdtemp(join(tmpdir(), 'strata-promtool-'));
  try {
    const series = testSeries();
    const written = await writeBlock({ dir: db, series, mint: T0 - 7_200_000, maxt: T0 + 4 * 7_200_000 });
    assert.ok(written);
    const { meta } = written;
    assert.deepEqual(meta.stats, { numSamples: 25_000, numSeries: 50, numChunks: 250 });

    const list = await promtool('tsdb', 'list', db);
    const row = list.split('\n').find((l) => l.startsWith(meta.ulid));
    assert.ok(row, `promtool tsdb list does not show ${meta.ulid}:\n${list}`);
    const [, minT, maxT, , samples, chunks, nSeries] = row.split(/\s+/);
    assert.deepEqual(
      { minT: Number(minT), maxT: Number(maxT), samples: Number(samples), chunks: Number(chunks), series: Number(nSeries) },
      { minT: meta.minTime, maxT: meta.maxTime, samples: 25_000, chunks: 250, series: 50 },
    );
    console.log(`promtool tsdb list:\n${list.trimEnd()}`);

    // analyze walks the index itself (postings, label values), not just meta.json.
    const analyze = await promtool('tsdb', 'analyze', db, meta.ulid);
    assert.match(analyze, /^Series: 50$/m);
    assert.match(analyze, /^Label names: 4$/m);

    // promtool 2.42's dump opens the head too, which wants a WAL directory.
    await mkdir(join(db, 'wal'), { recursive: true });
    const dump = parseDump(await promtool('tsdb', 'dump', `--min-time=${meta.minTime}`, `--max-time=${meta.maxTime - 1}`, db));
    assert.equal(dump.size, 50);
    let compared = 0;
    let nans = 0;
    for (const s of series) {
      const got = dump.get(promLabels(s.labels));
      assert.ok(got, `series ${promLabels(s.labels)} missing from the dump`);
      assert.equal(got.length, s.timestamps.length);
      for (let k = 0; k < got.length; k++) {
        assert.equal(got[k][0], s.timestamps[k]);
        assert.ok(sameValue(got[k][1], s.values[k]), `${promLabels(s.labels)} @${s.timestamps[k]}: dumped ${got[k][1]}, wrote ${s.values[k]}`);
        if (Number.isNaN(s.values[k])) nans++;
        compared++;
      }
    }
    assert.equal(compared, 25_000);
    assert.equal(nans, 60, 'stale markers and NaN payloads dumped as NaN');
  } finally {
    await rm(db, { recursive: true, force: true });
  }
});

/** OpenMetrics exposition of irregular samples; seconds with 3 decimals that are exact in binary (multiples of 1/8 s). */
function openMetrics(): { text: string; series: Map<string, [number, number][]> } {
  const lines = ['# HELP om_metric A test gauge.', '# TYPE om_metric gauge'];
  const series = new Map<string, [number, number][]>();
  const samples: { key: string; lbl: string; t: number; v: number }[] = [];
  for (let i = 0; i < 12; i++) {
    const lbl = `{host="h${i}",dc="${i % 2 ? 'a' : 'b'}"}`;
    const key = promLabels([
      { name: '__name__', value: 'om_metric' },
      { name: 'dc', value: i % 2 ? 'a' : 'b' },
      { name: 'host', value: `h${i}` },
    ]);
    let t = T0 + i * 125;
    for (let k = 0; k < 400; k++) {
      let v: number;
      if (k % 50 === 7) v = NaN;
      else if (k % 77 === 3) v = Infinity;
      else if (i % 3 === 0) v = k * 2;
      else if (i % 3 === 1) v = Math.round(Math.cos(k + i) * 1e6) / 1e3;
      else v = (k * 1.1) ** 3 * (k % 2 ? -1 : 1);
      samples.push({ key, lbl, t, v });
      t += 15_000 + (k % 9 === 0 ? 125 * (k % 17) : 0) + (k === 200 ? 3_600_000 : 0);
    }
  }
  // OpenMetrics wants each series' samples contiguous and in time order.
  for (const s of samples) {
    const sec = `${Math.floor(s.t / 1000)}.${String(s.t % 1000).padStart(3, '0')}`;
    const val = Number.isNaN(s.v) ? 'NaN' : s.v === Infinity ? '+Inf' : String(s.v);
    lines.push(`om_metric${s.lbl} ${val} ${sec}`);
    let l = series.get(s.key);
    if (!l) series.set(s.key, (l = []));
    l.push([s.t, s.v]);
  }
  lines.push('# EOF', '');
  return { text: lines.join('\n'), series };
}

test('our reader returns exactly what Prometheus wrote (promtool create-blocks-from openmetrics)', { skip, timeout: 120_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'strata-prom-blocks-'));
  try {
    const { text, series } = openMetrics();
    await writeFile(join(dir, 'input.om'), text);
    const out = join(dir, 'db');
    await promtool('tsdb', 'create-blocks-from', 'openmetrics', join(dir, 'input.om'), out);
    const blocks = (await readdir(out)).filter((n) => /^[0-9A-Z]{26}$/.test(n)).sort();
    assert.ok(blocks.length >= 2, `expected several 2h blocks, got ${blocks.length}`);

    // Everything our reader returns, merged over the blocks.
    const ours = new Map<string, [number, number][]>();
    let chunksChecked = 0;
    let identicalBlocks = 0;
    for (const b of blocks) {
      const r = await BlockReader.openDir(join(out, b));
      let selected: Series[];
      try {
        selected = await r.select({ matchers: [{ type: '=', name: '__name__', value: 'om_metric' }], mint: -Infinity, maxt: Infinity });
      } finally {
        await r.close();
      }
      for (const s of selected) {
        const key = promLabels(s.labels);
        let l = ours.get(key);
        if (!l) ours.set(key, (l = []));
        for (let k = 0; k < s.timestamps.length; k++) l.push([s.timestamps[k], s.values[k]]);
      }
      const { chunks, cutAt120 } = await reencodeChunks(join(out, b));
      chunksChecked += chunks;
      if (cutAt120) {
        // Prometheus cut this block's chunks every 120 samples, as we do: writing
        // the same samples must give byte-identical index and chunk files.
        const again = await writeBlock({ dir: join(dir, 'ours'), series: selected, mint: -Infinity, maxt: Infinity, ulid: b });
        assert.ok(again);
        for (const f of ['index', join('chunks', '000001')]) {
          const [theirs, mine]: Buffer[] = await Promise.all([readFile(join(out, b, f)), readFile(join(again.dir, f))]);
          assert.ok(Buffer.compare(theirs, mine) === 0, `${f} of block ${b} differs from Prometheus' (${theirs.length} vs ${mine.length} bytes)`);
        }
        identicalBlocks++;
      }
    }
    assert.ok(chunksChecked > 12, `re-encoded ${chunksChecked} chunks`);
    assert.ok(identicalBlocks >= 1, 'no Prometheus block was cut at 120 samples to compare bytes with');

    // Same as the input file, and the same as promtool's own dump of those blocks.
    await mkdir(join(out, 'wal'), { recursive: true });
    const dumped = parseDump(await promtool('tsdb', 'dump', `--min-time=${T0 - 1}`, `--max-time=${T0 + 100_000_000}`, out));
    for (const [name, reference] of [
      ['input', series],
      ['promtool dump', dumped],
    ] as const) {
      assert.deepEqual([...ours.keys()].sort(), [...reference.keys()].sort(), `series differ from ${name}`);
      for (const [key, want] of reference) {
        const got = (ours.get(key) as [number, number][]).slice().sort((a, b) => a[0] - b[0]);
        assert.equal(got.length, want.length, `${key}: sample count vs ${name}`);
        for (let k = 0; k < want.length; k++) {
          assert.equal(got[k][0], want[k][0], `${key}: timestamp ${k} vs ${name}`);
          assert.ok(sameValue(got[k][1], want[k][1]), `${key} @${want[k][0]}: ours ${got[k][1]}, ${name} ${want[k][1]}`);
        }
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** Decodes every chunk Prometheus wrote, re-encodes it with our encoder and demands identical bytes. */
async function reencodeChunks(blockDir: string): Promise<{ chunks: number; cutAt120: boolean }> {
  const index = await IndexReader.open(await FileByteSource.open(join(blockDir, 'index')));
  const segs = (await readdir(join(blockDir, 'chunks'))).sort();
  const chunks = await ChunksReader.open(await Promise.all(segs.map((s) => FileByteSource.open(join(blockDir, 'chunks', s)))));
  let n = 0;
  let cutAt120 = true;
  try {
    for (const e of await index.series(await index.allPostings())) {
      const raw = await chunks.read(e.chunks.map((c) => c.ref));
      for (let k = 0; k < raw.length; k++) {
        if (k < raw.length - 1 && (raw[k].data[0] << 8) + raw[k].data[1] !== 120) cutAt120 = false;
        assert.equal(raw[k].encoding, XOR_ENCODING);
        const { timestamps, values } = decodeXorChunk(raw[k].data);
        assert.equal(timestamps[0], e.chunks[k].minTime);
        assert.equal(timestamps[timestamps.length - 1], e.chunks[k].maxTime);
        const enc = new XorChunkEncoder();
        for (let i = 0; i < timestamps.length; i++) enc.appendBits(timestamps[i], ...bitsOf(values, i));
        assert.deepEqual(Array.from(enc.bytes()), Array.from(raw[k].data), `chunk ${k} of ${JSON.stringify(e.labels)} re-encodes differently`);
        n++;
      }
    }
  } finally {
    await index.close();
    await chunks.close();
  }
  return { chunks: n, cutAt120 };
}
