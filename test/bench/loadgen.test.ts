// The load generator's bodies are what the reference encoders write, byte for
// byte, and keep each series on one shard in timestamp order (no timing here).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decompressBody, encodeWriteRequest, encodeWriteRequestV2, parseWriteRequest, parseWriteRequestV2 } from '@strata/remote-write';
import { RequestBuilderV1, RequestBuilderV2, WindowEncoder, encodeLabelsV1, shardOf } from './encode.ts';
import { SeriesSet } from './series.ts';
import { LoadGenerator, type PhaseResult } from './loadgen.ts';
import { summariseProfile } from './cpuprofile.ts';

test('1.0 and 2.0 builders match the reference encoders byte for byte', () => {
  const set = new SeriesSet({ series: 50 });
  const samples = [0, 7, 49, 7].map((i, k) => ({ i, ts: 1_700_000_000_000 + k * 15_000, v: set.value(i, k) }));
  const v1 = new RequestBuilderV1((i) => encodeLabelsV1(set.labels(i)));
  const v2 = new RequestBuilderV2((i) => set.labels(i).flatMap((l) => [l.name, l.value]));
  for (const s of samples) {
    v1.add(s.i, s.ts, s.v);
    v2.add(s.i, s.ts, s.v);
  }
  const timeseries = samples.map((s) => ({ labels: set.labels(s.i), samples: [{ value: s.v, timestamp: s.ts }] }));
  assert.deepEqual(v1.take(), Buffer.from(encodeWriteRequest({ timeseries })));
  assert.deepEqual(v2.take(), Buffer.from(encodeWriteRequestV2({ timeseries })));
  // A builder is empty again after take().
  v1.add(3, 1, 2);
  assert.deepEqual(v1.take(), Buffer.from(encodeWriteRequest({ timeseries: [{ labels: set.labels(3), samples: [{ value: 2, timestamp: 1 }] }] })));
});

test('labels are sorted and valid node-exporter-like series', () => {
  const set = new SeriesSet({ series: 1000, wide: 2 });
  assert.equal(set.size, 2000);
  const seen = new Set<string>();
  for (let i = 0; i < set.size; i++) {
    const ls = set.labels(i);
    const names = ls.map((l) => l.name);
    assert.deepEqual(names, [...names].sort());
    assert.equal(names[0], '__name__');
    seen.add(JSON.stringify(ls));
  }
  assert.equal(seen.size, set.size, 'every series is distinct');
});

test('every series stays on one shard, in timestamp order, across windows and churn', () => {
  for (const protocol of ['v1', 'v2'] as const) {
    const shards = 4;
    const enc = new WindowEncoder({ series: 600, protocol, shards, samplesPerRequest: 97, churnShare: 0.25, churnEveryMs: 30_000, uncompressed: true });
    const lastTs = new Map<string, number>();
    const shardOfSeries = new Map<string, number>();
    let total = 0;
    let tsStart = 1_700_000_000_000;
    for (let k = 0; k < 3; k++) {
      const w = enc.encode({ firstRound: k * 4, rounds: 4, tsStart, roundMs: 10_000 });
      tsStart += 40_000;
      total += w.totalSamples;
      // Requests of one shard are sent in the order given: check the order within each shard.
      for (let r = 0; r < w.lengths.length; r++) {
        const raw = Buffer.from(w.data.subarray(w.offsets[r], w.offsets[r] + w.lengths[r]));
        const decoded =
          protocol === 'v1'
            ? parseWriteRequest(raw).series.map((s) => ({ labels: s.labels, n: s.samples }))
            : parseWriteRequestV2(raw).series.map((s) => ({ labels: s.labels, n: s.samples }));
        assert.equal(
          decoded.reduce((a, s) => a + s.n, 0),
          w.samples[r],
        );
        const tsOf = timestampsOf(raw, protocol);
        decoded.forEach((s, j) => {
          const key = JSON.stringify(s.labels);
          assert.equal(shardOf(s.labels, shards), w.shard[r]);
          const prevShard = shardOfSeries.get(key);
          if (prevShard !== undefined) assert.equal(prevShard, w.shard[r], `${key} changed shard`);
          shardOfSeries.set(key, w.shard[r]);
          const prev = lastTs.get(key) ?? -Infinity;
          assert.ok(tsOf[j] > prev, `${key}: ${tsOf[j]} after ${prev}`);
          lastTs.set(key, tsOf[j]);
        });
      }
    }
    assert.equal(total, 600 * 12);
    assert.ok(enc.set.created > 600, 'churn created new series');
    assert.equal(shardOfSeries.size, enc.set.created);
  }
});

