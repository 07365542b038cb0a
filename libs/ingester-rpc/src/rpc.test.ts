import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StrataError } from '@strata/errors';
import { labelsFromRecord } from '@strata/model';
import { emptyAppendStats } from '@strata/tsdb';
import { TenantHeads } from '@strata/tsdb/testing';
import { InMemorySpanExporter, Tracing, inSpan } from '@strata/tracing';
import { IngesterClient, IngesterServer } from './index.ts';

test('a client reads what the served head holds, bit-exact, per tenant', async () => {
  const heads = new TenantHeads();
  const values = new Float64Array([1.5, 0]);
  new DataView(values.buffer).setBigUint64(8, 0x7ff0000000000002n, true);
  heads.head('t1').append(labelsFromRecord({ __name__: 'up', job: 'a' }), new Float64Array([10, 20]), values, emptyAppendStats());
  heads.head('t2').append(labelsFromRecord({ __name__: 'up', job: 'b' }), new Float64Array([10]), new Float64Array([7]), emptyAppendStats());
  const server = new IngesterServer({ querier: heads, address: '127.0.0.1:0' });
  await server.start();
  const client = new IngesterClient({ id: 'ingester-zone-a-0', address: `127.0.0.1:${server.port}`, timeoutMs: 5000 });
  try {
    const series = await client.select({ tenant: 't1', matchers: [{ type: '=', name: '__name__', value: 'up' }], mint: 0, maxt: 100 });
    assert.equal(series.length, 1);
    assert.deepEqual(series[0].labels, labelsFromRecord({ __name__: 'up', job: 'a' }));
    assert.deepEqual([...series[0].timestamps], [10, 20]);
    assert.equal(series[0].values[0], 1.5);
    assert.equal(new DataView(series[0].values.buffer).getBigUint64(8, true), 0x7ff0000000000002n);
    assert.deepEqual(await client.labelValues({ tenant: 't1', matchers: [], mint: 0, maxt: 100, name: 'job' }), ['a']);
    assert.deepEqual(await client.labelNames({ tenant: 't2', matchers: [], mint: 0, maxt: 100 }), ['__name__', 'job']);
    assert.deepEqual(await client.select({ tenant: 't3', matchers: [], mint: 0, maxt: 100 }), []);
  } finally {
    client.close();
    await server.stop();
  }
});

test('a dead ingester fails fast with its id in the error', async () => {
  const client = new IngesterClient({ id: 'ingester-zone-b-1', address: '127.0.0.1:1', timeoutMs: 1000 });
  await assert.rejects(client.labelNames({ tenant: 't', matchers: [], mint: 0, maxt: 1 }), /ingester-zone-b-1/);
  client.close();
});

