// One tenant's hostile or heavy queries must not slow another tenant down: a
// real single process with multi-tenancy on, where tenant "mallory" runs
// regexes that take a backtracking engine exponential time, on the head and on
// blocks, while tenant "alice" keeps pushing and querying; and 20 dashboard
// range queries at once while ingesting, with the Kafka consumer keeping its
// group membership.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AppProcess } from '@strata/local-cluster';
import { compressBody, encodeWriteRequest, type SeriesInput } from '@strata/remote-write';
import { waitFor } from './support/client.ts';
import { startSingleProcess, type SingleProcess } from './support/single-process.ts';

const PATHOLOGICAL = ['(a+)+b', '(a|a)*b', '(x+x+)+y', '(a|aa)+$b', '(.*a){20}b'];
/** Another tenant's requests must each answer within this (a frozen event loop would not). */
const RESPONSIVE_MS = 1000;

describe('query isolation between tenants', { timeout: 300_000 }, () => {
  let sp: SingleProcess;
  let strata: AppProcess;
  const now = Date.now();

  const push = async (tenant: string, series: SeriesInput[], timeoutMs = 30_000) => {
    const res = await fetch(`${strata.url}/api/v1/push`, {
      method: 'POST',
      body: compressBody(encodeWriteRequest({ timeseries: series })),
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-scope-orgid': tenant },
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: res.status, body: await res.text() };
  };
  const query = async (tenant: string, q: string, timeoutMs = 30_000) => {
    const res = await fetch(`${strata.url}/prometheus/api/v1/query?${new URLSearchParams({ query: q, time: String(now / 1000) })}`, {
      headers: { 'x-scope-orgid': tenant },
      signal: AbortSignal.timeout(timeoutMs),
    });
    return {
      status: res.status,
      json: (await res.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] }; error?: string },
    };
  };

  before(async () => {
    sp = await startSingleProcess('isolation', [
      '-auth.multitenancy-enabled=true',
      // An hour of ~950 series arrives in seconds below; the default rate limit is for steady senders.
      '-distributor.ingestion-rate-limit=100000000',
      '-distributor.ingestion-burst-size=100000000',
    ]);
    strata = sp.strata;
    // Values of 30–40 characters that each pattern almost matches: the worst case for backtracking.
    const values = ['a'.repeat(34), 'a'.repeat(40), 'x'.repeat(30), 'a'.repeat(30) + 'c'];
    const res = await push(
      'mallory',
      values.map((v, i) => ({
        labels: [
          { name: '__name__', value: 'redos' },
          { name: 'i', value: String(i) },
          { name: 'v', value: v },
        ],
        samples: [{ value: i, timestamp: now - 60_000 }],
      })),
    );
    assert.equal(res.status, 200, res.body);
    // The push is acknowledged once Kafka has it; the ingester may not have consumed it yet.
    await waitFor(
      "mallory's 4 series in the head",
      async () => ((await query('mallory', 'count(redos)')).json.data.result[0]?.value[1] === '4' ? true : undefined),
      30_000,
    );
  });

  after(async () => {
    await sp?.stop();
  });

  /** Runs mallory's queries while alice pushes and queries; every alice request must answer in time. */
  async function hostileWhileAliceWorks(label: string) {
    let stop = false;
    const aliceLatencies: number[] = [];
    let aliceSamples = 0;
    const alice = (async () => {
      let i = 0;
      while (!stop) {
        const t0 = Date.now();
        const ts = now - 30_000 + i;
        const p = await push('alice', [{ labels: [{ name: '__name__', value: 'alice_up' }], samples: [{ value: i, timestamp: ts }] }], RESPONSIVE_MS);
        assert.equal(p.status, 200, `${label}: alice's push ${i}: ${p.body}`);
        aliceSamples++;
        const q = await query('alice', 'count(alice_up)', RESPONSIVE_MS);
        assert.equal(q.status, 200, `${label}: alice's query ${i}`);
        aliceLatencies.push(Date.now() - t0);
        i++;
      }
    })();
    const hostile: { pattern: string; series: number; ms: number }[] = [];
    const one = async (pattern: string) => {
      const t0 = Date.now();
      // In a label matcher (head and block postings) and in label_replace.
      const sel = await query('mallory', `redos{v=~"${pattern}"}`);
      assert.equal(sel.status, 200, `${pattern}: ${JSON.stringify(sel.json)}`);
      const neg = await query('mallory', `count(redos{v!~"${pattern}"})`);
      assert.equal(neg.status, 200, `${pattern}: ${JSON.stringify(neg.json)}`);
      assert.deepEqual(
        neg.json.data.result.map((r) => r.value[1]),
        ['4'],
        `${pattern}: no value matches`,
      );
      const repl = await query('mallory', `label_replace(redos, "m", "$1", "v", "${pattern}")`);
      assert.equal(repl.status, 200, `${pattern}: ${JSON.stringify(repl.json)}`);
      assert.equal(repl.json.data.result.filter((r) => r.metric.m !== undefined).length, 0);
      hostile.push({ pattern, series: sel.json.data.result.length, ms: Date.now() - t0 });
    };
    try {
      // Three rounds of every pattern at once.
      for (let round = 0; round < 3; round++) await Promise.all(PATHOLOGICAL.map(one));
    } finally {
      stop = true;
      await alice;
    }
    console.log(
      `${label}: mallory's ${hostile.length} query groups took at most ${Math.max(...hostile.map((h) => h.ms))} ms; alice pushed and queried ${aliceSamples} times, slowest ${Math.max(...aliceLatencies)} ms`,
    );
    for (const h of hostile) assert.equal(h.series, 0, `${h.pattern} matches none of the values`);
    assert.ok(aliceSamples > 0);
  }

  test('pathological regexes on the head answer while another tenant keeps pushing and querying', async () => {
    await hostileWhileAliceWorks('head');
  });

  test('the same on blocks after a flush, and a regex that does match still selects', async () => {
    const res = await fetch(`${strata.url}/ingester/flush?wait=true`, { method: 'POST' });
    assert.equal(res.status, 204, await res.text());
    await hostileWhileAliceWorks('blocks');
    const hit = await query('mallory', 'redos{v=~"(a+)+"}');
    assert.deepEqual(hit.json.data.result.map((r) => r.metric.i).sort(), ['0', '1']);
    const cap = await query('mallory', 'label_replace(redos{i="3"}, "m", "$2", "v", "(a+)+(c)")');
    assert.equal(cap.json.data.result[0]?.metric.m, 'c');
  });

  test('a bad regex is a 400 worded as Prometheus words it', async () => {
    const res = await query('mallory', 'redos{v=~"(a"}');
    assert.equal(res.status, 400);
    assert.match(res.json.error ?? '', /error parsing regexp: missing closing \): `\(a`/);
  });

  test('20 concurrent range queries (1 h at 10 s, histogram_quantile over classic buckets among them) while ingesting: every query answers, pushes keep answering, the partition reader keeps fetching', async () => {
    // A tenant of its own: the flush above closed alice's and mallory's heads to samples this old.
    const STEP = 10_000;
    const end = Math.floor(Date.now() / STEP) * STEP - 60_000;
    const begin = end - 55 * 60_000;
    const times = Array.from({ length: (end - begin) / STEP + 1 }, (_, i) => begin + i * STEP);
    const LE = ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '+Inf'];
    const series: SeriesInput[] = [];
    // 40 classic histograms × 11 buckets and 510 counters: ~950 series, as the compliance tester's load.
    for (let h = 0; h < 40; h++) {
      LE.forEach((le, b) =>
        series.push({
          labels: [
            { name: '__name__', value: 'dash_duration_seconds_bucket' },
            { name: 'instance', value: `i${h}` },
            { name: 'le', value: le },
          ],
          samples: times.map((t, k) => ({ value: k * (b + 1) + h, timestamp: t })),
        }),
      );
    }
    for (let c = 0; c < 510; c++) {
      series.push({
        labels: [
          { name: '__name__', value: 'dash_requests_total' },
          { name: 'instance', value: `i${c % 40}` },
          { name: 'path', value: `/p${c}` },
        ],
        samples: times.map((t, k) => ({ value: k * ((c % 7) + 1), timestamp: t })),
      });
    }
    for (let i = 0; i < series.length; i += 50) {
      const p = await push('dash', series.slice(i, i + 50));
      assert.equal(p.status, 200, p.body);
    }
    // Acknowledged means in Kafka; wait until the ingester has consumed it all.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await query('dash', `count(dash_requests_total) + count(dash_duration_seconds_bucket)`);
      if (r.json.data.result[0]?.value[1] === String(series.length)) break;
      assert.ok(Date.now() < deadline, `ingested: ${JSON.stringify(r.json.data.result)} of ${series.length} series`);
      await new Promise((res) => setTimeout(res, 250));
    }
    const queries = [
      'histogram_quantile(0.9, rate(dash_duration_seconds_bucket[1m]))',
      'histogram_quantile(0.99, sum by (le) (rate(dash_duration_seconds_bucket[1m])))',
      'sum(rate(dash_requests_total[1m]))',
      'sum by (instance) (rate(dash_requests_total[5m]))',
      'topk(5, sum by (path) (rate(dash_requests_total[5m])))',
      'avg_over_time(dash_requests_total{path=~"/p1.*"}[10m])',
      'quantile(0.5, rate(dash_requests_total[5m]))',
      'count by (instance) (dash_requests_total)',
      'sum by (instance) (increase(dash_duration_seconds_bucket{le="+Inf"}[5m]))',
      'max(rate(dash_requests_total{instance=~"i1|i2|i3"}[2m]))',
    ];
    const range = async (q: string) => {
      const t0 = Date.now();
      const res = await fetch(`${strata.url}/prometheus/api/v1/query_range`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-scope-orgid': 'dash' },
        body: new URLSearchParams({ query: q, start: String((end - 60 * 60_000) / 1000), end: String(end / 1000), step: '10s' }).toString(),
        signal: AbortSignal.timeout(120_000),
      });
      const body = (await res.json()) as { status: string; data?: { result: unknown[] }; error?: string };
      assert.equal(res.status, 200, `${q}: ${body.error}`);
      assert.ok((body.data?.result.length ?? 0) > 0, `${q}: no series`);
      return Date.now() - t0;
    };
    let stop = false;
    const pushLatencies: number[] = [];
    const pusher = (async () => {
      for (let i = 0; !stop; i++) {
        const t0 = Date.now();
        const p = await push(
          'dash',
          [{ labels: [{ name: '__name__', value: 'dash_live' }], samples: [{ value: i, timestamp: Date.now() }] }],
          10 * RESPONSIVE_MS,
        );
        assert.equal(p.status, 200, `push ${i} during the queries: ${p.body}`);
        pushLatencies.push(Date.now() - t0);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    let took: number[];
    try {
      took = await Promise.all(Array.from({ length: 20 }, (_, i) => range(queries[i % queries.length])));
    } finally {
      stop = true;
      await pusher;
    }
    console.log(
      `20 concurrent range queries over ${series.length} series: slowest ${Math.max(...took)} ms; ${pushLatencies.length} pushes meanwhile, slowest ${Math.max(...pushLatencies)} ms`,
    );
    assert.ok(pushLatencies.length > 0);
    const log = readFileSync(strata.opts.logFile, 'utf8');
    // The reader assigns its partition itself (no group membership to lose): what heavy queries could
    // still break is its fetching (a request timing out while the event loop is starved).
    assert.doesNotMatch(log, /kafka fetch of partition \d+ failed/, 'the partition reader failed to fetch while the queries ran');
    assert.match(log, /reading partition \d+ of \S+ for consumer group ingester-zone-a-0/);
  });
});
