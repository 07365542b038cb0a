// -querier.max-estimated-memory-per-query on a real single process: queries
// that would hold far more than the limit (each ~100 MB of fetched samples and
// ~250 MB of evaluated points without it) fail with 422 naming the limit, four
// at a time, while the process' RSS, polled from /proc, stays within a bound
// far below what they would take; a query within the limit still answers.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { api, generateSeries, push, waitFor, type VectorSample } from './support/client.ts';
import { startSingleProcess, type SingleProcess } from './support/single-process.ts';

const SERIES = 20_000;
const SAMPLES = 241;
const LIMIT = 40_000_000;

const rss = (pid: number) => Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

describe('estimated memory per query', { timeout: 600_000 }, () => {
  let sp: SingleProcess;
  const start = Math.floor(Date.now() / 60_000) * 60_000 - 65 * 60_000;
  const end = start + (SAMPLES - 1) * 15_000;

  before(async () => {
    sp = await startSingleProcess('query-memory', [
      `-querier.max-estimated-memory-per-query=${LIMIT}`,
      '-querier.max-samples=500000000',
      '-distributor.ingestion-rate-limit=100000000',
      '-distributor.ingestion-burst-size=100000000',
    ]);
    const series = generateSeries('mem_me', SERIES, SAMPLES, start, 15_000);
    for (let i = 0; i < SERIES; i += 1000) {
      const res = await push(sp.strata.url, series.slice(i, i + 1000));
      assert.equal(res.status, 200, res.body);
    }
    await waitFor(
      `${SERIES} series`,
      async () => {
        const r = await api<{ result: VectorSample[] }>(sp.strata.url, '/prometheus/api/v1/query', { query: 'count(mem_me)', time: String(end / 1000) });
        return r.data.result[0]?.value[1] === String(SERIES) ? r : undefined;
      },
      180_000,
    );
  });

  after(async () => {
    await sp?.stop();
  });

  test('over-limit queries fail with 422 naming the limit while RSS stays bounded; a small query still answers', async () => {
    const pid = sp.strata.pid!;
    const baseline = rss(pid);
    let peak = baseline;
    const poll = setInterval(() => (peak = Math.max(peak, rss(pid))), 20);
    const heavy = [
      // ~100 MB of samples fetched: stopped in the head read (quantile: an aggregation not answered shard by shard).
      {
        path: '/prometheus/api/v1/query_range',
        params: { query: 'quantile(0.5, rate(mem_me[5m]))', start: String(start / 1000), end: String(end / 1000), step: '15' },
      },
      // Few samples fetched per step but 20,000 series × 241 points evaluated: stopped while evaluating.
      { path: '/prometheus/api/v1/query_range', params: { query: 'mem_me', start: String((end - 5 * 60_000) / 1000), end: String(end / 1000), step: '1' } },
    ];
    try {
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all([...heavy, ...heavy].map((q) => api(sp.strata.url, q.path, q.params, { method: 'POST' })));
        for (const r of answers) {
          assert.equal(r.httpStatus, 422, JSON.stringify(r).slice(0, 300));
          assert.equal(r.errorType, 'execution');
          assert.match(r.error ?? '', new RegExp(`maximum estimated memory per query \\(limit: ${LIMIT} bytes\\).*-querier\\.max-estimated-memory-per-query`));
        }
      }
    } finally {
      clearInterval(poll);
    }
    const grew = peak - baseline;
    console.log(
      `RSS ${(baseline / 2 ** 20).toFixed(0)} MiB before, peak ${(peak / 2 ** 20).toFixed(0)} MiB while 4 over-limit queries at a time failed (+${(grew / 2 ** 20).toFixed(0)} MiB)`,
    );
    // Four queries at a time, each stopped at about the limit (40 MB): a few hundred MB at most with GC slack;
    // without the limit the same four would hold over 1 GB.
    assert.ok(grew < 400 * 2 ** 20, `RSS grew by ${(grew / 2 ** 20).toFixed(0)} MiB while the queries failed`);
    const small = await api<{ result: VectorSample[] }>(sp.strata.url, '/prometheus/api/v1/query', {
      query: 'sum(rate(mem_me{instance=~"host-1.."}[5m]))',
      time: String(end / 1000),
    });
    assert.equal(small.httpStatus, 200, small.error);
    assert.equal(small.data.result.length, 1);
  });
});
