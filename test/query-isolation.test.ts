// One tenant's hostile queries must not slow another tenant down: a real
// single process with multi-tenancy on, where tenant "mallory" runs regexes
// that take a backtracking engine exponential time, on the head and on
// blocks, while tenant "alice" keeps pushing and querying.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AppProcess } from '@strata/local-cluster';
import { compressBody, encodeWriteRequest, type SeriesInput } from '@strata/remote-write';
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
    return { status: res.status, json: (await res.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] }; error?: string } };
  };

  before(async () => {
    sp = await startSingleProcess('isolation', [
      '-auth.multitenancy-enabled=true',
    ]);
    strata = sp.strata;
    // Values of 30–40 characters that each pattern almost matches: the worst case for backtracking.
    const values = ['a'.repeat(34), 'a'.repeat(40), 'x'.repeat(30), 'a'.repeat(30) + 'c'];
    const res = await push(
      'mallory',
      values.map((v, i) => ({
        labels: [{ name: '__name__', value: 'redos' }, { name: 'i', value: String(i) }, { name: 'v', value: v }],
        samples: [{ value: i, timestamp: now - 60_000 }],
      })),
    );
    assert.equal(res.status, 200, res.body);
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
      assert.deepEqual(neg.json.data.result.map((r) => r.value[1]), ['4'], `${pattern}: no value matches`);
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
    console.log(`${label}: mallory's ${hostile.length} query groups took at most ${Math.max(...hostile.map((h) => h.ms))} ms; alice pushed and queried ${aliceSamples} times, slowest ${Math.max(...aliceLatencies)} ms`);
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
});
