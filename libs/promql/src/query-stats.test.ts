// The engine's query statistics (Prometheus' stats=true|all figures, what it fetched) and the
// per-tenant fetch limits it checks against them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelsFromRecord } from '@strata/model';
import { MemoryQuerier } from '@strata/model/testing';
import { Engine } from './engine.ts';

function querier(): MemoryQuerier {
  const q = new MemoryQuerier();
  // Two series, a sample every 15 s from 0 to 60 s; a third in another tenant.
  const ts = new Float64Array([0, 15_000, 30_000, 45_000, 60_000]);
  for (const inst of ['a', 'b']) q.append('t1', labelsFromRecord({ __name__: 'req_total', instance: inst }), ts, [1, 2, 3, 4, 5]);
  q.append('t2', labelsFromRecord({ __name__: 'req_total', instance: 'c' }), ts, [1, 2, 3, 4, 5]);
  return q;
}

test('an instant selector counts one sample per series with a point in its lookback window', async () => {
  const engine = new Engine({ querier: querier() });
  const r = await engine.instantQuery({ tenant: 't1', query: 'req_total', time: 60_000, stats: 'basic' });
  assert.ok(r.stats?.samples);
  assert.equal(r.stats.samples.totalQueryableSamples, 2);
  assert.equal(r.stats.samples.seriesTouched, 2);
  assert.equal(r.stats.samples.totalQueryableSamplesPerStep, undefined);
  assert.ok(r.stats.samples.peakSamples >= 2);
  assert.equal(r.stats.fetched.fetchedSeriesCount, 2);
  assert.ok(r.stats.timings.evalTotalTime > 0 && r.stats.timings.execTotalTime >= r.stats.timings.evalTotalTime);
});

test('stats=all counts each step of a range query: the window total, and only the new samples read', async () => {
  const engine = new Engine({ querier: querier() });
  const r = await engine.rangeQuery({ tenant: 't1', query: 'rate(req_total[30s])', start: 30_000, end: 60_000, step: 15_000, stats: 'all' });
  const s = r.stats?.samples;
  assert.ok(s);
  // Windows (0,30], (15,45], (30,60]: two samples each per series.
  assert.deepEqual(s.totalQueryableSamplesPerStep, [
    [30, 4],
    [45, 4],
    [60, 4],
  ]);
  assert.deepEqual(s.samplesReadPerStep, [
    [30, 4],
    [45, 2],
    [60, 2],
  ]);
  assert.equal(s.totalQueryableSamples, 12);
  assert.equal(s.samplesRead, 8);
});

test('without the stats option the result carries no statistics', async () => {
  const r = await new Engine({ querier: querier() }).instantQuery({ tenant: 't1', query: 'req_total', time: 60_000 });
  assert.equal(r.stats, undefined);
});

test("a tenant's max_fetched_chunks_per_query refuses its query with the limit; another tenant's higher one answers", async () => {
  const limits: Record<string, { maxFetchedChunks: number }> = { t1: { maxFetchedChunks: 1 }, t2: { maxFetchedChunks: 10 } };
  const engine = new Engine({ querier: querier(), tenantLimits: (t) => limits[t] });
  await assert.rejects(engine.instantQuery({ tenant: 't1', query: 'req_total', time: 60_000 }), {
    message: /maximum number of chunks \(limit: 1 chunks\) \(err-strata-max-chunks-per-query\).*max_fetched_chunks_per_query/,
  });
  assert.equal((await engine.instantQuery({ tenant: 't2', query: 'req_total', time: 60_000 })).resultType, 'vector');
});

test("a tenant's max_fetched_series_per_query and max_fetched_chunk_bytes_per_query override the engine's", async () => {
  const engine = new Engine({
    querier: querier(),
    maxFetchedSeries: 100,
    tenantLimits: (t) => (t === 't1' ? { maxFetchedSeries: 1 } : { maxFetchedChunkBytes: 1 }),
  });
  await assert.rejects(engine.instantQuery({ tenant: 't1', query: 'req_total', time: 60_000 }), {
    message: /maximum number of series \(limit: 1 series\).*max_fetched_series_per_query/,
  });
  await assert.rejects(engine.instantQuery({ tenant: 't2', query: 'req_total', time: 60_000 }), {
    message: /aggregated chunks size limit \(limit: 1 bytes\).*max_fetched_chunk_bytes_per_query/,
  });
});
