// Per-tenant limits on the push path over HTTP (fastify inject) with a fake
// Kafka writer: rate limit (429, nothing written), live overrides, label,
// grace-period and metadata limits (400, valid data still written), exemplars
// off, record splitting by size, credentials (401, nothing written), 413.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PartitionRecord } from '@strata/kafka';
import { Registry } from 'prom-client';
import type { Label } from '@strata/model';
import {
  compressBody,
  decodeRecordValue,
  encodeHistogram,
  encodeWriteRequest,
  encodeWriteRequestV2,
  ParsedSeries,
  type DecodedHistogram,
  type SeriesInput,
  type WriteRequestInput,
} from '@strata/remote-write';
import { encodeExportRequest, encodeExportRequestJson } from '@strata/otlp';
import { DEFAULT_LIMITS, Overrides, tenantOverridesSchema, type RuntimeConfig } from '@strata/limits';
import { TokensAuthenticator, createHttpServer, createLogger, tokensFileSchema } from '@strata/service';
import { Distributor, registerPushRoutes, type RecordWriter } from './index.ts';

const l = (name: string, value: string): Label => ({ name, value });
const NOW = 1_800_000_000_000;
const MIN = 60_000;

class FakeWriter implements RecordWriter {
  calls: { tenant: string; records: PartitionRecord[] }[] = [];
  async write(tenant: string, records: PartitionRecord[]): Promise<void> {
    this.calls.push({ tenant, records });
  }
  async partitionCount(): Promise<number> {
    return 2;
  }
  get records() {
    return this.calls.flatMap((c) => c.records);
  }
  decoded() {
    return this.records.map((r) => decodeRecordValue(r.value, r.format));
  }
  seriesNames(): string[] {
    return this.decoded()
      .flatMap((d) => d.timeseries)
      .map((s) => s.labels.map((x) => `${x.name}=${x.value}`).join(','))
      .sort();
  }
}

async function server(
  opts: {
    rc?: () => RuntimeConfig;
    maxRecordSizeBytes?: number;
    symbolizeRecords?: boolean;
    auth?: TokensAuthenticator;
    multitenancy?: boolean;
    now?: () => number;
    maxSeriesPerRequest?: number;
  } = {},
) {
  const writer = new FakeWriter();
  const logger = createLogger('test', 'silent');
  const registry = new Registry();
  const limits = new Overrides({ defaults: DEFAULT_LIMITS, runtimeConfig: opts.rc });
  const distributor = new Distributor({
    writer,
    maxRecvMsgSize: 1 << 20,
    logger,
    registry,
    limits,
    maxRecordSizeBytes: opts.maxRecordSizeBytes,
    symbolizeRecords: opts.symbolizeRecords,
    maxSeriesPerRequest: opts.maxSeriesPerRequest,
    now: opts.now ?? (() => NOW),
  });
  const app = createHttpServer({ logger, registry, readiness: { notReadyReason: () => undefined } });
  registerPushRoutes(app, { distributor, multitenancyEnabled: opts.multitenancy ?? true, logger, registry, maxBodyBytes: 1 << 20, auth: opts.auth });
  await app.ready();
  const push = (req: WriteRequestInput, headers: Record<string, string> = {}, tenant = 'team-a') =>
    app.inject({
      method: 'POST',
      url: '/api/v1/push',
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-scope-orgid': tenant, ...headers },
      payload: compressBody(encodeWriteRequest(req)),
    });
  return { app, writer, registry, push };
}

function series(n: number, samples: number, at = NOW - MIN, name = 'm'): SeriesInput[] {
  return Array.from({ length: n }, (_, i) => ({
    labels: [l('__name__', name), l('i', String(i))],
    samples: Array.from({ length: samples }, (_, k) => ({ value: k, timestamp: at + k * 1000 })),
  }));
}

async function counter(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const m = await registry.getSingleMetric(name)?.get();
  const v = m?.values.find((x) => Object.entries(labels).every(([k, want]) => x.labels[k] === want));
  return v?.value ?? 0;
}

