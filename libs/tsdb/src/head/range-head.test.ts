import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QueryAbortedError, labelsFromRecord } from '@strata/model';
import { Head, RangeHead, emptyAppendStats } from '../index.ts';

function head(): Head {
  const h = new Head();
  const stats = emptyAppendStats();
  h.append(labelsFromRecord({ __name__: 'early', job: 'a' }), new Float64Array([1000, 2000]), new Float64Array([1, 2]), stats);
  h.append(labelsFromRecord({ __name__: 'late', job: 'b', zone: 'eu' }), new Float64Array([8000, 9000]), new Float64Array([8, 9]), stats);
  return h;
}

test('a range head answers within both its own range and the question', async () => {
  const q = new RangeHead(head(), 1500, 8500);
  const got = await q.select({ matchers: [], mint: 0, maxt: 10_000 });
  assert.deepEqual(
    got.map((s) => [s.labels[0].value, [...s.timestamps]]),
    [
      ['early', [2000]],
      ['late', [8000]],
    ],
  );
  assert.deepEqual(await q.select({ matchers: [], mint: 8600, maxt: 10_000 }), []);
  assert.deepEqual(await q.labelNames({ matchers: [{ type: '=~', name: '__name__', value: '.+' }], mint: 0, maxt: 5000 }), ['__name__', 'job']);
  assert.deepEqual(await q.labelValues({ name: 'job', matchers: [{ type: '!=', name: 'job', value: '' }], mint: 7000, maxt: 10_000 }), ['b']);
});

test('label names and values without matchers: the whole head, or nothing if the range misses it', async () => {
  const q = new RangeHead(head());
  assert.deepEqual(await q.labelNames({ matchers: [], mint: 0, maxt: 1500 }), ['__name__', 'job', 'zone']);
  assert.deepEqual(await q.labelNames({ matchers: [], mint: 9001, maxt: 20_000 }), []);
  assert.deepEqual(await q.labelValues({ name: '__name__', matchers: [], mint: 0, maxt: 999 }), []);
  assert.deepEqual(await new RangeHead(new Head()).labelNames({ matchers: [], mint: -Infinity, maxt: Infinity }), []);
});

test('an aborted signal is refused before the head is read', async () => {
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(new RangeHead(head()).select({ matchers: [], mint: 0, maxt: 10_000, signal: ac.signal }), QueryAbortedError);
});

function bigHead(series: number): Head {
  const h = new Head();
  const stats = emptyAppendStats();
  for (let i = 0; i < series; i++)
    h.append(labelsFromRecord({ __name__: 'big', i: String(i) }), new Float64Array([1000, 2000]), new Float64Array([1, 2]), stats);
  return h;
}

test('a large select yields between slices, and an abort meanwhile stops it', async () => {
  const q = new RangeHead(bigHead(5000));
  const ac = new AbortController();
  let turns = 0;
  const ticker = setInterval(() => turns++, 0);
  const all = await q.select({ matchers: [], mint: 0, maxt: 10_000 });
  assert.equal(all.length, 5000);
  const p = q.select({ matchers: [], mint: 0, maxt: 10_000, signal: ac.signal });
  setImmediate(() => ac.abort());
  await assert.rejects(p, QueryAbortedError);
  clearInterval(ticker);
  assert.ok(turns > 0, 'other work ran while the head was read');
});

test('the query budget stops a select in the head: too many series, too many samples', async () => {
  const h = bigHead(3000);
  await assert.rejects(new RangeHead(h, -Infinity, Infinity, { maxSeries: 1000 }).select({ matchers: [], mint: 0, maxt: 10_000 }), {
    code: 'err-strata-max-series-per-query',
    kind: 'unprocessable',
    message: /limit: 1000 series.*-querier.max-fetched-series-per-query/,
  });
  await assert.rejects(new RangeHead(h, -Infinity, Infinity, { maxSamples: 4000 }).select({ matchers: [], mint: 0, maxt: 10_000 }), {
    code: 'err-strata-max-samples-per-query',
    message: /limit: 4000 samples.*-querier.max-samples/,
  });
  assert.equal(
    (await new RangeHead(h, -Infinity, Infinity, { maxSeries: 3000, maxSamples: 6000 }).select({ matchers: [], mint: 0, maxt: 10_000 })).length,
    3000,
  );
});

test('the estimated-memory budget stops a select in the head, naming the limit', async () => {
  const h = bigHead(3000);
  await assert.rejects(new RangeHead(h, -Infinity, Infinity, { maxEstimatedMemoryBytes: 100_000 }).select({ matchers: [], mint: 0, maxt: 10_000 }), {
    code: 'err-strata-max-estimated-memory-per-query',
    kind: 'unprocessable',
    message: /maximum estimated memory per query \(limit: 100000 bytes\).*-querier.max-estimated-memory-per-query/,
  });
  assert.equal(
    (await new RangeHead(h, -Infinity, Infinity, { maxEstimatedMemoryBytes: 100_000_000 }).select({ matchers: [], mint: 0, maxt: 10_000 })).length,
    3000,
  );
});

