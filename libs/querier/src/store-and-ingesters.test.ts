import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelsFromRecord } from '@strata/model';
import { StoreAndIngestersQuerier } from './store-and-ingesters.ts';
import { MemoryQuerier } from '@strata/model/testing';

const H = 3_600_000;

test('ingesters answer for the recent window, the store for older data, overlaps count once', async () => {
  const now = 100 * H;
  const ingesters = new MemoryQuerier();
  const store = new MemoryQuerier();
  const labels = labelsFromRecord({ __name__: 'm' });
  // Ingesters hold the last 13h, the store everything up to 12h ago: one hour in both.
  ingesters.append('t', labels, [now - 13 * H, now - 12.5 * H, now - H], [1, 2, 3]);
  store.append('t', labels, [now - 20 * H, now - 13 * H, now - 12.5 * H], [0, 1, 2]);
  store.append('other', labels, [now - 20 * H], [9]);
  const q = new StoreAndIngestersQuerier({ ingesters, store, queryIngestersWithinMs: 13 * H, queryStoreAfterMs: 12 * H, now: () => now });
  const [s] = await q.select({ tenant: 't', matchers: [], mint: 0, maxt: now });
  assert.deepEqual([...s.timestamps], [now - 20 * H, now - 13 * H, now - 12.5 * H, now - H]);
  assert.deepEqual([...s.values], [0, 1, 2, 3]);
  assert.deepEqual(q.split(now - 2 * H, now), { ingesters: { mint: now - 2 * H, maxt: now }, store: null });
  assert.deepEqual(q.split(0, now - 14 * H), { ingesters: null, store: { mint: 0, maxt: now - 14 * H } });
  assert.equal((await q.select({ tenant: 't', matchers: [], mint: now - 2 * H, maxt: now }))[0].timestamps.length, 1);
  const all = new StoreAndIngestersQuerier({ ingesters, store, queryIngestersWithinMs: 0, queryStoreAfterMs: 0, now: () => now });
  assert.deepEqual(all.split(5, 6), { ingesters: { mint: 5, maxt: 6 }, store: { mint: 5, maxt: 6 } });
  assert.deepEqual(await all.labelNames({ tenant: 'other', matchers: [], mint: 0, maxt: now }), ['__name__']);
});