test('exemplars, metadata and WaitForOffset cross the wire; a plain head serves none and cannot wait', async () => {
  const labels = labelsFromRecord({ __name__: 'req_total', job: 'a' });
  let consumed = 3n;
  const served = Object.assign(new TenantHeads(), {
    async exemplars(p: { tenant: string; matcherSets: unknown[][]; mint: number; maxt: number }) {
      assert.equal(p.matcherSets.length, 2);
      return [{ seriesLabels: labels, exemplars: [{ labels: labelsFromRecord({ trace_id: 'x' }), value: 0.25, timestamp: p.mint + 1 }] }];
    },
    async metadata(p: { tenant: string; metric?: string }) {
      return [{ metricFamilyName: p.metric ?? 'all', type: 'counter', help: `for ${p.tenant}`, unit: 'seconds' }];
    },
    async waitForOffset(offset: bigint, timeoutMs: number) {
      if (offset <= consumed) return consumed;
      await new Promise((r) => setTimeout(r, timeoutMs));
      throw new StrataError('offset-wait-timeout', 'timeout', `offset ${offset} not consumed within ${timeoutMs}ms`);
    },
  });
  const server = new IngesterServer({ querier: served, address: '127.0.0.1:0' });
  const plain = new IngesterServer({ querier: new TenantHeads(), address: '127.0.0.1:0' });
  await server.start();
  await plain.start();
  const client = new IngesterClient({ id: 'ingester-zone-a-0', address: `127.0.0.1:${server.port}`, timeoutMs: 5000 });
  const plainClient = new IngesterClient({ id: 'ingester-zone-b-0', address: `127.0.0.1:${plain.port}`, timeoutMs: 5000 });
  try {
    const m = [{ type: '=' as const, name: '__name__', value: 'req_total' }];
    assert.deepEqual(await client.exemplars({ tenant: 't1', matcherSets: [m, m], mint: 1000, maxt: 2000 }), [
      { seriesLabels: labels, exemplars: [{ labels: labelsFromRecord({ trace_id: 'x' }), value: 0.25, timestamp: 1001 }] },
    ]);
    assert.deepEqual(await client.metadata({ tenant: 't1', metric: 'up' }), [{ metricFamilyName: 'up', type: 'counter', help: 'for t1', unit: 'seconds' }]);
    assert.equal((await client.metadata({ tenant: 't1' }))[0].metricFamilyName, 'all');
    assert.equal(await client.waitForOffset(2n, 1000), 3n);
    await assert.rejects(client.waitForOffset(5n, 50), /ingester-zone-a-0 .*DEADLINE_EXCEEDED|not consumed within 50ms/);
    consumed = 9n;
    assert.equal(await client.waitForOffset(5n, 50), 9n);

    assert.deepEqual(await plainClient.exemplars({ tenant: 't1', matcherSets: [m], mint: 0, maxt: 1 }), []);
    assert.deepEqual(await plainClient.metadata({ tenant: 't1' }), []);
    await assert.rejects(plainClient.waitForOffset(1n, 50), /UNIMPLEMENTED|cannot wait/);
  } finally {
    client.close();
    plainClient.close();
    await server.stop();
    await plain.stop();
  }
});

test('native histogram samples cross the wire with their float counts and layout', async () => {
  const labels = labelsFromRecord({ __name__: 'lat', job: 'a' });
  const hist = {
    counterResetHint: 'gauge' as const,
    schema: -53,
    zeroThreshold: 0,
    zeroCount: 0,
    count: 4,
    sum: 5.5,
    positiveSpans: [{ offset: 0, length: 3 }],
    negativeSpans: [],
    positiveBuckets: [1, 2.5, 0.5],
    negativeBuckets: [],
    customValues: [5, 10],
  };
  const served = {
    async select() {
      return [
        { labels, timestamps: Float64Array.from([1]), values: Float64Array.from([2]), histograms: { timestamps: Float64Array.from([3]), values: [hist] } },
      ];
    },
    async labelNames() {
      return [];
    },
    async labelValues() {
      return [];
    },
  };
  const server = new IngesterServer({ querier: served, address: '127.0.0.1:0' });
  await server.start();
  const client = new IngesterClient({ id: 'ingester-zone-a-0', address: `127.0.0.1:${server.port}`, timeoutMs: 5000 });
  try {
    const [s] = await client.select({ tenant: 't', matchers: [], mint: 0, maxt: 10 });
    assert.deepEqual([...s.timestamps, ...s.values], [1, 2]);
    assert.deepEqual([...s.histograms!.timestamps], [3]);
    assert.deepEqual(s.histograms!.values, [hist]);
  } finally {
    client.close();
    await server.stop();
  }
});