test('the chunk-bytes budget stops a select in the head, counting chunks as sent and decoded samples at their encoded size', async () => {
  const h = bigHead(3000);
  const all = { matchers: [], mint: 0, maxt: 10_000 };
  const asChunks = await new RangeHead(h, -Infinity, Infinity).select({ ...all, chunks: true });
  const sent = asChunks.reduce((n, s) => n + (s.chunks ?? []).reduce((m, c) => m + c.data.byteLength, 0), 0);
  assert.ok(sent > 0);
  await assert.rejects(new RangeHead(h, -Infinity, Infinity, { maxChunkBytes: sent - 1 }).select({ ...all, chunks: true }), {
    code: 'err-strata-max-chunks-bytes-per-query',
    kind: 'unprocessable',
    message: /aggregated chunks size limit \(limit: \d+ bytes\).*-querier.max-fetched-chunk-bytes-per-query/,
  });
  assert.equal((await new RangeHead(h, -Infinity, Infinity, { maxChunkBytes: sent }).select({ ...all, chunks: true })).length, 3000);
  const samples = asChunks.reduce((n, s) => n + (s.chunks ?? []).reduce((m, c) => m + c.samples, 0), 0);
  await assert.rejects(new RangeHead(h, -Infinity, Infinity, { maxChunkBytes: 2 * samples - 1 }).select(all), {
    code: 'err-strata-max-chunks-bytes-per-query',
  });
  assert.equal((await new RangeHead(h, -Infinity, Infinity, { maxChunkBytes: 2 * samples }).select(all)).length, 3000);
});

test('an instant selector in an instant query reads the newest sample alone, stale markers bit for bit; otherwise every sample', async () => {
  const h = new Head();
  const stats = emptyAppendStats();
  const ts = Float64Array.from({ length: 300 }, (_, i) => 1000 + i * 15_000); // crosses two chunk cuts
  const values = Float64Array.from(ts, (_, i) => i);
  const goneValues = new Float64Array([1, 0]);
  new BigUint64Array(goneValues.buffer)[1] = 0x7ff0000000000002n; // Prometheus' stale marker
  h.append(labelsFromRecord({ __name__: 'up', job: 'a' }), ts, values, stats);
  h.append(labelsFromRecord({ __name__: 'up', job: 'gone' }), new Float64Array([1000, 16_000]), goneValues, stats);
  h.appendHistograms(
    labelsFromRecord({ __name__: 'h', job: 'a' }),
    [
      {
        timestamp: 1000,
        histogram: {
          counterResetHint: 'unknown',
          schema: 0,
          zeroThreshold: 0,
          zeroCount: 0,
          count: 1,
          sum: 1,
          positiveSpans: [{ offset: 0, length: 1 }],
          positiveBuckets: [1],
          negativeSpans: [],
          negativeBuckets: [],
        },
        float: false,
      },
    ],
    stats,
  );
  const q = new RangeHead(h);
  const last = ts[ts.length - 1];
  const instant = (mint: number, maxt: number) =>
    q.select({ matchers: [{ type: '=~', name: '__name__', value: 'up|h' }], mint, maxt, hints: { start: mint, end: maxt, step: 0, range: 0 } });

  const got = await instant(last - 300_000, last + 60_000);
  assert.deepEqual(
    got.map((s) => [s.labels[1].value, [...s.timestamps], [...s.values]]),
    [['a', [last], [299]]],
  );
  const gone = await instant(1000, 20_000);
  const g = gone.find((s) => s.labels[1].value === 'gone');
  assert.deepEqual(g && [...g.timestamps], [16_000]);
  assert.equal(g && new BigUint64Array(g.values.buffer, g.values.byteOffset, 1)[0], 0x7ff0000000000002n, 'the stale marker keeps its payload');
  // A histogram series falls back to its samples.
  assert.equal(gone.find((s) => s.labels[0].value === 'h')?.histograms?.timestamps.length, 1);

  // Before the newest sample, with a range or a step: the samples in the range, as without hints.
  const before = await instant(ts[100], ts[110]);
  assert.equal(before.find((s) => s.labels[1].value === 'a')?.timestamps.length, 11);
  const ranged = await q.select({
    matchers: [
      { type: '=', name: 'job', value: 'a' },
      { type: '=', name: '__name__', value: 'up' },
    ],
    mint: last - 300_000,
    maxt: last,
    hints: { start: last - 300_000, end: last, step: 0, range: 300_000, func: 'rate' },
  });
  assert.equal(ranged[0].timestamps.length, 21);
});

test('the chunks budget (max_fetched_chunks_per_query) stops a select in the head, counting chunks as sent', async () => {
  const h = bigHead(3000);
  const all = { matchers: [], mint: 0, maxt: 10_000, chunks: true };
  const sent = (await new RangeHead(h, -Infinity, Infinity).select(all)).reduce((n, s) => n + (s.chunks?.length ?? 0), 0);
  assert.ok(sent >= 3000);
  await assert.rejects(new RangeHead(h, -Infinity, Infinity, { maxChunks: sent - 1 }).select(all), {
    code: 'err-strata-max-chunks-per-query',
    kind: 'unprocessable',
    message: /maximum number of chunks \(limit: \d+ chunks\).*max_fetched_chunks_per_query/,
  });
  assert.equal((await new RangeHead(h, -Infinity, Infinity, { maxChunks: sent }).select(all)).length, 3000);
});
