// The rest of the Prometheus API in Grafana's shapes, per-query limits and
// timeouts, and X-Read-Consistency: strong over a PartitionQuerier.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import type { ExemplarParams, ExemplarSeries, MetadataParams, MetricMetadataEntry } from '@strata/model';
import { labelsFromRecord } from '@strata/model';
import { Engine } from '@strata/promql';
import { createHttpServer, createLogger } from '@strata/service';
import type { IngesterReplica, PrometheusApiOptions } from './index.ts';
import { PartitionQuerier, StoreAndIngestersQuerier, StrongReads, registerPrometheusApi } from './index.ts';
import { MemoryQuerier } from '@strata/model/testing';

const logger = createLogger('test', 'silent');

/** A head with exemplars and metadata bolted on, as the ingester head will serve them. */
class RichHeads extends MemoryQuerier {
  async exemplars(p: ExemplarParams): Promise<ExemplarSeries[]> {
    if (p.tenant !== 't1') return [];
    return [
      {
        seriesLabels: labelsFromRecord({ __name__: 'req_total', job: 'api' }),
        exemplars: [{ labels: labelsFromRecord({ trace_id: 'abc' }), value: 1.5, timestamp: 20_500 }],
      },
    ].filter((s) => p.mint <= 20_500 && p.maxt >= 20_500 && p.matcherSets.some((ms) => ms.some((m) => m.value === 'req_total')));
  }
  async metadata(p: MetadataParams): Promise<MetricMetadataEntry[]> {
    if (p.tenant !== 't1') return [];
    return [
      { metricFamilyName: 'req_total', type: 'counter', help: 'Requests.', unit: '' },
      { metricFamilyName: 'up', type: 'gauge', help: 'Up.', unit: '' },
      { metricFamilyName: 'up', type: 'gauge', help: 'Up, again.', unit: '' },
    ];
  }
}

function heads(): RichHeads {
  const h = new RichHeads();
  const ts = new Float64Array([0, 15_000, 30_000, 45_000, 60_000]);
  for (const inst of ['a', 'b', 'c']) {
    h.append('t1', labelsFromRecord({ __name__: 'req_total', job: 'api', instance: inst }), ts, [1, 2, 3, 4, 5]);
  }
  return h;
}

function server(
  extra: Partial<PrometheusApiOptions> & { querier?: PrometheusApiOptions['querier'] } = {},
  engineOpts: Partial<ConstructorParameters<typeof Engine>[0]> = {},
) {
  const querier = extra.querier ?? heads();
  const registry = new Registry();
  const app = createHttpServer({ logger, registry, readiness: { notReadyReason: () => undefined } });
  registerPrometheusApi(app, {
    querier,
    engine: new Engine({ querier, ...engineOpts }),
    multitenancyEnabled: true,
    logger,
    registry,
    prefixes: ['/api/v1', '/prometheus/api/v1'],
    ...extra,
  });
  return app;
}

const T1 = { 'x-scope-orgid': 't1' };