test("a call continues the caller's trace: the ingester's span is a child of the querier's", async () => {
  const spans = new InMemorySpanExporter();
  const querierTracing = new Tracing({ serviceName: 'querier', exporter: spans });
  const ingesterTracing = new Tracing({ serviceName: 'ingester', exporter: spans });
  const heads = new TenantHeads();
  heads.head('t1').append(labelsFromRecord({ __name__: 'up', job: 'a' }), new Float64Array([10]), new Float64Array([1]), emptyAppendStats());
  const server = new IngesterServer({ querier: heads, address: '127.0.0.1:0', tracer: ingesterTracing.tracer });
  await server.start();
  const client = new IngesterClient({ id: 'ingester-zone-a-0', address: `127.0.0.1:${server.port}`, timeoutMs: 5000 });
  try {
    const parent = await inSpan(querierTracing.tracer, 'querier.query', {}, undefined, async (span) => {
      assert.equal((await client.select({ tenant: 't1', matchers: [], mint: 0, maxt: 100 })).length, 1);
      assert.deepEqual(await client.labelNames({ tenant: 't1', matchers: [], mint: 0, maxt: 100 }), ['__name__', 'job']);
      return span.spanContext();
    });
    const served = spans.getFinishedSpans().filter((s) => s.resource.attributes['service.name'] === 'ingester');
    assert.deepEqual(served.map((s) => s.name).sort(), ['ingester.LabelNames', 'ingester.QueryStream']);
    for (const s of served) {
      assert.equal(s.spanContext().traceId, parent.traceId);
      assert.equal(s.parentSpanContext?.spanId, parent.spanId);
      assert.equal(s.attributes.tenant, 't1');
    }
    // Without a caller's span the call still works and the ingester starts its own trace.
    await client.select({ tenant: 't1', matchers: [], mint: 0, maxt: 100 });
    const root = spans
      .getFinishedSpans()
      .filter((s) => s.name === 'ingester.QueryStream')
      .at(-1)!;
    assert.equal(root.parentSpanContext, undefined);
  } finally {
    client.close();
    await server.stop();
    await querierTracing.stop();
    await ingesterTracing.stop();
  }
});

