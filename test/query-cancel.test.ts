// A query whose client goes away stops everywhere: separate querier and
// ingester processes on a real Kafka; the client aborts a large range query
// mid-flight, the querier counts the cancellation, cancels its gRPC stream, the
// ingester stops its select between slices (its counter and log say so) and its
// CPU returns to idle. The same budget the querier has holds inside the ingester.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCluster, type AppProcess } from '@strata/local-cluster';
import { generateSeries, push, waitFor, api, type VectorSample } from './support/client.ts';
import { scrape } from './support/metrics.ts';

const SERIES = 20_000;
const SAMPLES = 120;

describe('query cancellation end to end', { timeout: 600_000 }, () => {
  let cluster: LocalCluster;
  let dir: string;
  let ingester: AppProcess;
  const start = Math.floor(Date.now() / 60_000) * 60_000 - 40 * 60_000;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-cancel-'));
    cluster = await LocalCluster.start({
      dataDir: dir,
      partitions: 1,
      zones: ['a'],
      extraArgs: {
        distributor: ['-distributor.ingestion-rate-limit=100000000', '-distributor.ingestion-burst-size=100000000', '-auth.multitenancy-enabled=false'],
        ingester: ['-ingester.max-global-series-per-user=0', '-querier.max-fetched-series-per-query=0'],
        querier: ['-auth.multitenancy-enabled=false'],
      },
    });
    ingester = cluster.ingesters('a')[0];
    const series = generateSeries('cancel_me', SERIES, SAMPLES, start, 15_000);
    for (let i = 0; i < series.length; i += 1000) {
      const res = await push(cluster.distributorUrl, series.slice(i, i + 1000));
      assert.equal(res.status, 200, res.body);
    }
    await waitFor(
      `${SERIES} series in the ingester`,
      async () => {
        const r = await api<{ result: VectorSample[] }>(cluster.querierUrl, '/prometheus/api/v1/query', {
          query: 'count(cancel_me)',
          time: String((start + 30 * 60_000) / 1000),
        });
        return r.data.result[0]?.value[1] === String(SERIES) ? r : undefined;
      },
      180_000,
    );
  });

  after(async () => {
    await cluster?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  const stopped = async (reason: string) => (await scrape(ingester.url)).sum('strata_ingester_queries_stopped_total', { reason }) ?? 0;

  test("a client that disconnects mid-query stops the ingester's select; its CPU returns to idle", async () => {
    const before = await stopped('canceled');
    // The query takes the ingester a while (all 20,000 series × 120 samples); abort it at
    // growing delays until the cancel lands while the ingester is at work. Too early, the querier
    // has not asked yet; too late, the ingester has answered and only the querier is busy: the
    // window moves with the machine and the Node version, so the delays start small.
    let landed = false;
    for (const delayMs of [10, 25, 50, 100, 200, 400, 800, 1500]) {
      const ac = new AbortController();
      const pending = fetch(`${cluster.querierUrl}/prometheus/api/v1/query_range`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          query: 'sum(rate(cancel_me[5m]))',
          start: String(start / 1000),
          end: String((start + 30 * 60_000) / 1000),
          step: '15s',
        }).toString(),
        signal: ac.signal,
      }).catch((err: Error) => err);
      setTimeout(() => ac.abort(), delayMs);
      const outcome = await pending;
      if (!(outcome instanceof Error)) continue; // answered before the abort: try a shorter window next
      landed = await waitFor('the ingester to see the cancel', async () => ((await stopped('canceled')) > before ? true : undefined), 3_000).catch(() => false);
      if (landed) break;
    }
    assert.ok(landed, 'the ingester counted a canceled select');
    const querierMetrics = await scrape(cluster.querierUrl);
    assert.ok((querierMetrics.sum('strata_querier_queries_canceled_total', { endpoint: 'query_range' }) ?? 0) >= 1, 'the querier counted the cancellation');
    assert.match(readFileSync(ingester.opts.logFile, 'utf8'), /select stopped \(canceled\): query aborted/);
    // Idle again: the ingester spends under a fifth of a core over the next 3 s (it only heartbeats and polls Kafka).
    const cpu = async () => (await scrape(ingester.url)).sum('process_cpu_seconds_total') ?? 0;
    const c0 = await cpu();
    await new Promise((r) => setTimeout(r, 3000));
    const used = (await cpu()) - c0;
    console.log(`ingester CPU in the 3 s after the cancel: ${used.toFixed(2)} s`);
    assert.ok(used < 0.6, `ingester still busy after the cancel: ${used.toFixed(2)} CPU-seconds in 3 s`);
  });

  test("the querier's series budget holds inside the ingester: an over-budget select stops there with 422", async () => {
    // The querier asks with no limit of its own here; the ingester was started with -querier.max-fetched-series-per-query=0,
    // so restart it with a small budget and see the select stopped in the ingester.
    await ingester.kill('SIGTERM');
    ingester.opts.args.push('-querier.max-fetched-series-per-query=1000');
    ingester.start();
    await ingester.waitReady(120_000);
    // Ready comes within -ingester.max-lag-records-for-ready of the end, before every record is replayed; a count
    // over the budget is answered shard by shard, so it can tell when all series are back.
    await waitFor(
      `${SERIES} series replayed`,
      async () => {
        const c = await api<{ result: VectorSample[] }>(cluster.querierUrl, '/prometheus/api/v1/query', {
          query: 'count(cancel_me)',
          time: String((start + 30 * 60_000) / 1000),
        });
        return c.data.result[0]?.value[1] === String(SERIES) ? c : undefined;
      },
      180_000,
    );
    const before = await stopped('budget');
    // topk: an aggregation the engine does not answer shard by shard (count would be).
    const r = await api(cluster.querierUrl, '/prometheus/api/v1/query', { query: 'topk(1, cancel_me)', time: String((start + 30 * 60_000) / 1000) });
    assert.equal(r.httpStatus, 422, JSON.stringify(r));
    assert.equal(r.errorType, 'execution');
    assert.match(r.error ?? '', /maximum number of series \(limit: 1000 series\).*-querier.max-fetched-series-per-query/);
    assert.equal((await stopped('budget')) - before, 1);
  });
});
