// Native histograms with custom buckets (schema -53) in blocks Strata writes, read by
// Prometheus 3's `promtool tsdb dump` (2.42 predates NHCB): every sample with our
// count, sum and buckets by their custom bounds — counter histograms across a change
// of bounds and a reset (new chunks) and gauge histograms (deltas) that go down.
// That Prometheus decodes our chunks proves the custom-bounds layout is its own.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Labels, NativeHistogram } from '@strata/model';
import { Head, emptyAppendStats, writeBlockFromChunks } from '@strata/tsdb';
import { promtool3 } from './support/promtool.ts';

const H2 = 2 * 3600_000;
const T0 = Math.floor(1_732_950_000_000 / H2) * H2 + 600_000;
const STEP = 15_000;
const BOUNDS = [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000];

function nhcb(counts: number[], bounds: number[], gauge: boolean): NativeHistogram {
  const first = counts.findIndex((c) => c !== 0);
  return {
    counterResetHint: gauge ? 'gauge' : 'unknown',
    schema: -53,
    zeroThreshold: 0,
    zeroCount: 0,
    count: counts.reduce((a, b) => a + b, 0),
    sum: 7.25 * counts.reduce((a, b) => a + b, 0),
    positiveSpans: [{ offset: first, length: counts.length - first }],
    positiveBuckets: counts.slice(first),
    negativeSpans: [],
    negativeBuckets: [],
    customValues: bounds,
  };
}

/** 200 counter samples (bounds change at 120, a reset at 150) and 200 gauge samples going up and down. */
function data(): { labels: Labels; samples: { t: number; h: NativeHistogram }[] }[] {
  const counter = Array.from({ length: 200 }, (_, i) => {
    const n = i < 150 ? i + 1 : i - 149;
    const bounds = i < 120 ? BOUNDS : [0.5, 1, 2];
    const counts = i < 120 ? [0, 0, n, 0, 2 * n, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, n] : [n, 0, 3 * n, n];
    return { t: T0 + i * STEP, h: nhcb(counts, bounds, false) };
  });
  const gauge = Array.from({ length: 200 }, (_, i) => ({ t: T0 + i * STEP, h: nhcb([0, (i % 7) + 1, 0, i % 3, 1], [1, 10, 100, 1000], true) }));
  return [
    {
      labels: [
        { name: '__name__', value: 'latency' },
        { name: 'kind', value: 'counter' },
      ],
      samples: counter,
    },
    {
      labels: [
        { name: '__name__', value: 'latency' },
        { name: 'kind', value: 'delta' },
      ],
      samples: gauge,
    },
  ];
}

/** The non-empty buckets of a custom-bounds histogram as promtool prints them: `(lower,upper]:count`, the first `[-Inf,b0]`. */
function bucketStrings(h: NativeHistogram): string[] {
  const cv = h.customValues!;
  const out: string[] = [];
  let idx = 0;
  let k = 0;
  const g = (v: number) => (v === Infinity ? '+Inf' : v === -Infinity ? '-Inf' : String(v));
  for (const s of h.positiveSpans) {
    idx += s.offset;
    for (let j = 0; j < s.length; j++, idx++, k++) {
      const c = h.positiveBuckets[k];
      if (c === 0) continue;
      const lower = idx === 0 ? -Infinity : cv[idx - 1];
      const upper = idx < cv.length ? cv[idx] : Infinity;
      out.push(`${idx === 0 ? '[' : '('}${g(lower)},${g(upper)}]:${c}`);
    }
  }
  return out;
}

test("Prometheus 3's promtool reads NHCB blocks written by Strata: every sample's count, sum and custom-bound buckets", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'strata-nhcb-prom-'));
  try {
    const head = new Head({ chunkRangeMs: H2 });
    const st = emptyAppendStats();
    const input = data();
    for (const s of input)
      head.appendHistograms(
        s.labels,
        s.samples.map((x) => ({ timestamp: x.t, histogram: x.h, float: false })),
        st,
      );
    assert.equal(st.appended, 400);
    const start = Math.floor(T0 / H2) * H2;
    const block = await writeBlockFromChunks({ dir: join(dir, 'data'), series: head.snapshotForBlock(start, start + H2) });
    assert.ok(block);
    await mkdir(join(dir, 'data', 'wal'), { recursive: true });

    const lines = (await promtool3('tsdb', 'dump', join(dir, 'data'))).split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 400, 'promtool 3 dumps every NHCB sample');
    for (const s of input) {
      const kind = s.labels[1].value;
      const mine = lines.filter((l) => l.includes(`kind="${kind}"`));
      assert.deepEqual(
        mine,
        s.samples.map((x) => `{__name__="latency", kind="${kind}"} {count:${x.h.count}, sum:${x.h.sum}, ${bucketStrings(x.h).join(', ')}} ${x.t}`),
        `${kind}: promtool's dump`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