test('over the ingestion rate: 429 naming the limit and what to do, nothing written; a raised override applies to the next push', async () => {
  let rc: RuntimeConfig = { overrides: { 'team-a': { ingestion_rate: 10, ingestion_burst_size: 100 } } };
  const { writer, registry, push } = await server({ rc: () => rc });
  assert.equal((await push({ timeseries: series(6, 10) })).statusCode, 200, '60 of the 100 burst');
  const writes = writer.calls.length;
  const res = await push({ timeseries: series(6, 10) });
  assert.equal(res.statusCode, 429);
  assert.match(
    res.body,
    /^the request has been rejected because tenant "team-a" exceeded its ingestion rate limit of 10 samples\/s with a burst of 100 .*raise ingestion_rate \/ ingestion_burst_size/,
  );
  assert.equal(res.body.trim().split('\n').length, 1, 'one line');
  assert.equal(res.headers['retry-after'], '6', '60 samples at 10/s fit again after 6s');
  assert.equal(writer.calls.length, writes, 'nothing written');
  assert.equal(await counter(registry, 'strata_distributor_discarded_samples_total', { tenant: 'team-a', reason: 'err-strata-ingestion-rate-limited' }), 60);

  const tooBig = await push({ timeseries: series(20, 10) });
  assert.equal(tooBig.statusCode, 429);
  assert.match(tooBig.body, /its 200 samples, exemplars and metadata exceed tenant "team-a"'s ingestion burst size of 100, so it can never be accepted/);

  assert.equal((await push({ timeseries: series(6, 10) }, {}, 'team-b')).statusCode, 200, 'other tenants have their own bucket (defaults)');

  rc = { overrides: { 'team-a': { ingestion_rate: 100_000, ingestion_burst_size: 1_000_000 } } };
  assert.equal((await push({ timeseries: series(20, 10) })).statusCode, 200, 'the raised limit applies without a restart');
});

test('exemplars and metadata count against the rate, as in Mimir', async () => {
  const rc: RuntimeConfig = { overrides: { 'team-a': { ingestion_rate: 1, ingestion_burst_size: 3 } } };
  const { push } = await server({ rc: () => rc });
  const one: SeriesInput = {
    labels: [l('__name__', 'm')],
    samples: [{ value: 1, timestamp: NOW }],
    exemplars: [{ labels: [l('trace_id', 'a')], value: 1, timestamp: NOW }],
  };
  const res = await push({
    timeseries: [one],
    metadata: [
      { type: 'gauge', metricFamilyName: 'm', help: 'h', unit: '' },
      { type: 'gauge', metricFamilyName: 'n', help: 'h', unit: '' },
    ],
  });
  assert.equal(res.statusCode, 429, '1 sample + 1 exemplar + 2 metadata = 4 > burst 3');
});

test('label limits come from the tenant overrides: 400 for the first bad series, the valid ones are written', async () => {
  const rc: RuntimeConfig = { overrides: { 'team-a': { max_label_names_per_series: 3, max_label_value_length: 5 } } };
  const { writer, push } = await server({ rc: () => rc });
  const res = await push({
    timeseries: [
      { labels: [l('__name__', 'ok'), l('a', '1')], samples: [{ value: 1, timestamp: NOW }] },
      { labels: [l('__name__', 'many'), l('a', '1'), l('b', '2'), l('c', '3')], samples: [{ value: 1, timestamp: NOW }] },
      { labels: [l('__name__', 'long'), l('a', '123456')], samples: [{ value: 1, timestamp: NOW }] },
    ],
  });
  assert.equal(res.statusCode, 400);
  assert.match(res.body, /4 labels, above the limit of 3 .*\(2 of 3 series rejected, 2 samples\)/);
  assert.deepEqual(writer.seriesNames(), ['__name__=ok,a=1']);
  assert.equal(
    (
      await push(
        { timeseries: [{ labels: [l('__name__', 'many'), l('a', '1'), l('b', '2'), l('c', '3')], samples: [{ value: 1, timestamp: NOW }] }] },
        {},
        'team-b',
      )
    ).statusCode,
    200,
  );
});

test('sample timestamps: beyond the creation grace period or (when set) older than the past grace period + OOO window are 400, counted by reason', async () => {
  let rc: RuntimeConfig = {};
  const { writer, registry, push } = await server({ rc: () => rc });
  const at = (name: string, t: number): SeriesInput => ({
    labels: [l('__name__', name)],
    samples: [
      { value: 1, timestamp: NOW - MIN },
      { value: 2, timestamp: t },
    ],
  });

  let res = await push({ timeseries: [at('future', NOW + 11 * MIN), at('soon', NOW + 9 * MIN), at('old', NOW - 1000 * MIN)] });
  assert.equal(res.statusCode, 400);
  assert.match(
    res.body,
    /^received a sample whose timestamp 1800000660000 \(2027-01-15T08:11:00\.000Z\) is too far in the future \(more than 10m ahead of the server's clock\) in series \{__name__="future"\} .*-validation\.create-grace-period/,
  );
  assert.deepEqual(writer.seriesNames(), ['__name__=old', '__name__=soon'], 'past grace period 0 = off; the whole bad series is rejected');
  assert.equal(await counter(registry, 'strata_distributor_discarded_samples_total', { reason: 'err-strata-sample-too-far-in-future' }), 2);

  rc = { overrides: { 'team-a': { past_grace_period: 3_600_000, out_of_order_time_window: 1_800_000, creation_grace_period: 0 } } };
  writer.calls = [];
  res = await push({ timeseries: [at('old', NOW - 91 * MIN), at('oldish', NOW - 89 * MIN), at('future', NOW + 1)] });
  assert.equal(res.statusCode, 400);
  assert.match(
    res.body,
    /^received a sample whose timestamp \d+ \(.*\) is too far in the past \(older than 1h30m\) in series \{__name__="old"\} .*-validation\.past-grace-period\) \(2 of 3 series rejected, 4 samples\)$/m,
  );
  assert.deepEqual(writer.seriesNames(), ['__name__=oldish'], 'older than 1h + 30m OOO is rejected');
  res = await push({ timeseries: [at('future', NOW + 1)] });
  assert.match(res.body, /is too far in the future \(more than 0s ahead/);
});

test('metadata: name or unit over max_metadata_length is dropped with a 400, a long HELP is truncated, series are still written', async () => {
  const rc: RuntimeConfig = { overrides: { 'team-a': { max_metadata_length: 10 } } };
  const { writer, push } = await server({ rc: () => rc });
  const res = await push({
    timeseries: series(1, 1),
    metadata: [
      { type: 'counter', metricFamilyName: 'a_very_long_name', help: 'x', unit: '' },
      { type: 'gauge', metricFamilyName: 'short', help: 'héllo wörld, long help', unit: '' },
      { type: 'gauge', metricFamilyName: 'unit', help: '', unit: 'kilobytes_per_s' },
    ],
  });
  assert.equal(res.statusCode, 400);
  assert.match(
    res.body,
    /^received metric metadata whose metric family name is 16 bytes, above the limit of 10 .*-validation\.max-metadata-length\) \(2 of 3 metadata rejected\)$/m,
  );
  const metadata = writer.decoded().flatMap((d) => d.metadata);
  assert.deepEqual(
    metadata.map((m) => [m.metricFamilyName, m.help]),
    [['short', 'héllo wö']],
    'HELP cut at 10 bytes on a character boundary',
  );
  assert.equal(writer.seriesNames().length, 1);
});

test('max_global_exemplars_per_user 0: exemplars are dropped before Kafka and not counted as written', async () => {
  const rc: RuntimeConfig = { overrides: { 'team-a': { max_global_exemplars_per_user: 0 } } };
  const { app, writer, registry, push } = await server({ rc: () => rc });
  const withExemplar: SeriesInput = {
    labels: [l('__name__', 'm')],
    samples: [{ value: 1, timestamp: NOW }],
    exemplars: [{ labels: [l('trace_id', 'a')], value: 1, timestamp: NOW }],
  };
  assert.equal((await push({ timeseries: [withExemplar] })).statusCode, 200);
  const [s] = writer.decoded().flatMap((d) => d.timeseries);
  assert.deepEqual(s.exemplars, []);
  assert.deepEqual([...s.values], [1], 'samples kept');
  assert.equal(await counter(registry, 'strata_distributor_discarded_exemplars_total', { reason: 'err-strata-exemplars-disabled' }), 1);
  const v2 = await app.inject({
    method: 'POST',
    url: '/api/v1/push',
    headers: { 'content-type': 'application/x-protobuf;proto=io.prometheus.write.v2.Request', 'content-encoding': 'snappy', 'x-scope-orgid': 'team-a' },
    payload: compressBody(encodeWriteRequestV2({ timeseries: [withExemplar] })),
  });
  assert.equal(v2.statusCode, 204);
  assert.equal(v2.headers['x-prometheus-remote-write-exemplars-written'], '0');
  assert.equal(v2.headers['x-prometheus-remote-write-samples-written'], '1');
  writer.calls = [];
  assert.equal((await push({ timeseries: [withExemplar] }, {}, 'team-b')).statusCode, 200);
  assert.equal(writer.decoded()[0].timeseries[0].exemplars.length, 1, 'other tenants keep theirs');
});

test('record size: a partition above the max record size is split by series into several records, each within the limit', async () => {
  const max = 2000;
  const { writer, push } = await server({ maxRecordSizeBytes: max });
  const input = series(200, 5);
  const metadata = [{ type: 'gauge' as const, metricFamilyName: 'm', help: 'h', unit: '' }];
  assert.equal((await push({ timeseries: input, metadata })).statusCode, 200);
  assert.equal(writer.calls.length, 1, 'one write call for the whole push (acks=all for all of it)');
  const records = writer.records;
  for (const r of records) assert.ok(r.value.length <= max, `record of ${r.value.length} bytes`);
  for (const p of [0, 1]) assert.ok(records.filter((r) => r.partition === p).length > 1, `partition ${p} split`);
  const decoded = writer.decoded();
  assert.equal(decoded.flatMap((d) => d.timeseries).length, 200, 'every series exactly once');
  assert.equal(new Set(writer.seriesNames()).size, 200);
  assert.deepEqual(
    decoded.flatMap((d) => d.metadata).map((m) => m.metricFamilyName),
    ['m'],
  );
  assert.deepEqual([...new Set(records.filter((r) => decodeRecordValue(r.value, r.format).metadata.length > 0).map((r) => r.partition))], [0]);
});

test('record format: float series go as format 3 (symbolized); a record with exemplars or metadata, or version 2 set, as a 1.0 WriteRequest', async () => {
  const rc: RuntimeConfig = { overrides: { 'team-a': { max_global_exemplars_per_user: 10 } } };
  const { writer, push } = await server({ rc: () => rc });
  assert.equal((await push({ timeseries: series(20, 2) })).statusCode, 200);
  assert.deepEqual(
    writer.records.map((r) => r.format),
    ['symbolized', 'symbolized'],
    'both partitions',
  );
  const symbolizedBytes = writer.records.reduce((n, r) => n + r.value.length, 0);
  assert.deepEqual(
    writer.seriesNames(),
    series(20, 2)
      .map((s) => s.labels.map((x) => `${x.name}=${x.value}`).join(','))
      .sort(),
  );

  writer.calls.length = 0;
  const withExemplar = series(20, 2);
  withExemplar[0].exemplars = [{ labels: [l('trace_id', 'abc')], value: 1, timestamp: NOW - MIN }];
  assert.equal((await push({ timeseries: withExemplar, metadata: [{ type: 'gauge', metricFamilyName: 'm', help: 'h', unit: '' }] })).statusCode, 200);
  const byPartition = new Map(writer.records.map((r) => [r.partition, r.format]));
  assert.equal(byPartition.get(0), undefined, 'partition 0 carries the metadata: a 1.0 WriteRequest');
  assert.equal(
    writer
      .decoded()
      .flatMap((d) => d.timeseries)
      .filter((s) => s.exemplars.length > 0).length,
    1,
  );

  const v2 = await server({ symbolizeRecords: false });
  assert.equal((await v2.push({ timeseries: series(20, 2) })).statusCode, 200);
  assert.ok(v2.writer.records.every((r) => r.format === undefined));
  const plainBytes = v2.writer.records.reduce((n, r) => n + r.value.length, 0);
  assert.ok(symbolizedBytes < plainBytes, `format 3 ${symbolizedBytes} B < format 2 ${plainBytes} B`);
});

test('record size: one series larger than a record is 400 naming the limit; the rest is written', async () => {
  const { writer, push } = await server({ maxRecordSizeBytes: 2000 });
  const res = await push({ timeseries: [...series(3, 2), ...series(1, 500, NOW - 100 * MIN, 'huge')] });
  assert.equal(res.statusCode, 400);
  assert.match(
    res.body,
    /^received series \{__name__="huge", i="0"\} of \d+ bytes \(500 samples\), larger than the largest Kafka record \(2000 bytes, -ingest-storage\.kafka\.producer-max-record-size-bytes\)/,
  );
  assert.equal(writer.seriesNames().length, 3);
});

test('credentials on push: missing or wrong → 401 with a reason and a challenge, nothing written; right → written', async () => {
  const auth = new TokensAuthenticator(tokensFileSchema.parse({ tenants: { 'team-a': { bearer_token: 'tok' } } }));
  const { app, writer, push } = await server({ auth });
  for (const headers of [{}, { authorization: 'Bearer nope' }] as Record<string, string>[]) {
    const res = await push({ timeseries: series(1, 1) }, headers);
    assert.equal(res.statusCode, 401);
    assert.match(res.body, /^(no credentials: tenant "team-a" requires|wrong credentials for tenant "team-a")/);
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="strata", Basic realm="strata"');
  }
  const otlp = await app.inject({
    method: 'POST',
    url: '/otlp/v1/metrics',
    headers: { 'content-type': 'application/x-protobuf', 'x-scope-orgid': 'team-a', authorization: 'Bearer nope' },
    payload: encodeExportRequest({ resourceMetrics: [] }),
  });
  assert.equal(otlp.statusCode, 401);
  assert.equal(writer.calls.length, 0, 'nothing written');
  assert.equal((await push({ timeseries: series(1, 1) }, { authorization: 'Bearer tok' })).statusCode, 200);
  assert.equal(writer.calls.length, 1);
});

test('bodies above -distributor.max-recv-msg-size are 413, compressed or decompressed', async () => {
  const { app, writer } = await server();
  const big = await app.inject({
    method: 'POST',
    url: '/api/v1/push',
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-scope-orgid': 'team-a' },
    payload: Buffer.alloc((1 << 20) + 1),
  });
  assert.equal(big.statusCode, 413);
  // Compresses far below the limit, decompresses above it.
  const bomb = compressBody(
    encodeWriteRequest({ timeseries: [{ labels: [l('__name__', 'm'), l('v', 'x'.repeat(1 << 20))], samples: [{ value: 1, timestamp: NOW }] }] }),
  );
  assert.ok(bomb.length < 1 << 20);
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/push',
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-scope-orgid': 'team-a' },
    payload: bomb,
  });
  assert.equal(res.statusCode, 413, res.body);
  assert.equal(writer.calls.length, 0);
});

