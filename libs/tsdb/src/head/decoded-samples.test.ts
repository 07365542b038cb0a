import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelsFromRecord, type Matcher } from '@strata/model';
import { DecodedSamplesCache, Head, emptyAppendStats } from '../index.ts';

const STALE = new Float64Array(new Uint32Array([2, 0x7ff00000]).buffer)[0];

function fill(head: Head, series: number, samples: number): void {
  const stats = emptyAppendStats();
  for (let s = 0; s < series; s++) {
    const t = Float64Array.from({ length: samples }, (_, i) => 1000 * (i + 1));
    const v = Float64Array.from({ length: samples }, (_, i) => (i === 200 ? STALE : s * 1000 + i * 0.5));
    head.append(labelsFromRecord({ __name__: 'm', s: String(s) }), t, v, stats);
  }
}

const all: Matcher[] = [{ type: '=', name: '__name__', value: 'm' }];
const bits = (a: Float64Array) => [...new Uint32Array(a.buffer, a.byteOffset, a.length * 2)];

test('reads through the decoded-samples cache equal plain decoding, bit for bit, across eviction and truncation', () => {
  const plain = new Head();
  // Room for about two series' samples: most reads miss, some hit, eviction runs all the time.
  const cache = new DecodedSamplesCache(2 * 600 * 16);
  const cached = new Head({ decodedSamples: cache });
  fill(plain, 20, 500);
  fill(cached, 20, 500);
  const windows = [
    [0, 1e9],
    [1000, 1000],
    [120_500, 241_000],
    [119_000, 121_000],
    [200_000, 202_000],
    [480_000, 1e9],
  ];
  let truncated = false;
  const check = () => {
    for (let round = 0; round < 2; round++) {
      for (const [mint, maxt] of windows) {
        const a = plain.select(all, mint, maxt);
        const b = cached.select(all, mint, maxt);
        assert.equal(b.length, a.length);
        // Against the data itself, not only the other head (both read through a SampleArena).
        if (round === 0 && !truncated) {
          const want = [];
          for (let i = 0; i < 500; i++) if (1000 * (i + 1) >= mint && 1000 * (i + 1) <= maxt) want.push(1000 * (i + 1));
          assert.deepEqual([...a[7].timestamps], want);
          assert.equal(
            a[7].values[want.length - 1],
            want.length === 0 || want[want.length - 1] === 201_000 ? a[7].values[want.length - 1] : 7000 + (want[want.length - 1] / 1000 - 1) * 0.5,
          );
        }
        a.forEach((s, i) => {
          assert.deepEqual([...b[i].timestamps], [...s.timestamps], `timestamps in [${mint}, ${maxt}]`);
          assert.deepEqual(bits(b[i].values), bits(s.values), `value bits in [${mint}, ${maxt}] (staleness marker kept)`);
        });
      }
    }
  };
  check();
  assert.ok(cache.usedBytes <= cache.maxBytes, 'the budget holds');
  plain.truncate(250_000);
  cached.truncate(250_000);
  truncated = true;
  check();
  // A cache as big as the data holds it all after one pass.
  const big = new DecodedSamplesCache(1e9);
  const full = new Head({ decodedSamples: big });
  fill(full, 5, 500);
  full.select(all, 0, 1e9);
  const used = big.usedBytes;
  assert.ok(used >= 5 * 500 * 16, `every sample decoded once (${used} bytes)`);
  full.select(all, 0, 1e9);
  assert.equal(big.usedBytes, used, 'a second read decodes nothing again');
});

test('a cached timeline grows with appends, merges out-of-order samples, and views handed out never change', () => {
  const ooo = { outOfOrderTimeWindowMs: () => 3_600_000 };
  const plain = new Head(ooo);
  const cache = new DecodedSamplesCache(1e9);
  const cached = new Head({ ...ooo, decodedSamples: cache });
  const stats = emptyAppendStats();
  const push = (from: number, to: number) => {
    for (const h of [plain, cached]) {
      for (let s = 0; s < 3; s++) {
        const t = Float64Array.from({ length: to - from }, (_, i) => 1000 * (from + i));
        const v = Float64Array.from({ length: to - from }, (_, i) => s + (from + i) * 0.25);
        h.append(labelsFromRecord({ __name__: 'm', s: String(s) }), t, v, stats);
      }
    }
  };
  const same = (mint: number, maxt: number) => {
    const a = plain.select(all, mint, maxt);
    const b = cached.select(all, mint, maxt);
    assert.equal(b.length, a.length);
    a.forEach((s, i) => {
      assert.deepEqual([...b[i].timestamps], [...s.timestamps], `timestamps in [${mint}, ${maxt}]`);
      assert.deepEqual(bits(b[i].values), bits(s.values), `value bits in [${mint}, ${maxt}]`);
    });
    return b;
  };
  push(1, 50); // inside the open chunk
  const early = same(0, 1e9);
  const earlyCopy = early.map((s) => [...s.values]);
  push(50, 130); // the open chunk closes at 120 and a new one opens
  same(0, 1e9);
  same(100_000, 125_000);
  push(130, 400); // regrowth: the timeline moves to larger arrays
  same(0, 1e9);
  same(390_000, 399_000);
  // Out of order, inside the decoded range: merged on read, the timeline itself untouched.
  for (const h of [plain, cached]) h.append(labelsFromRecord({ __name__: 'm', s: '1' }), Float64Array.of(10_500), Float64Array.of(-1), stats);
  same(0, 1e9);
  assert.deepEqual([...same(10_000, 11_000)[1].timestamps], [10_000, 10_500, 11_000], 'the out-of-order sample is read');
  plain.truncate(200_000);
  cached.truncate(200_000);
  same(0, 1e9);
  push(400, 410);
  same(0, 1e9);
  assert.deepEqual(
    early.map((s) => [...s.values]),
    earlyCopy,
    'the first read still holds what it read',
  );
  assert.deepEqual(
    [...early[0].timestamps],
    Array.from({ length: 49 }, (_, i) => 1000 * (i + 1)),
  );
});