test('buildinfo, format_query, metadata and query_exemplars answer in Prometheus shapes', async () => {
  const app = server();
  const info = await app.inject({ url: '/prometheus/api/v1/status/buildinfo', headers: T1 });
  assert.equal(info.statusCode, 200);
  assert.deepEqual(Object.keys(info.json().data).sort(), ['branch', 'buildDate', 'buildUser', 'goVersion', 'revision', 'version']);

  const fmt = await app.inject({
    method: 'POST',
    url: '/api/v1/format_query',
    payload: 'query=sum(rate(x[5m]))by(job)',
    headers: { ...T1, 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.deepEqual(fmt.json(), { status: 'success', data: 'sum by (job) (rate(x[5m]))' });
  const badFmt = await app.inject({ url: '/api/v1/format_query?query=sum(', headers: T1 });
  assert.equal(badFmt.statusCode, 400);

  const meta = await app.inject({ url: '/api/v1/metadata', headers: T1 });
  assert.deepEqual(meta.json().data, {
    req_total: [{ type: 'counter', help: 'Requests.', unit: '' }],
    up: [
      { type: 'gauge', help: 'Up.', unit: '' },
      { type: 'gauge', help: 'Up, again.', unit: '' },
    ],
  });
  const limited = await app.inject({ url: '/api/v1/metadata?limit=1&limit_per_metric=1', headers: T1 });
  assert.deepEqual(Object.keys(limited.json().data), ['req_total']);
  const one = await app.inject({ url: '/api/v1/metadata?metric=up&limit_per_metric=1', headers: T1 });
  assert.deepEqual(one.json().data, { up: [{ type: 'gauge', help: 'Up.', unit: '' }] });
  const other = await app.inject({ url: '/api/v1/metadata', headers: { 'x-scope-orgid': 't2' } });
  assert.deepEqual(other.json().data, {});

  const ex = await app.inject({ url: '/api/v1/query_exemplars?query=rate(req_total[5m])&start=0&end=60', headers: T1 });
  assert.equal(ex.statusCode, 200, ex.body);
  assert.deepEqual(ex.json().data, [
    { seriesLabels: { __name__: 'req_total', job: 'api' }, exemplars: [{ labels: { trace_id: 'abc' }, value: '1.5', timestamp: 20.5 }] },
  ]);
  const none = await app.inject({ url: '/api/v1/query_exemplars?query=up&start=0&end=60', headers: T1 });
  assert.deepEqual(none.json().data, []);
});

test('step as duration or float seconds; annotations ride in the envelope', async () => {
  const app = server();
  for (const step of ['15s', '15', '15.0']) {
    const r = await app.inject({ url: `/api/v1/query_range?query=req_total{instance="a"}&start=0&end=60&step=${step}`, headers: T1 });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.json().data.result[0].values.length, 5);
  }
  const r = await app.inject({ url: '/api/v1/query?query=rate(up_gauge[1m]) or histogram_quantile(2, req_total)&time=60', headers: T1 });
  assert.equal(r.statusCode, 200, r.body);
  assert.match(r.json().warnings[0], /quantile value should be between 0 and 1/);
});

test('per-query limits on fetched series, samples, estimated memory and chunk bytes fail with 422 and say which flag to raise', async () => {
  // topk: an aggregation the engine cannot answer shard by shard (sum would be).
  const series = await server({}, { maxFetchedSeries: 2 }).inject({ url: '/api/v1/query?query=topk(1,req_total)&time=60', headers: T1 });
  assert.equal(series.statusCode, 422);
  assert.equal(series.json().errorType, 'execution');
  assert.match(series.json().error, /maximum number of series \(limit: 2 series\).*-querier.max-fetched-series-per-query/);
  const samples = await server({}, { maxSamples: 10 }).inject({ url: '/api/v1/query_range?query=req_total&start=0&end=60&step=1', headers: T1 });
  assert.equal(samples.statusCode, 422);
  assert.equal(samples.json().errorType, 'execution');
  assert.match(samples.json().error, /too many samples into memory in query execution \(limit: 10 samples\).*-querier.max-samples/);
  const memory = await server({}, { maxEstimatedMemoryBytes: 1000 }).inject({ url: '/api/v1/query_range?query=req_total&start=0&end=60&step=1', headers: T1 });
  assert.equal(memory.statusCode, 422);
  assert.equal(memory.json().errorType, 'execution');
  assert.match(memory.json().error, /maximum estimated memory per query \(limit: 1000 bytes\).*-querier.max-estimated-memory-per-query/);
  const chunks = await server({}, { maxFetchedChunkBytes: 10 }).inject({ url: '/api/v1/query_range?query=req_total&start=0&end=60&step=1', headers: T1 });
  assert.equal(chunks.statusCode, 422);
  assert.equal(chunks.json().errorType, 'execution');
  assert.match(chunks.json().error, /aggregated chunks size limit \(limit: 10 bytes\).*-querier.max-fetched-chunk-bytes-per-query/);
});

test('a query over its timeout answers 503 timeout', async () => {
  const h = heads();
  h.delayMs = 300;
  const app = server({ querier: h });
  const r = await app.inject({ url: '/api/v1/query?query=req_total&time=60&timeout=50ms', headers: T1 });
  assert.equal(r.statusCode, 503, r.body);
  assert.equal(r.json().errorType, 'timeout');
});

test("X-Read-Consistency: strong waits for every partition's last produced offset before reading", async () => {
  const waits: string[] = [];
  const replica = (id: string, zone: string, partition: number, consumed: bigint): IngesterReplica => ({
    id,
    zone,
    partition,
    querier: heads(),
    waiter: {
      async waitForOffset(offset, timeoutMs) {
        waits.push(`${id}>=${offset}`);
        if (consumed >= offset) return consumed;
        await new Promise((r) => setTimeout(r, Math.min(timeoutMs, 20)));
        throw Object.assign(new Error(`${id}: offset ${offset} not consumed`), { name: 'TimeoutError' });
      },
    },
  });
  const pq = new PartitionQuerier({
    replicas: [replica('ingester-zone-a-0', 'a', 0, 7n), replica('ingester-zone-a-1', 'a', 1, 2n), replica('ingester-zone-b-1', 'b', 1, 9n)],
    preferredZone: 'a',
    logger,
  });
  const strongReads = new StrongReads({
    offsets: {
      fetch: async () =>
        new Map([
          [0, 7n],
          [1, 9n],
        ]),
    },
    querier: pq,
    maxWaitMs: 1000,
  });
  const app = server({ querier: pq, strongReads });
  const r = await app.inject({ url: '/api/v1/query?query=count(req_total)&time=60', headers: { ...T1, 'x-read-consistency': 'strong' } });
  assert.equal(r.statusCode, 200, r.body);
  // Partition 1's zone-a ingester is behind: the query reads zone b there, and each ingester waited once.
  assert.deepEqual(waits.sort(), ['ingester-zone-a-0>=7', 'ingester-zone-a-1>=9', 'ingester-zone-b-1>=9']);
  waits.length = 0;
  const eventual = await app.inject({ url: '/api/v1/query?query=count(req_total)&time=60', headers: T1 });
  assert.equal(eventual.statusCode, 200);
  assert.deepEqual(waits, []);

  const bad = await app.inject({ url: '/api/v1/query?query=up', headers: { ...T1, 'x-read-consistency': 'linearizable' } });
  assert.equal(bad.statusCode, 400);
  const unconfigured = await server().inject({ url: '/api/v1/query?query=up', headers: { ...T1, 'x-read-consistency': 'strong' } });
  assert.equal(unconfigured.statusCode, 400);
  assert.match(unconfigured.json().error, /-ingest-storage.kafka.address/);

  // With the bucket joined in, a strong read sees the blocks' series as an eventual read does.
  const store = new MemoryQuerier();
  store.append(
    't1',
    labelsFromRecord({ __name__: 'req_total', job: 'api', instance: 'old' }),
    new Float64Array([0, 15_000, 30_000, 45_000, 60_000]),
    [1, 2, 3, 4, 5],
  );
  const blocks = new StoreAndIngestersQuerier({ ingesters: pq, store, queryIngestersWithinMs: 0, queryStoreAfterMs: 0 });
  const withBlocks = server({
    querier: blocks,
    strongReads: new StrongReads({
      offsets: {
        fetch: async () =>
          new Map([
            [0, 7n],
            [1, 9n],
          ]),
      },
      querier: pq,
      maxWaitMs: 1000,
      blocks,
    }),
  });
  for (const headers of [{ ...T1, 'x-read-consistency': 'strong' }, T1]) {
    const r = await withBlocks.inject({ url: '/api/v1/query?query=count(req_total)&time=60', headers });
    assert.equal(r.json().data.result[0].value[1], '4', `${JSON.stringify(headers)}: ${r.body}`);
  }

  const kafkaDown = new StrongReads({ offsets: { fetch: async () => Promise.reject(new Error('broker down')) }, querier: pq, maxWaitMs: 10 });
  const down = await server({ querier: pq, strongReads: kafkaDown }).inject({
    url: '/api/v1/query?query=up',
    headers: { ...T1, 'x-read-consistency': 'strong' },
  });
  assert.equal(down.statusCode, 503);
  assert.match(down.json().error, /broker down/);
});