test('more series than -distributor.max-series-per-request: 413 before decoding, nothing written; OTLP counts the series its points become', async () => {
  const { app, writer, push } = await server({ maxSeriesPerRequest: 5 });
  assert.equal((await push({ timeseries: series(5, 2) })).statusCode, 200, 'at the limit');
  const over = await push({ timeseries: series(6, 1) });
  assert.equal(over.statusCode, 413);
  assert.match(
    over.body,
    /^the request holds 6 series, more than the 5 a push may carry \(err-strata-too-many-series-per-request\).*-distributor\.max-series-per-request\n$/,
  );
  // A million empty TimeSeries (2 bytes each) are refused without building a million objects.
  const empty = await app.inject({
    method: 'POST',
    url: '/api/v1/push',
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-scope-orgid': 'team-a' },
    payload: compressBody(Buffer.alloc(2 << 19, Buffer.from([0x0a, 0x00]))),
  });
  assert.equal(empty.statusCode, 413);
  assert.match(empty.body, /holds 524288 series/);
  const v2 = await app.inject({
    method: 'POST',
    url: '/api/v1/push',
    headers: { 'content-type': 'application/x-protobuf;proto=io.prometheus.write.v2.Request', 'content-encoding': 'snappy', 'x-scope-orgid': 'team-a' },
    payload: compressBody(encodeWriteRequestV2({ timeseries: series(6, 1) })),
  });
  assert.equal(v2.statusCode, 413);
  assert.equal(v2.headers['x-prometheus-remote-write-samples-written'], '0');
  // One histogram point with 4 buckets is 6 series (buckets, _sum, _count): over 5, in both encodings.
  const hist = {
    resourceMetrics: [
      {
        scopeMetrics: [
          {
            metrics: [
              {
                name: 'h',
                histogram: {
                  aggregationTemporality: 2 as const,
                  dataPoints: [{ timeUnixNano: BigInt(NOW) * 1_000_000n, count: 4, sum: 1, bucketCounts: [1, 1, 1, 1], explicitBounds: [1, 2, 3] }],
                },
              },
            ],
          },
        ],
      },
    ],
  };
  for (const [type, payload] of [
    ['application/x-protobuf', encodeExportRequest(hist)],
    ['application/json', encodeExportRequestJson(hist)],
  ] as const) {
    const res = await app.inject({ method: 'POST', url: '/otlp/v1/metrics', headers: { 'content-type': type, 'x-scope-orgid': 'team-a' }, payload });
    assert.equal(res.statusCode, 413, `${type}: ${res.body}`);
  }
  assert.equal(writer.calls.length, 1, 'only the push at the limit was written');
});

