// Native histogram blocks written by Strata, read by Prometheus itself:
// promtool 2.42 lists them with our sample counts, Prometheus 3's `promtool
// tsdb dump` prints every histogram sample with our counts, sums and buckets
// (2.42's dump prints float samples only), and a real Prometheus 2.42 server
// opening the block returns, through its query API, the same for every sample.
// One series arrives half out of order and ends with a stale marker: the dump
// shows it in time order with the marker's NaN sum, and Prometheus drops the
// series from instant queries after the marker.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '@strata/local-cluster';
import type { Labels, NativeHistogram } from '@strata/model';
import { Head, emptyAppendStats, writeBlockFromChunks } from '@strata/tsdb';
import { waitFor } from './support/client.ts';
import { parseDumpHistograms, parseList, promtool, promtool3 } from './support/promtool.ts';

const PROMETHEUS = '/usr/bin/prometheus';
const H2 = 2 * 3600_000;
const T0 = Math.floor(1_732_950_000_000 / H2) * H2 + 600_000;
const STEP = 15_000;
const STALE_NAN = new Float64Array(new Uint32Array([2, 0x7ff00000]).buffer)[0];

/** Exponential bucket bounds of index i: (base^(i-1), base^i] with base = 2^(2^-schema). */
function upper(schema: number, i: number): number {
  return 2 ** (i * 2 ** -schema);
}

interface Bucket {
  lower: number;
  upper: number;
  count: number;
}

function expectedBuckets(h: NativeHistogram): Bucket[] {
  const out: Bucket[] = [];
  const walk = (spans: NativeHistogram['positiveSpans'], counts: number[], sign: 1 | -1) => {
    let idx = 0;
    let k = 0;
    for (const s of spans) {
      idx += s.offset;
      for (let j = 0; j < s.length; j++, idx++, k++) {
        if (counts[k] === 0) continue;
        const lo = upper(h.schema, idx - 1);
        const hi = upper(h.schema, idx);
        out.push(sign === 1 ? { lower: lo, upper: hi, count: counts[k] } : { lower: -hi, upper: -lo, count: counts[k] });
      }
    }
  };
  walk(h.negativeSpans, h.negativeBuckets, -1);
  if (h.zeroCount > 0) out.push({ lower: -h.zeroThreshold, upper: h.zeroThreshold, count: h.zeroCount });
  walk(h.positiveSpans, h.positiveBuckets, 1);
  return out.sort((a, b) => a.lower - b.lower);
}

function close(a: number, b: number): boolean {
  if (Number.isNaN(b)) return Number.isNaN(a);
  return a === b || Math.abs(a - b) <= 1e-12 * Math.max(Math.abs(a), Math.abs(b));
}

/**
 * Three series: one with new buckets appearing and a counter reset, one at
 * schema 3 with negative buckets, one whose odd samples arrive out of order
 * (a counter reset among them, a stale marker last).
 */