test('an aborted signal cancels the call, and the served read sees its own signal fire', async () => {
  let served: AbortSignal | undefined;
  let reached: () => void = () => {};
  const asked = new Promise<void>((r) => (reached = r));
  const slow = Object.assign(new TenantHeads(), {
    async select(p: { signal?: AbortSignal }) {
      served = p.signal;
      reached();
      await new Promise((r) => setTimeout(r, 2_000));
      return [];
    },
  });
  const server = new IngesterServer({ querier: slow, address: '127.0.0.1:0' });
  await server.start();
  const client = new IngesterClient({ id: 'ingester-zone-a-0', address: `127.0.0.1:${server.port}`, timeoutMs: 5000 });
  try {
    const ac = new AbortController();
    const started = Date.now();
    const p = client.select({ tenant: 't', matchers: [], mint: 0, maxt: 10, signal: ac.signal });
    await asked;
    ac.abort();
    await assert.rejects(p, { code: 'err-strata-query-aborted', kind: 'canceled' });
    assert.ok(Date.now() - started < 1_500, 'the client did not wait for the answer');
    for (let i = 0; i < 50 && !served?.aborted; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(served?.aborted, true, 'the ingester was told');
    await assert.rejects(client.labelNames({ tenant: 't', matchers: [], mint: 0, maxt: 10, signal: ac.signal }), {
      code: 'err-strata-query-aborted',
      kind: 'canceled',
    });
  } finally {
    client.close();
    await server.stop();
  }
});

test('select hints cross the wire (an instant selector reads one sample per series in the ingester); none stay none', async () => {
  const seen: unknown[] = [];
  const served = Object.assign(new TenantHeads(), {
    async select(p: { hints?: unknown }) {
      seen.push(p.hints);
      return [];
    },
  });
  const server = new IngesterServer({ querier: served, address: '127.0.0.1:0' });
  await server.start();
  const client = new IngesterClient({ id: 'ingester-zone-a-0', address: `127.0.0.1:${server.port}`, timeoutMs: 5000 });
  try {
    await client.select({ tenant: 't', matchers: [], mint: 0, maxt: 300_000, hints: { start: 0, end: 300_000, step: 0, range: 0 } });
    await client.select({ tenant: 't', matchers: [], mint: 0, maxt: 300_000, hints: { start: 0, end: 300_000, step: 60_000, range: 300_000, func: 'rate' } });
    await client.select({ tenant: 't', matchers: [], mint: 0, maxt: 10 });
    assert.deepEqual(seen, [{ start: 0, end: 300_000, step: 0, range: 0 }, { start: 0, end: 300_000, step: 60_000, range: 300_000, func: 'rate' }, undefined]);
  } finally {
    client.close();
    await server.stop();
  }
});

test('float samples cross as the head XOR chunks, decoded and clipped bit-exact by the client; histogram series as samples', async () => {
  const heads = new TenantHeads();
  const head = heads.head('t');
  // 300 samples at 1 s: two closed chunks of 120 and an open one of 60; a staleness marker among them.
  const ts = Float64Array.from({ length: 300 }, (_, i) => 1000 * (i + 1));
  const vs = Float64Array.from({ length: 300 }, (_, i) => i * 0.5);
  new DataView(vs.buffer).setBigUint64(8 * 130, 0x7ff0000000000002n, true);
  head.append(labelsFromRecord({ __name__: 'x', job: 'floats' }), ts, vs, emptyAppendStats());
  head.appendHistograms(
    labelsFromRecord({ __name__: 'x', job: 'hist' }),
    [
      {
        timestamp: 5000,
        float: true,
        histogram: {
          schema: 0,
          zeroThreshold: 0,
          zeroCount: 0,
          count: 2,
          sum: 3,
          positiveSpans: [{ offset: 0, length: 1 }],
          negativeSpans: [],
          positiveBuckets: [2],
          negativeBuckets: [],
          counterResetHint: 'unknown',
        },
      },
    ],
    emptyAppendStats(),
  );
  const served: { chunks: number | undefined }[] = [];
  const querier = Object.assign(new TenantHeads(), {
    async select(p: Parameters<TenantHeads['select']>[0]) {
      assert.equal(p.chunks, true, 'the client accepts chunks');
      const out = await heads.select(p);
      for (const s of out) served.push({ chunks: s.chunks?.length });
      return out;
    },
  });
  const server = new IngesterServer({ querier, address: '127.0.0.1:0' });
  await server.start();
  const client = new IngesterClient({ id: 'ingester-zone-a-0', address: `127.0.0.1:${server.port}`, timeoutMs: 5000 });
  const bits = (a: Float64Array) => [...new BigUint64Array(Float64Array.from(a).buffer)];
  try {
    for (const [mint, maxt] of [
      [0, 400_000],
      [50_500, 250_000],
      [121_000, 121_000],
      [250_000, 400_000],
      [301_000, 400_000],
    ]) {
      served.length = 0;
      const m = [{ type: '=' as const, name: '__name__', value: 'x' }];
      const got = await client.select({ tenant: 't', matchers: m, mint, maxt });
      const want = await heads.select({ tenant: 't', matchers: m, mint, maxt });
      assert.deepEqual(
        got.map((s) => s.labels),
        want.map((s) => s.labels),
        `series in [${mint}, ${maxt}]`,
      );
      for (let i = 0; i < want.length; i++) {
        assert.deepEqual([...got[i].timestamps], [...want[i].timestamps], `timestamps in [${mint}, ${maxt}]`);
        assert.deepEqual(bits(got[i].values), bits(want[i].values), `value bits in [${mint}, ${maxt}]`);
        assert.deepEqual(got[i].histograms, want[i].histograms);
        assert.equal(got[i].chunks, undefined, 'chunks never reach the engine');
      }
      if (mint === 0) assert.deepEqual(served, [{ chunks: 3 }, { chunks: undefined }], 'floats as 3 chunks, the histogram series as samples');
    }
  } finally {
    client.close();
    await server.stop();
  }
});
