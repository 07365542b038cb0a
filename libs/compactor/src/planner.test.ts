import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planCompaction, type PlanBlock } from './planner.ts';

const H = 3_600_000;
const ranges = [2 * H, 12 * H, 24 * H];
let n = 0;
function b(minH: number, maxH: number, level = 1, createdAt = 0): PlanBlock {
  return { ulid: `B${String(n++).padStart(3, '0')}`, minTime: minH * H, maxTime: maxH * H, level, createdAt };
}
const ids = (g: PlanBlock[] | null) => g?.map((x) => x.ulid) ?? null;

test('zone copies of a range are merged first (vertical), after the first-level wait', () => {
  const a = b(0, 2);
  const a2 = b(0, 2);
  const next = b(2, 4);
  const plan = planCompaction([next, a2, a], { ranges, now: 10 * H, firstLevelWaitMs: 0 });
  assert.deepEqual(ids(plan), [a.ulid, a2.ulid]);
  const young = { ...a2, createdAt: 10 * H - 60_000 };
  assert.equal(planCompaction([a, young, next], { ranges, now: 10 * H, firstLevelWaitMs: 25 * 60_000 }), null);
  // A flush's partial block overlapping the range's later block: merged too.
  const partial = b(4, 5);
  const rest = b(4, 6);
  assert.deepEqual(ids(planCompaction([partial, rest], { ranges, now: 10 * H, firstLevelWaitMs: 0 })), [partial.ulid, rest.ulid]);
});

test('levels: 2h blocks into 12h once the window is complete or older than the newest block; never the newest block', () => {
  const twoH = Array.from({ length: 6 }, (_, i) => b(2 * i, 2 * i + 2, 2));
  assert.equal(planCompaction(twoH, { ranges, now: 100 * H, firstLevelWaitMs: 0 }), null, 'the newest block is left alone');
  const plus = [...twoH, b(12, 14, 2)];
  assert.deepEqual(
    ids(planCompaction(plus, { ranges, now: 100 * H, firstLevelWaitMs: 0 })),
    twoH.map((x) => x.ulid),
  );
  const twelve = [b(0, 12, 3), b(12, 24, 3), b(24, 26, 2)];
  assert.deepEqual(
    ids(planCompaction(twelve, { ranges, now: 100 * H, firstLevelWaitMs: 0 })),
    twelve.slice(0, 2).map((x) => x.ulid),
  );
  assert.equal(planCompaction([b(0, 24, 4), b(24, 48, 4), b(48, 50, 2)], { ranges, now: 100 * H, firstLevelWaitMs: 0 }), null);
});
