import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReusingArena } from './chunk-arena.ts';

interface Range {
  slab: Uint8Array;
  off: number;
  n: number;
  fill: number;
}

/** Allocates n bytes and fills them with `fill`, as an open chunk's owner would write them. */
function take(arena: ReusingArena, n: number, fill: number): Range {
  const off = arena.alloc(n);
  const r = { slab: arena.slab, off, n, fill };
  r.slab.fill(fill, off, off + n);
  return r;
}

test('space still held is never handed out again, whatever was released around it', () => {
  const arena = new ReusingArena(4096);
  const held: Range[] = [];
  let seed = 7;
  const rand = (k: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % k;
  };
  for (let step = 0; step < 20_000; step++) {
    if (held.length > 0 && rand(3) === 0) {
      const [r] = held.splice(rand(held.length), 1);
      arena.release(r.slab, r.n);
    } else {
      held.push(take(arena, 1 + rand(300), step & 0xff));
    }
  }
  for (const r of held) {
    assert.ok(
      r.slab.subarray(r.off, r.off + r.n).every((b) => b === r.fill),
      `bytes at ${r.off}+${r.n} were overwritten by a later allocation`,
    );
  }
  const total = held.reduce((n, r) => n + r.n, 0);
  assert.equal(arena.stats.liveBytes, total);
});

test('a slab whose space was all given back is reused for the next allocations', () => {
  const arena = new ReusingArena(4096);
  const first = Array.from({ length: 60 }, (_, i) => take(arena, 100, i));
  const firstSlab = first[0].slab;
  for (const r of first) if (r.slab === firstSlab) arena.release(r.slab, r.n);
  assert.ok(arena.stats.spareBytes >= 4096, 'the emptied slab waits as a spare');
  const later = Array.from({ length: 80 }, (_, i) => take(arena, 100, 200 + i));
  assert.ok(
    later.some((r) => r.slab === firstSlab),
    'an allocation after the current slab filled up reuses the emptied slab instead of a new one',
  );
  for (const r of first.filter((x) => x.slab !== firstSlab)) {
    assert.ok(
      r.slab.subarray(r.off, r.off + r.n).every((b) => b === r.fill),
      'ranges still held are untouched',
    );
  }
});

test('slabs grow with the space in use, so a big head gets few large slabs', () => {
  const arena = new ReusingArena(4096);
  const sizes = new Set<number>();
  for (let i = 0; i < 4000; i++) sizes.add(take(arena, 200, 1).slab.length);
  assert.equal(arena.stats.liveBytes, 800_000);
  const largest = Math.max(...sizes);
  assert.ok(largest >= 65_536, `slabs grew to ${largest} bytes`);
  assert.ok(largest <= 32 * 1024 * 1024 + 64 * 1024);
});