test("a window's shard count and the batch deadline decide how requests are cut", () => {
  const enc = new WindowEncoder({ series: 400, protocol: 'v1', shards: 8, samplesPerRequest: 100_000, batchDeadlineMs: 20_000, uncompressed: true });
  const w = enc.encode({ firstRound: 0, rounds: 6, tsStart: 1_700_000_000_000, roundMs: 10_000, shards: 3 });
  assert.ok([...w.shard].every((s) => s < 3));
  for (let r = 0; r < w.lengths.length; r++) {
    const raw = Buffer.from(w.data.subarray(w.offsets[r], w.offsets[r] + w.lengths[r]));
    for (const s of parseWriteRequest(raw).series) assert.equal(shardOf(s.labels, 3), w.shard[r]);
    const ts = timestampsOf(raw, 'v1');
    // Never full (100k samples): each request holds at most 20s of sample time, i.e. 2 rounds.
    assert.ok(Math.max(...ts) - Math.min(...ts) < 20_000);
  }
  assert.equal(w.totalSamples, 2400);
  assert.equal(w.lengths.length, 9, 'three shards × three 2-round batches');
});

test("resharding follows Prometheus' rule: time per sample × rate, rounded up, ±30 % kept, bounded", async () => {
  const gen = new LoadGenerator({ url: 'http://127.0.0.1:1/api/v1/push', protocol: 'v1', series: 10, shards: 64, samplesPerRequest: 2000, inThread: true });
  const phase = (rate: number, sendMsPerSample: number, maxBehindMs = 0) => ({ rate, sendMsPerSample, maxBehindMs }) as PhaseResult;
  // 180k/s at 50 ms per 2000-sample request: 4.5 requests in flight → 5 shards.
  assert.equal(gen.desiredShards(64, phase(180_000, 0.025)), 5);
  assert.equal(gen.desiredShards(5, phase(180_000, 0.025)), 5);
  // 6 is within 30 % of 5: no reshard; 7 is not.
  assert.equal(gen.desiredShards(5, phase(180_000, 0.03)), 5);
  assert.equal(gen.desiredShards(5, phase(180_000, 0.035)), 7);
  // A backlog of 10 s adds 5 % of it per second: 180k × (1 + 0.5) × 25 µs → 7.
  assert.equal(gen.desiredShards(5, phase(180_000, 0.025, 10_000)), 7);
  // Never above the generator's shards, never below one.
  assert.equal(gen.desiredShards(5, phase(180_000, 10)), 64);
  assert.equal(gen.desiredShards(5, phase(10, 0.001)), 1);
  await gen.close();
});

test('compressed bodies decompress to the same requests', () => {
  const enc = new WindowEncoder({ series: 300, protocol: 'v1', shards: 2, samplesPerRequest: 1000 });
  const w = enc.encode({ firstRound: 0, rounds: 2, tsStart: 1_700_000_000_000, roundMs: 15_000 });
  let n = 0;
  for (let r = 0; r < w.lengths.length; r++) {
    const body = decompressBody(w.data.subarray(w.offsets[r], w.offsets[r] + w.lengths[r]), 64 << 20);
    n += parseWriteRequest(body).series.length;
  }
  assert.equal(n, 600);
});

test('the cpuprofile summariser attributes self time to functions', () => {
  const profile = {
    nodes: [
      { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [2, 3] },
      { id: 2, callFrame: { functionName: 'decode', url: 'file:///x/libs/remote-write/src/parse-v1.ts', lineNumber: 9 }, children: [4] },
      { id: 3, callFrame: { functionName: '(garbage collector)', url: '', lineNumber: -1 } },
      { id: 4, callFrame: { functionName: 'readVarint', url: 'file:///x/libs/remote-write/src/wire.ts', lineNumber: 40 } },
    ],
    samples: [2, 4, 4, 3, 4],
    timeDeltas: [1000, 1000, 1000, 1000, 1000],
    startTime: 0,
    endTime: 5000,
  };
  const s = summariseProfile(profile);
  assert.equal(s.totalMs, 5);
  assert.equal(s.top[0].name, 'readVarint');
  assert.equal(s.top[0].selfMs, 3);
  assert.equal(s.top[0].where, 'libs/remote-write/src/wire.ts:41');
  assert.equal(summariseProfile(profile, 15, { fromUs: 2500, toUs: 4500 }).totalMs, 2);
  assert.equal(s.byArea.find((a) => a.area === 'GC')?.selfMs, 1);
});

/** Each TimeSeries' first sample timestamp, in request order (small hand decode of the sample field). */
function timestampsOf(raw: Buffer, protocol: 'v1' | 'v2'): number[] {
  const out: number[] = [];
  const seriesTag = protocol === 'v1' ? 0x0a : 0x2a;
  let p = 0;
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      const b = raw[p++];
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
  };
  while (p < raw.length) {
    const tag = varint();
    const len = varint();
    const end = p + len;
    if (tag !== seriesTag) {
      p = end;
      continue;
    }
    while (p < end) {
      const t = varint();
      const l = varint();
      if (t === 0x12) {
        // Sample: 0x09 + 8 bytes value, 0x10 + varint timestamp.
        p += 10;
        out.push(varint());
      } else p += l;
    }
  }
  return out;
}
