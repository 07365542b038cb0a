import { test } from 'node:test';
import assert from 'node:assert/strict';
import { intersectPostings } from './postings-list.ts';
import { PostingsCache } from './postings-cache.ts';

/** Sorted distinct ids, each kept with probability `p`, from a seeded generator. */
function sortedIds(max: number, p: number, seed: number): Uint32Array {
  let s = seed;
  const out: number[] = [];
  for (let i = 0; i < max; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    if (s / 2 ** 32 < p) out.push(i);
  }
  return Uint32Array.from(out);
}

function naive(a: Uint32Array, b: Uint32Array): number[] {
  const set = new Set(b);
  return [...a].filter((x) => set.has(x));
}

test('intersection is the same whether it walks both lists or searches the long one', () => {
  const cases: [Uint32Array, Uint32Array][] = [
    [sortedIds(200_000, 0.001, 1), sortedIds(200_000, 0.5, 2)],
    [sortedIds(200_000, 0.5, 3), sortedIds(200_000, 0.0005, 4)],
    [sortedIds(1000, 0.3, 5), sortedIds(1000, 0.4, 6)],
    [Uint32Array.from([0, 5, 199_999]), sortedIds(200_000, 1, 7)],
    [Uint32Array.from([200_001, 300_000]), sortedIds(200_000, 0.9, 8)],
    [new Uint32Array(0), sortedIds(1000, 0.5, 9)],
  ];
  for (const [a, b] of cases) assert.deepEqual([...intersectPostings(a, b)], naive(a, b));
});

test('the postings cache keeps what fits, drops the least recently used first, and refuses a list over a quarter of it', () => {
  const cache = new PostingsCache(2000);
  const list = (n: number) => new Uint32Array(n);
  for (const k of ['a', 'b', 'c', 'd', 'e']) cache.set(k, list(100)); // 400 bytes each: 2000, full
  assert.ok(cache.get('a')); // a is now the most recently used
  cache.set('f', list(100)); // 2400 > 2000: b, the least recently used, goes
  assert.equal(cache.get('b'), undefined);
  for (const k of ['a', 'c', 'd', 'e', 'f']) assert.ok(cache.get(k), k);
  assert.equal(cache.sizeBytes, 2000);
  cache.set('big', list(126)); // 504 bytes: over a quarter of the budget, never kept
  assert.equal(cache.get('big'), undefined);
});
