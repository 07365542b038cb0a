import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelsFromRecord } from '@strata/model';
import { Head, emptyAppendStats } from './index.ts';
import { TURN_ITEMS, Turns, sortInTurns } from './in-turns.ts';

test('sortInTurns sorts as Array.prototype.sort does, stably, across several runs and merges', async () => {
  let seed = 7;
  const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % 1000;
  for (const n of [0, 1, 10, TURN_ITEMS, TURN_ITEMS + 1, 5 * TURN_ITEMS + 17]) {
    const items = Array.from({ length: n }, (_, i) => ({ key: random(), i }));
    const want = [...items].sort((a, b) => a.key - b.key);
    const got = await sortInTurns(items, (a, b) => a.key - b.key);
    assert.equal(got, items, 'in place');
    assert.deepEqual(got, want, `n=${n}`);
  }
});

test('a loop with Turns lets the event loop turn while it works, however costly its items', async () => {
  let turns = 0;
  const ticker = setInterval(() => turns++, 0);
  const t = new Turns();
  const until = performance.now() + 300;
  let items = 0;
  // Few, slow items: a turn every so many items would never come.
  while (performance.now() < until) {
    if (t.due()) await t.next();
    const busy = performance.now() + 0.5;
    while (performance.now() < busy);
    items++;
  }
  clearInterval(ticker);
  assert.ok(turns >= 5, `timers ran ${turns} times during ${items} items of 0.5 ms`);
});

test('a block snapshot of a big head lets the event loop turn: other work runs while it is cut, and it equals the one-go snapshot', async () => {
  const head = new Head();
  const stats = emptyAppendStats();
  // Appended out of label order, so the snapshot has to sort.
  for (let i = 60_000; i > 0; i--) {
    head.append(labelsFromRecord({ __name__: 'm', i: String(i) }), new Float64Array([1000, 2000]), new Float64Array([1, 2]), stats);
  }
  let turns = 0;
  const ticker = setInterval(() => turns++, 0);
  const inTurns = await head.snapshotForBlockInTurns(0, 7_200_000);
  clearInterval(ticker);
  assert.ok(turns >= 5, `timers ran ${turns} times during the snapshot`);
  assert.deepEqual(
    inTurns.map((s) => s.labels),
    head.snapshotForBlock(0, 7_200_000).map((s) => s.labels),
  );
  assert.equal(inTurns.length, 60_000);
});

test('truncating a big head in turns lets the event loop turn, and leaves what truncate leaves', async () => {
  const build = () => {
    const head = new Head();
    const stats = emptyAppendStats();
    for (let i = 0; i < 150_000; i++) {
      head.append(labelsFromRecord({ __name__: 'm', i: String(i) }), new Float64Array([1000, 2000, 9000]), new Float64Array([1, 2, 3]), stats);
    }
    return head;
  };
  const inTurns = build();
  let turns = 0;
  const ticker = setInterval(() => turns++, 0);
  await inTurns.truncateInTurns(5000);
  clearInterval(ticker);
  assert.ok(turns >= 2, `timers ran ${turns} times during the truncation`);
  const atOnce = build();
  atOnce.truncate(5000);
  const samples = (h: Head) => h.snapshotForBlock(0, 10_000).map((s) => [s.labels, s.chunks.map((c) => [c.minTime, c.maxTime])]);
  assert.deepEqual(samples(inTurns), samples(atOnce));
  assert.equal(inTurns.numSeries, 150_000);
});
