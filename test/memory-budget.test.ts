// A single process started with a 512 MiB memory budget (-server.memory-limit), as `npm start`
// runs it: the launcher sizes the V8 heap from the budget; a query over more series than the
// budget allows is a 422 naming the limit while RSS stays within the budget, the process keeps
// ingesting and another tenant's queries answer; an aggregation over those series is answered
// shard by shard within the budget; a series-creation burst far beyond the budget
// is answered 503 naming the instance limit, the process lives, and every sample answered 2xx
// is queryable afterwards.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { SeriesInput } from '@strata/remote-write';
import { api, push, waitFor, type PushResponse, type VectorSample } from './support/client.ts';
import { startSingleProcess, type SingleProcess } from './support/single-process.ts';

const BUDGET = 512 * 2 ** 20;
/** -ingester.instance-limits.max-series' default for the budget: half of it at 2 KiB a series. */
const MAX_SERIES = BUDGET / 2 / 2048;
const PER_PUSH = 2000;
const SHARDS = 20;
const LOUD = { 'X-Scope-OrgID': 'loud' };
const QUIET = { 'X-Scope-OrgID': 'quiet' };

const rss = (pid: number) => Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

/** `n` new series of `metric` from id `from`, one sample each at `t`, spread over SHARDS values of `shard`. */
function newSeries(metric: string, from: number, n: number, t: number): SeriesInput[] {
  return Array.from({ length: n }, (_, i) => ({
    labels: [
      { name: '__name__', value: metric },
      { name: 'id', value: `series-${from + i}` },
      { name: 'shard', value: String((from + i) % SHARDS) },
    ],
    samples: [{ value: from + i, timestamp: t }],
  }));
}

/** Sends `total` new series in pushes of PER_PUSH, `senders` at a time; the pushes' answers in order. */
async function burst(url: string, metric: string, total: number, senders: number, t: number): Promise<{ from: number; res: PushResponse }[]> {
  const out: { from: number; res: PushResponse }[] = [];
  let next = 0;
  const sender = async () => {
    while (next < total) {
      const from = next;
      next += PER_PUSH;
      out.push({ from, res: await push(url, newSeries(metric, from, Math.min(PER_PUSH, total - from), t), LOUD) });
    }
  };
  await Promise.all(Array.from({ length: senders }, sender));
  return out;
}

/** Series of `metric` per shard, counted one shard at a time (each well within the query limits). */
async function countPerShard(url: string, metric: string, t: number): Promise<number[]> {
  const counts: number[] = [];
  for (let s = 0; s < SHARDS; s++) {
    const r = await api<{ result: VectorSample[] }>(
      url,
      '/prometheus/api/v1/query',
      { query: `count(${metric}{shard="${s}"})`, time: String(t / 1000) },
      { headers: LOUD },
    );
    assert.equal(r.httpStatus, 200, r.error);
    counts.push(Number(r.data.result[0]?.value[1] ?? 0));
  }
  return counts;
}

