import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelsFromRecord, type Matcher } from '@strata/model';
import { DecodedChunkCache, Head, emptyAppendStats } from './index.ts';

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

test('reads through the decoded-chunk cache equal plain decoding, bit for bit, across eviction and truncation', () => {
  const plain = new Head();
  // Room for about three decoded 120-sample chunks: most reads miss, some hit, eviction runs all the time.
  const cache = new DecodedChunkCache(3 * 120 * 12);
  const cached = new Head({ decodedChunks: cache });
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
          assert.equal(a[7].values[want.length - 1], want.length === 0 || want[want.length - 1] === 201_000 ? a[7].values[want.length - 1] : 7000 + (want[want.length - 1] / 1000 - 1) * 0.5);
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
  const big = new DecodedChunkCache(1e9);
  const full = new Head({ decodedChunks: big });
  fill(full, 5, 500);
  full.select(all, 0, 1e9);
  const used = big.usedBytes;
  assert.ok(used >= 5 * 4 * 120 * 12, `every closed chunk decoded once (${used} bytes)`);
  full.select(all, 0, 1e9);
  assert.equal(big.usedBytes, used, 'a second read decodes nothing again');
});