function data(): { labels: Labels; samples: { t: number; h: NativeHistogram }[]; ooo?: true }[] {
  const a: { t: number; h: NativeHistogram }[] = [];
  for (let i = 0; i < 300; i++) {
    const n = i < 200 ? i + 1 : i - 199; // a reset at sample 200
    const wide = i >= 50; // bucket 4 appears at sample 50
    const pb = [n, 2 * n, 3 * n, ...(wide ? [i] : [])];
    a.push({
      t: T0 + i * STEP,
      h: {
        counterResetHint: 'unknown',
        schema: 0,
        zeroThreshold: 2 ** -128,
        zeroCount: n,
        count: n + pb.reduce((x, y) => x + y, 0),
        sum: n * 1.5 + i / 7,
        positiveSpans: wide
          ? [
              { offset: -1, length: 3 },
              { offset: 2, length: 1 },
            ]
          : [{ offset: -1, length: 3 }],
        negativeSpans: [],
        positiveBuckets: pb,
        negativeBuckets: [],
      },
    });
  }
  const b: { t: number; h: NativeHistogram }[] = [];
  for (let i = 0; i < 150; i++) {
    const pos = [i, 5 * i + 1, 0, 7];
    const neg = [2 * i, i];
    b.push({
      t: T0 + i * STEP + 7,
      h: {
        counterResetHint: 'unknown',
        schema: 3,
        zeroThreshold: 0.001,
        zeroCount: 0,
        count: pos.concat(neg).reduce((x, y) => x + y, 0),
        sum: -3.25 * i,
        positiveSpans: [
          { offset: 10, length: 2 },
          { offset: 5, length: 2 },
        ],
        negativeSpans: [{ offset: -3, length: 2 }],
        positiveBuckets: pos,
        negativeBuckets: neg,
      },
    });
  }
  const c: { t: number; h: NativeHistogram }[] = [];
  for (let i = 0; i < 120; i++) {
    const n = i < 61 ? 2 * i + 1 : i - 60; // a reset at sample 61, an out-of-order one
    const stale = i === 119;
    c.push({
      t: T0 + i * STEP + 3,
      h: {
        counterResetHint: 'unknown',
        schema: 1,
        zeroThreshold: stale ? 0 : 2 ** -128,
        zeroCount: 0,
        count: stale ? 0 : 3 * n,
        sum: stale ? STALE_NAN : n / 4,
        positiveSpans: stale ? [] : [{ offset: 2, length: 2 }],
        negativeSpans: [],
        positiveBuckets: stale ? [] : [n, 2 * n],
        negativeBuckets: [],
      },
    });
  }
  return [
    {
      labels: [
        { name: '__name__', value: 'latency_seconds' },
        { name: 'job', value: 'a' },
      ],
      samples: a,
    },
    {
      labels: [
        { name: '__name__', value: 'latency_seconds' },
        { name: 'job', value: 'b' },
      ],
      samples: b,
    },
    {
      labels: [
        { name: '__name__', value: 'latency_seconds' },
        { name: 'job', value: 'c' },
      ],
      samples: c,
      ooo: true,
    },
  ];
}

interface PromHistogram {
  count: string;
  sum: string;
  buckets?: [number, string, string, string][];
}