test('native histograms: max_native_histogram_buckets lowers the schema until they fit; native_histograms_ingestion_enabled: false drops them (counted), the floats written', async () => {
  const rc: RuntimeConfig = {
    overrides: { 'team-a': { max_native_histogram_buckets: 2 }, 'team-b': { native_histograms_ingestion_enabled: false } },
  };
  const { writer, registry, push } = await server({ rc: () => rc });
  // Schema 2, buckets at indexes 1..4 with 1, 2, 3, 4: at schema 1 (idx -> ((idx - 1) >> 1) + 1) they are (1 + 2), (3 + 4) at 1..2.
  const h: DecodedHistogram = {
    timestamp: NOW - MIN,
    float: false,
    histogram: {
      counterResetHint: 'unknown',
      schema: 2,
      zeroThreshold: 0.001,
      zeroCount: 0,
      count: 10,
      sum: 20,
      positiveSpans: [{ offset: 1, length: 4 }],
      negativeSpans: [],
      positiveBuckets: [1, 2, 3, 4],
      negativeBuckets: [],
    },
  };
  const req: WriteRequestInput = { timeseries: [{ labels: [l('__name__', 'h')], samples: [], histograms: [encodeHistogram(h)] }, ...series(1, 1)] };
  const a = await push(req);
  assert.equal(a.statusCode, 200, a.body);
  const stored = writer
    .decoded()
    .flatMap((d) => d.timeseries)
    .find((s) => s.labels[0].value === 'h');
  assert.ok(stored);
  assert.deepEqual(
    stored.histogramSamples.map((x) => [x.histogram.schema, x.histogram.positiveSpans, x.histogram.positiveBuckets, x.histogram.count]),
    [[1, [{ offset: 1, length: 2 }], [3, 7], 10]],
  );

  writer.calls.length = 0;
  const b = await push(req, {}, 'team-b');
  assert.equal(b.statusCode, 200, b.body);
  assert.deepEqual(writer.seriesNames(), ['__name__=m,i=0'], 'the histogram-only series is not written');
  assert.equal(await counter(registry, 'strata_distributor_discarded_samples_total', { tenant: 'team-b', reason: 'err-strata-native-histograms-disabled' }), 1);
  assert.equal(await counter(registry, 'strata_distributor_received_samples_total', { tenant: 'team-a' }), 2, 'histograms count as received samples');
});

