import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GC_HEADROOM_FLOOR_BYTES, heapGrowingPercent, keepGcHeadroom } from './gc-headroom.ts';

test('a small live heap may double before the next full GC; from the floor on V8 keeps its own factor', () => {
  assert.equal(heapGrowingPercent(90 << 20), 100);
  assert.equal(heapGrowingPercent(GC_HEADROOM_FLOOR_BYTES - 1), 100);
  assert.equal(heapGrowingPercent(GC_HEADROOM_FLOOR_BYTES), 0);
  assert.equal(heapGrowingPercent(4 * 2 ** 30), 0);
});

test('a --heap-growing-percent on the node command line is left alone, and the log line says so', () => {
  assert.match(keepGcHeadroom(['--heap-growing-percent=30']), /as set on the node command line/);
  assert.match(keepGcHeadroom([]), /may grow 100% between full GCs while under 256 MiB live/);
});