test('Prometheus (promtool 2.42 and 3, a 2.42 server) reads native histogram blocks written by Strata with the same counts, sums and buckets', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'strata-hist-prom-'));
  const [port] = await freePorts(1);
  let proc: ReturnType<typeof spawn> | undefined;
  let stderr = '';
  try {
    // Through the head, as an ingester cuts a block.
    const head = new Head({ chunkRangeMs: H2, outOfOrderTimeWindowMs: () => H2 });
    const st = emptyAppendStats();
    const input = data();
    const append = (s: (typeof input)[number], i: number) =>
      head.appendHistograms(s.labels, [{ timestamp: s.samples[i].t, histogram: s.samples[i].h, float: false }], st);
    // In time order across series: the head refuses in-order samples more than half a block range behind its newest.
    for (let i = 0; i < 300; i++) {
      for (const s of input) if (i < s.samples.length && !(s.ooo && i % 2 === 1)) append(s, i);
    }
    // Then series c's odd samples, older than the head's newest by up to 75 minutes, inside the window.
    for (const s of input) if (s.ooo) for (let i = s.samples.length - 1; i >= 0; i -= 2) append(s, i);
    assert.equal(st.appended, 570);
    assert.equal(st.outOfOrder, 0);
    const start = Math.floor(T0 / H2) * H2;
    const block = await writeBlockFromChunks({ dir: join(dir, 'data'), series: head.snapshotForBlock(start, start + H2) });
    assert.ok(block);
    await mkdir(join(dir, 'data', 'wal'), { recursive: true });

    const listed = parseList(await promtool('tsdb', 'list', join(dir, 'data')));
    assert.equal(listed.length, 1);
    assert.equal(listed[0].samples, 570);
    assert.equal(listed[0].series, 3);
    assert.equal(listed[0].chunks, block.meta.stats.numChunks);

    const dumped = parseDumpHistograms(await promtool3('tsdb', 'dump', join(dir, 'data')));
    assert.equal(dumped.length, 570, 'promtool 3 dumps every histogram sample');
    for (const s of input) {
      const mine = dumped.filter((d) => d.labels.includes(`job="${s.labels[1].value}"`));
      assert.deepEqual(
        mine.map((d) => d.timestamp),
        s.samples.map((x) => x.t),
        `job=${s.labels[1].value}: timestamps`,
      );
      mine.forEach((d, i) => {
        const want = s.samples[i].h;
        assert.equal(d.count, want.count, `dump job=${s.labels[1].value} sample ${i} count`);
        assert.ok(close(d.sum, want.sum), `dump job=${s.labels[1].value} sample ${i} sum ${d.sum} vs ${want.sum}`);
        const wantBuckets = expectedBuckets(want);
        assert.equal(
          d.buckets.length,
          wantBuckets.length,
          `dump job=${s.labels[1].value} sample ${i}: ${JSON.stringify(d.buckets)} vs ${JSON.stringify(wantBuckets)}`,
        );
        d.buckets.forEach((b, k) =>
          assert.ok(close(b.lower, wantBuckets[k].lower) && close(b.upper, wantBuckets[k].upper) && b.count === wantBuckets[k].count, `dump bucket ${k}`),
        );
      });
    }

    await writeFile(join(dir, 'prometheus.yml'), 'global:\n  scrape_interval: 1m\n');
    proc = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        '--storage.tsdb.retention.time=100y',
        `--web.listen-address=127.0.0.1:${port}`,
        '--enable-feature=native-histograms',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    proc.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    const url = `http://127.0.0.1:${port}`;
    await waitFor('Prometheus ready', async () => ((await fetch(`${url}/-/ready`).catch(() => undefined))?.ok ? true : undefined), 60_000).catch((err: Error) =>
      assert.fail(`${err.message}\nprometheus stderr: ${stderr}`),
    );
    const at = (T0 + 300 * STEP) / 1000;
    const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent('latency_seconds[2h]')}&time=${at}`);
    const body = (await res.json()) as {
      status: string;
      data: { result: { metric: Record<string, string>; histograms?: [number, PromHistogram][]; values?: unknown[] }[] };
    };
    assert.equal(body.status, 'success', JSON.stringify(body));
    assert.equal(body.data.result.length, 3);
    for (const s of input) {
      const job = s.labels[1].value;
      const got = body.data.result.find((r) => r.metric.job === job);
      assert.ok(got?.histograms, `series job=${job}: ${JSON.stringify(got)?.slice(0, 300)}`);
      assert.equal(got.values, undefined);
      // A range selector leaves stale markers out.
      const live = s.samples.filter((x) => !Number.isNaN(x.h.sum));
      assert.equal(got.histograms.length, live.length);
      got.histograms.forEach(([ts, h], i) => {
        const want = live[i];
        assert.equal(Math.round(ts * 1000), want.t);
        assert.equal(Number(h.count), want.h.count, `job=${job} sample ${i} count`);
        assert.ok(close(Number(h.sum), want.h.sum), `job=${job} sample ${i} sum ${h.sum} vs ${want.h.sum}`);
        const buckets = (h.buckets ?? []).map(([, lo, hi, c]) => ({ lower: Number(lo), upper: Number(hi), count: Number(c) })).filter((b) => b.count !== 0);
        buckets.sort((x, y) => x.lower - y.lower);
        const wantBuckets = expectedBuckets(want.h);
        assert.equal(buckets.length, wantBuckets.length, `job=${job} sample ${i}: ${JSON.stringify(buckets)} vs ${JSON.stringify(wantBuckets)}`);
        buckets.forEach((b, k) => {
          const w = wantBuckets[k];
          assert.ok(
            close(b.lower, w.lower) && close(b.upper, w.upper) && b.count === w.count,
            `job=${job} sample ${i} bucket ${k}: ${JSON.stringify(b)} vs ${JSON.stringify(w)}`,
          );
        });
      });
    }
    // Just after series c's stale marker, an instant query has only a and b; just before, c too.
    const instant = async (t: number) => {
      const r = await fetch(`${url}/api/v1/query?query=latency_seconds&time=${t / 1000}`);
      const b = (await r.json()) as { data: { result: { metric: Record<string, string> }[] } };
      return b.data.result.map((x) => x.metric.job).sort();
    };
    const marker = T0 + 119 * STEP + 3;
    assert.deepEqual(await instant(marker - 1), ['a', 'b', 'c']);
    assert.deepEqual(await instant(marker + 1000), ['a', 'b']);
  } finally {
    if (proc?.pid) proc.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});
