// Above capacity, twice. (1) 64 concurrent senders against a single-process Strata (real
// Kafka) whose distributor takes 4 pushes at once, with a tenant rate limit (5000 samples/s) and a
// 2s Kafka write timeout. Every answer is 2xx, 429 or 503 (with Retry-After), the
// distributor sheds load instead of queueing, and every sample of every 2xx
// answer is read back through PromQL. (2) A frozen Kafka broker (SIGSTOP) behind a
// distributor process: pushes wait at most the write timeout and get 503, and
// while they hold every inflight slot the rest are refused at once; after SIGCONT
// pushes succeed again. Latencies are printed, not asserted.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AppProcess } from '@strata/local-cluster';
import type { LocalKafka } from '@strata/local-kafka';
import { compressBody, encodeWriteRequest, type SeriesInput } from '@strata/remote-write';
import { api, waitFor, type MatrixSeries } from './support/client.ts';
import { startDistributorWithKafka, type DistributorWithKafka } from './support/distributor.ts';
import { percentile } from './bench/latency.ts';
import { startSingleProcess, type SingleProcess } from './support/single-process.ts';

const CLIENTS = 64;
const SERIES_PER_PUSH = 25;
const LOAD_MS = 15_000;
const WRITE_TIMEOUT_MS = 2_000;

describe('above capacity: a distributor with small instance limits under 64 concurrent senders', { timeout: 600_000 }, () => {
  let sp: SingleProcess;
  let strata: AppProcess;

  before(async () => {
    sp = await startSingleProcess('overload', [
      '-distributor.instance-limits.max-inflight-push-requests=4',
      `-ingest-storage.kafka.write-timeout=${WRITE_TIMEOUT_MS}ms`,
      '-distributor.ingestion-rate-limit=5000',
      '-distributor.ingestion-burst-size=10000',
    ]);
    strata = sp.strata;
  });

  after(async () => {
    await sp?.stop();
  });

  test('answers are 2xx/429/503 only, some refused; every acknowledged sample is queryable', async () => {
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 40 * 60_000;
    // Per client: the sequence numbers of its acknowledged pushes (sample at t0 + seq s, value seq).
    const acked: number[][] = Array.from({ length: CLIENTS }, () => []);
    const latencies = new Map<number, number[]>();
    const bad: string[] = [];
    let missingRetryAfter = 0;
    const end = Date.now() + LOAD_MS;
    const client = async (c: number) => {
      for (let seq = 0; Date.now() < end; seq++) {
        const series: SeriesInput[] = Array.from({ length: SERIES_PER_PUSH }, (_, k) => ({
          labels: [
            { name: '__name__', value: 'overload_metric' },
            { name: 'client', value: String(c) },
            { name: 'series', value: String(k) },
          ],
          samples: [{ value: seq, timestamp: t0 + seq * 1000 }],
        }));
        const started = performance.now();
        const res = await fetch(`${strata.url}/api/v1/push`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' },
          body: compressBody(encodeWriteRequest({ timeseries: series })),
          signal: AbortSignal.timeout(60_000),
        });
        const text = await res.text();
        const ms = performance.now() - started;
        let list = latencies.get(res.status);
        if (!list) latencies.set(res.status, (list = []));
        list.push(ms);
        if (res.status >= 200 && res.status < 300) acked[c].push(seq);
        else if (res.status === 429 || res.status === 503) {
          if (res.headers.get('retry-after') === null) missingRetryAfter++;
          if (text.trim() === '' || text.trim().includes('\n')) bad.push(`${res.status} without a one-line reason: ${JSON.stringify(text)}`);
          await new Promise((r) => setTimeout(r, 10)); // not a hot loop; the load stays far above capacity
        } else bad.push(`${res.status}: ${text.slice(0, 200)}`);
      }
    };
    const started = Date.now();
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    const seconds = (Date.now() - started) / 1000;

    const all = [...latencies.values()].flat().sort((a, b) => a - b);
    const count = (s: number) => latencies.get(s)?.length ?? 0;
    const okCount = [...latencies].filter(([s]) => s >= 200 && s < 300).reduce((n, [, l]) => n + l.length, 0);
    console.log(
      `overload: ${all.length} pushes in ${seconds.toFixed(1)}s from ${CLIENTS} senders: ${okCount} 2xx (${(okCount / seconds).toFixed(0)}/s, ` +
        `${okCount * SERIES_PER_PUSH} samples), ${count(429)} 429, ${count(503)} 503`,
    );
    const fmt = (l: number[]) => {
      const s = [...l].sort((a, b) => a - b);
      return `p50 ${percentile(s, 50).toFixed(1)} ms, p99 ${percentile(s, 99).toFixed(1)} ms, max ${s[s.length - 1]?.toFixed(1)} ms`;
    };
    console.log(`overload latency: all ${fmt(all)}`);
    for (const [status, l] of [...latencies].sort()) console.log(`overload latency: ${status} ${fmt(l)} (${l.length})`);

    assert.deepEqual(bad.slice(0, 10), [], `${bad.length} answers other than 2xx/429/503 with a reason`);
    assert.equal(missingRetryAfter, 0, '429 and 503 answers carry Retry-After');
    assert.ok(count(429) + count(503) > 0, 'the load was above capacity: some pushes were refused');
    assert.ok(count(503) > 0, 'the inflight limit refused some pushes');
    assert.ok(okCount > 0, 'some pushes were accepted');
    // Not a speed check: no push waits for Kafka much beyond the write timeout.
    assert.ok(all[all.length - 1] < 10_000, `slowest push took ${all[all.length - 1].toFixed(0)} ms`);

    // Every sample of every 2xx answer reads back, exactly.
    let verified = 0;
    for (let c = 0; c < CLIENTS; c++) {
      const seqs = acked[c];
      if (seqs.length === 0) continue;
      const last = seqs[seqs.length - 1];
      await waitFor(`client ${c}: ${seqs.length} acknowledged pushes queryable`, async () => {
        const r = await api<{ result: MatrixSeries[] }>(strata.url, '/prometheus/api/v1/query_range', {
          query: `overload_metric{client="${c}"}`,
          start: String(t0 / 1000),
          end: String((t0 + last * 1000) / 1000),
          step: '1s',
        });
        if (r.httpStatus !== 200 || r.data.result.length !== SERIES_PER_PUSH) return undefined;
        for (const s of r.data.result) {
          // Each step lands on a sample time; a missing sample would show the previous one (lookback).
          const got = new Map(s.values.map(([t, v]) => [Math.round(t * 1000), Number(v)]));
          for (const seq of seqs) if (got.get(t0 + seq * 1000) !== seq) return undefined;
        }
        return r;
      });
      verified += seqs.length * SERIES_PER_PUSH;
    }
    console.log(`overload: ${verified} acknowledged samples read back through PromQL`);
    assert.equal(verified, okCount * SERIES_PER_PUSH);
  });
});