describe('a 512 MiB memory budget', { timeout: 900_000 }, () => {
  let sp: SingleProcess;
  const t0 = Date.now() - 60_000;

  before(async () => {
    sp = await startSingleProcess('memory-budget', [
      `-server.memory-limit=${BUDGET}`,
      '-auth.multitenancy-enabled=true',
      '-distributor.ingestion-rate-limit=100000000',
      '-distributor.ingestion-burst-size=100000000',
      '-ingester.max-global-series-per-user=0',
    ]);
  });

  after(async () => {
    await sp?.stop();
  });

  test('the launcher sized the V8 heap from the budget and says so', () => {
    const cmdline = readFileSync(`/proc/${sp.strata.pid}/cmdline`, 'utf8').split('\0');
    assert.ok(cmdline.includes('--max-old-space-size=384'), `node runs with 75% of the budget as its heap: ${cmdline.join(' ')}`);
    const log = readFileSync(sp.strata.opts.logFile, 'utf8');
    assert.match(log, /memory budget 512 MiB \(-server\.memory-limit\); V8 heap \d+ MiB \(--max-old-space-size=384, 75% of the budget\)/);
    assert.match(log, /memory budget 512 MiB .*131072 series per ingester, 51 MiB, 131072 series and 26 MiB of chunks per query/);
  });

  test("a query over more series than the budget allows is a 422 naming the limit; RSS stays within the budget; ingestion and another tenant's queries go on", async () => {
    const loaded = 100_000;
    for (const { res } of await burst(sp.strata.url, 'mem_wide', loaded, 2, t0)) assert.equal(res.status, 200, res.body);
    assert.equal(await push(sp.strata.url, newSeries('mem_quiet', 0, 10, t0), QUIET).then((r) => r.status), 200);
    await waitFor(
      'the wide series',
      async () => ((await countPerShard(sp.strata.url, 'mem_wide', t0)).reduce((a, b) => a + b) === loaded ? true : undefined),
      120_000,
    );

    const pid = sp.strata.pid!;
    let peak = rss(pid);
    const poll = setInterval(() => (peak = Math.max(peak, rss(pid))), 20);
    try {
      const wide = { query: 'mem_wide', start: String((t0 - 3_600_000) / 1000), end: String(t0 / 1000), step: '60' };
      const quietQuery = { query: 'count(mem_quiet)', time: String(t0 / 1000) };
      for (let round = 0; round < 3; round++) {
        const [a, b, quiet, write] = await Promise.all([
          api(sp.strata.url, '/prometheus/api/v1/query_range', wide, { method: 'POST', headers: LOUD }),
          api(sp.strata.url, '/prometheus/api/v1/query_range', wide, { method: 'POST', headers: LOUD }),
          api<{ result: VectorSample[] }>(sp.strata.url, '/prometheus/api/v1/query', quietQuery, { headers: QUIET }),
          push(sp.strata.url, newSeries('mem_quiet', 100 + round, 1, t0), QUIET),
        ]);
        for (const r of [a, b]) {
          assert.equal(r.httpStatus, 422, JSON.stringify(r).slice(0, 300));
          assert.match(
            r.error ?? '',
            /the query exceeded the maximum (estimated memory per query \(limit: 53687091 bytes\)|number of series \(limit: 131072 series\))/,
          );
        }
        assert.equal(quiet.httpStatus, 200, quiet.error);
        assert.equal(write.status, 200, write.body);
      }
    } finally {
      clearInterval(poll);
    }
    console.log(`RSS peak ${(peak / 2 ** 20).toFixed(0)} MiB of a ${BUDGET / 2 ** 20} MiB budget while over-limit queries were refused`);
    assert.ok(peak < BUDGET, `RSS peaked at ${(peak / 2 ** 20).toFixed(0)} MiB`);
  });

  test('an aggregation over more series than one query may hold is answered shard by shard, within the budget', async () => {
    const pid = sp.strata.pid!;
    let peak = rss(pid);
    const poll = setInterval(() => (peak = Math.max(peak, rss(pid))), 20);
    try {
      const range = { query: 'count by (shard) ({__name__=~"mem_wide|mem_quiet"})', start: String((t0 - 600_000) / 1000), end: String(t0 / 1000), step: '60' };
      const r = await api<{ result: { metric: Record<string, string>; values: [number, string][] }[] }>(
        sp.strata.url,
        '/prometheus/api/v1/query_range',
        range,
        { method: 'POST', headers: LOUD },
      );
      assert.equal(r.httpStatus, 200, r.error);
      assert.equal(r.data.result.length, SHARDS);
      for (const s of r.data.result)
        assert.ok(
          s.values.every(([, v]) => v === String(100_000 / SHARDS)),
          `${JSON.stringify(s.metric)}: ${JSON.stringify(s.values.slice(0, 3))}`,
        );
      const instant = await api<{ result: VectorSample[] }>(
        sp.strata.url,
        '/prometheus/api/v1/query',
        { query: 'count({__name__="mem_wide"})', time: String(t0 / 1000) },
        { headers: LOUD },
      );
      assert.equal(instant.httpStatus, 200, instant.error);
      assert.equal(instant.data.result[0].value[1], '100000');
    } finally {
      clearInterval(poll);
    }
    console.log(
      `RSS peak ${(peak / 2 ** 20).toFixed(0)} MiB of a ${BUDGET / 2 ** 20} MiB budget while aggregations over 100,000 series were answered shard by shard`,
    );
    assert.ok(peak < BUDGET, `RSS peaked at ${(peak / 2 ** 20).toFixed(0)} MiB`);
  });

  test('a series-creation burst far beyond the budget: 503 naming the instance limit, the process lives, every sample answered 2xx is queryable', async () => {
    const total = 4 * MAX_SERIES;
    const answers = await burst(sp.strata.url, 'mem_burst', total, 4, t0);
    const refused = answers.filter((a) => a.res.status === 503);
    const acked = answers.filter((a) => a.res.status === 200);
    assert.equal(refused.length + acked.length, answers.length, `only 200 or 503: ${[...new Set(answers.map((a) => a.res.status))].join(', ')}`);
    assert.ok(refused.length > 0, 'the burst was refused once the ingester was full');
    assert.match(
      refused[0].res.body,
      /partition 0's ingester is over an instance limit \(ingester-zone-a-0: \d+ series in memory, at the limit of 131072 .*\(err-strata-ingester-over-limit\)/,
    );
    assert.equal(sp.strata.running, true, 'the process lives');

    const expected = new Array<number>(SHARDS).fill(0);
    for (const { from } of acked) for (let i = from; i < Math.min(from + PER_PUSH, total); i++) expected[i % SHARDS]++;
    await waitFor(
      'every acknowledged series',
      async () => {
        const counts = await countPerShard(sp.strata.url, 'mem_burst', t0);
        return JSON.stringify(counts) === JSON.stringify(expected) ? counts : undefined;
      },
      180_000,
    );
    const ready = await fetch(`${sp.strata.url}/ready`);
    assert.equal(ready.status, 200, await ready.text());
  });
});
