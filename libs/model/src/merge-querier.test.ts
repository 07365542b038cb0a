import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MergeQuerier, QueryAbortedError, labelsFromRecord, restrictRange, tenantQuerier, type BlockSelectParams } from './index.ts';
import { MemoryQuerier } from './testing.ts';

const up = (job: string) => labelsFromRecord({ __name__: 'up', job });
const all = (mint: number, maxt: number, signal?: AbortSignal): BlockSelectParams => ({ matchers: [], mint, maxt, signal });

test('a merge of a recent and an old source restricted to their windows: each asked only within its own, overlap counted once', async () => {
  const recent = new MemoryQuerier();
  const old = new MemoryQuerier();
  recent.append('t', up('a'), [50, 60, 70], [5, 6, 7]);
  old.append('t', up('a'), [10, 50, 60], [1, 5, 6]);
  old.append('t', up('b'), [10], [1]);
  old.append('other', up('c'), [10], [1]);
  const q = new MergeQuerier([restrictRange(tenantQuerier(recent, 't'), 40, Infinity), restrictRange(tenantQuerier(old, 't'), -Infinity, 60)]);

  const got = await q.select(all(0, 100));
  assert.deepEqual(
    got.map((s) => [s.labels[1].value, [...s.timestamps]]),
    [
      ['a', [10, 50, 60, 70]],
      ['b', [10]],
    ],
  );
  assert.deepEqual(
    recent.calls.map((c) => [c.tenant, c.mint, c.maxt]),
    [['t', 40, 100]],
  );
  assert.deepEqual(
    old.calls.map((c) => [c.tenant, c.mint, c.maxt]),
    [['t', 0, 60]],
  );

  assert.deepEqual(await q.select(all(0, 30)), [...(await old.select({ tenant: 't', ...all(0, 30) }))]);
  assert.equal(recent.calls.length, 1, 'a range outside the window is not asked');
  assert.deepEqual(await q.labelValues({ ...all(0, 100), name: 'job' }), ['a', 'b']);
  assert.deepEqual(await q.labelValues({ ...all(65, 100), name: 'job' }), ['a'], 'label values honour the range');
  assert.deepEqual(await new MergeQuerier([]).select(all(0, 1)), []);
});

test('an aborted signal stops the readers', async () => {
  const slow = new MemoryQuerier();
  slow.append('t', up('a'), [1], [1]);
  slow.delayMs = 5_000;
  const ac = new AbortController();
  const q = new MergeQuerier([tenantQuerier(slow, 't'), tenantQuerier(new MemoryQuerier(), 't')]);
  const started = Date.now();
  const p = q.select(all(0, 10, ac.signal));
  ac.abort();
  await assert.rejects(p, (err) => err instanceof QueryAbortedError && err.kind === 'canceled');
  assert.ok(Date.now() - started < 1_000);
  await assert.rejects(q.select(all(0, 10, ac.signal)), QueryAbortedError, 'an already aborted signal is not asked at all');
});