describe('a frozen Kafka behind a distributor with 4 inflight slots and a 2s write timeout', { timeout: 300_000 }, () => {
  let env: DistributorWithKafka;
  let kafka: LocalKafka;
  let distributor: AppProcess;

  before(async () => {
    env = await startDistributorWithKafka({
      name: 'stall',
      partitions: 1,
      args: [
        '-auth.multitenancy-enabled=false',
        '-distributor.instance-limits.max-inflight-push-requests=4',
        `-ingest-storage.kafka.write-timeout=${WRITE_TIMEOUT_MS}ms`,
      ],
    });
    ({ kafka, distributor } = env);
  });

  after(async () => {
    for (const pid of kafka?.pids ?? []) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // already gone
      }
    }
    await env?.stop();
  });

  const pushOnce = async (i: number) => {
    const started = performance.now();
    const res = await fetch(`${distributor.url}/api/v1/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' },
      body: compressBody(
        encodeWriteRequest({
          timeseries: [
            {
              labels: [
                { name: '__name__', value: 'stall_metric' },
                { name: 'i', value: String(i) },
              ],
              samples: [{ value: i, timestamp: Date.now() }],
            },
          ],
        }),
      ),
      signal: AbortSignal.timeout(60_000),
    });
    return { status: res.status, body: await res.text(), retryAfter: res.headers.get('retry-after'), ms: performance.now() - started };
  };

  test('stalled pushes answer 503 after the write timeout, the rest 503 at once; never a 2xx; recovery after SIGCONT', async () => {
    assert.equal((await pushOnce(0)).status, 200, 'Kafka up: accepted');
    const [pid] = kafka.pids;
    process.kill(pid, 'SIGSTOP');
    let stalled: Awaited<ReturnType<typeof pushOnce>>[];
    let shed: Awaited<ReturnType<typeof pushOnce>>[];
    try {
      const stalledP = Promise.all([1, 2, 3, 4].map(pushOnce));
      await new Promise((r) => setTimeout(r, 500)); // the four are now waiting on Kafka, holding every slot
      shed = await Promise.all(Array.from({ length: 20 }, (_, i) => pushOnce(100 + i)));
      stalled = await stalledP;
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const fmt = (l: { ms: number }[]) => l.map((x) => x.ms.toFixed(0)).join(', ');
    console.log(`frozen Kafka: 4 stalled pushes answered after ${fmt(stalled)} ms; 20 shed pushes after ${fmt(shed)} ms`);
    for (const r of stalled) {
      assert.equal(r.status, 503, r.body);
      assert.match(r.body, /not acknowledged by Kafka/);
      assert.ok(r.ms < 10_000, `a stalled push waited ${r.ms.toFixed(0)} ms (write timeout ${WRITE_TIMEOUT_MS} ms)`);
    }
    for (const r of shed) {
      assert.equal(r.status, 503, r.body);
      assert.match(r.body, /err-strata-distributor-max-inflight-push-requests/);
    }
    for (const r of [...stalled, ...shed]) assert.equal(r.retryAfter, '1');

    const t = Date.now();
    let attempts = 0;
    for (;;) {
      attempts++;
      const r = await pushOnce(1000 + attempts);
      assert.ok(r.status === 200 || r.status === 503, `after SIGCONT: ${r.status} ${r.body}`);
      if (r.status === 200) break;
      assert.ok(Date.now() - t < 30_000, `pushes did not recover within 30s of SIGCONT: ${r.body}`);
      await new Promise((res) => setTimeout(res, 250));
    }
    console.log(`frozen Kafka: pushes accepted again ${Date.now() - t} ms after SIGCONT (${attempts} attempt(s))`);
  });
});