test("a tenant's metric_relabel_configs and drop_labels apply before Kafka; dropped series are counted, not refused; other tenants are untouched", async () => {
  const rc: RuntimeConfig = {
    overrides: {
      'team-a': tenantOverridesSchema.parse({
        metric_relabel_configs: [
          { action: 'drop', source_labels: ['__name__'], regex: 'go_.*' },
          { source_labels: ['i'], regex: '(.)', target_label: 'digit', replacement: 'd$1' },
        ],
        drop_labels: ['pod'],
      }),
    },
  };
  const { writer, registry, push } = await server({ rc: () => rc });
  const req = (name: string): WriteRequestInput => ({
    timeseries: [0, 1].map((i) => ({ labels: [l('__name__', name), l('i', String(i)), l('pod', 'p-1')], samples: [{ value: i, timestamp: NOW - MIN }] })),
  });
  for (const tenant of ['team-a', 'team-b']) {
    for (const name of ['go_goroutines', 'up']) assert.equal((await push(req(name), {}, tenant)).statusCode, 200);
  }
  const byTenant = (t: string) =>
    writer.calls.filter((c) => c.tenant === t).flatMap((c) => c.records.flatMap((r) => decodeRecordValue(r.value, r.format).timeseries.map((s) => s.labels)));
  assert.deepEqual(
    byTenant('team-a').sort((a, b) => a[2].value.localeCompare(b[2].value)),
    [
      [l('__name__', 'up'), l('digit', 'd0'), l('i', '0')],
      [l('__name__', 'up'), l('digit', 'd1'), l('i', '1')],
    ],
  );
  assert.equal(byTenant('team-b').length, 4, 'team-b has no rules');
  assert.ok(byTenant('team-b').every((ls) => ls.some((x) => x.name === 'pod')));
  assert.equal(await counter(registry, 'strata_distributor_relabel_dropped_series_total', { tenant: 'team-a' }), 2);
  assert.equal(await counter(registry, 'strata_distributor_relabel_dropped_series_total', { tenant: 'team-b' }), 0);
});

test("known series are routed by their label bytes: a tenant without relabel rules never decodes a known series' labels", async () => {
  const { push, writer } = await server();
  const proto = Object.getPrototypeOf(ParsedSeries.prototype) as object;
  const getter = Object.getOwnPropertyDescriptor(proto, 'labels')!;
  let decoded = 0;
  Object.defineProperty(proto, 'labels', {
    ...getter,
    get() {
      decoded++;
      return getter.get!.call(this);
    },
  });
  try {
    assert.equal((await push({ timeseries: series(50, 1) })).statusCode, 200);
    decoded = 0;
    assert.equal((await push({ timeseries: series(50, 1, NOW - MIN + 1000) })).statusCode, 200);
    assert.equal(decoded, 0, 'the second push of the same 50 series decoded labels');
    assert.equal(writer.seriesNames().length, 100);
  } finally {
    Object.defineProperty(proto, 'labels', getter);
  }
});
