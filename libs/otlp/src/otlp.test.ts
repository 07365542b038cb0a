import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import protobuf from 'protobufjs';
import type { Label } from '@strata/model';
import { decodeWriteRequest, encodeWriteRequest, isStaleNaN, readHistogram, ProtoReader, validateHistogram } from '@strata/remote-write';
import {
  decodeContentEncoding,
  decodeExportRequest,
  decodeExportRequestBody,
  decodeExportRequestJson,
  encodeExportRequest,
  encodeExportRequestJson,
  encodeExportResponse,
  encodeStatus,
  OtlpError,
  otlpFormat,
  translateMetrics,
  type ExportRequestInput,
} from './index.ts';

const T = 1732950000000n * 1_000_000n + 123_456n; // ns, not on a millisecond boundary
const T_MS = 1732950000000;
const TRACE = '5b8efff798038103d269b633813fc60c';
const SPAN = 'eee19b7ec3c1b174';

function fixture(): ExportRequestInput {
  return {
    resourceMetrics: [
      {
        resource: {
          'service.name': 'checkout',
          'service.namespace': 'shop',
          'service.instance.id': 'pod-1',
          'host.name': 'node-7',
          'k8s.pod.uid': 123n,
          'big.int': -9007199254740993n,
          tags: ['a', 1n, true],
        },
        scopeMetrics: [
          {
            scope: { name: 'io.opentelemetry.test', version: '1.0' },
            metrics: [
              {
                name: 'process.memory.usage',
                unit: 'By',
                description: 'Memory in use.',
                gauge: {
                  dataPoints: [
                    { attributes: { state: 'used' }, timeUnixNano: T, value: 1024 },
                    { attributes: { state: 'used' }, timeUnixNano: T + 15_000_000_000n, value: 0, flags: 1 },
                    { attributes: { state: 'free', 'a.b': '1', a_b: '2' }, timeUnixNano: T, value: 7, asInt: true },
                  ],
                },
              },
              {
                name: 'http.server.requests',
                unit: '{request}',
                sum: {
                  aggregationTemporality: 2,
                  isMonotonic: true,
                  dataPoints: [
                    {
                      attributes: { 'http.method': 'GET', 'http.status_code': 200n },
                      startTimeUnixNano: T - 60_000_000_000n,
                      timeUnixNano: T,
                      value: 42,
                      exemplars: [{ value: 1, timeUnixNano: T - 1_000_000n, traceId: TRACE, spanId: SPAN, filteredAttributes: { user: 'u1' } }],
                    },
                  ],
                },
              },
              { name: 'queue.length', sum: { aggregationTemporality: 2, isMonotonic: false, dataPoints: [{ timeUnixNano: T, value: 3 }] } },
              {
                name: 'http.server.duration',
                unit: 'ms',
                histogram: {
                  aggregationTemporality: 2,
                  dataPoints: [
                    {
                      attributes: { route: '/cart' },
                      timeUnixNano: T,
                      count: 10,
                      sum: 123.5,
                      bucketCounts: [1, 2, 3, 4],
                      explicitBounds: [5, 10, 25],
                      exemplars: [
                        { value: 7, timeUnixNano: T, traceId: TRACE },
                        { value: 100, timeUnixNano: T, spanId: SPAN },
                      ],
                    },
                  ],
                },
              },
              {
                name: 'rpc.latency',
                unit: 's',
                summary: {
                  dataPoints: [
                    {
                      timeUnixNano: T,
                      count: 5,
                      sum: 2.5,
                      quantileValues: [
                        { quantile: 0.5, value: 0.3 },
                        { quantile: 0.99, value: 1.2 },
                      ],
                    },
                  ],
                },
              },
              {
                name: 'delta.requests',
                sum: {
                  aggregationTemporality: 1,
                  isMonotonic: true,
                  dataPoints: [
                    { timeUnixNano: T, value: 1 },
                    { timeUnixNano: T, value: 2 },
                  ],
                },
              },
              { name: 'exp.latency', exponentialHistogram: { aggregationTemporality: 2, dataPoints: [{ timeUnixNano: T, count: 3, scale: -2 }] } },
            ],
          },
        ],
      },
      { scopeMetrics: [{ metrics: [{ name: 'no.service', gauge: { dataPoints: [{ timeUnixNano: T, value: 1 }] } }] }] },
    ],
  };
}

const JOB = { job: 'shop/checkout', instance: 'pod-1' };

function series(t: ReturnType<typeof translateMetrics>): Record<string, string>[] {
  return t.timeseries.map((s) => Object.fromEntries(s.labels.map((l) => [l.name, l.value])));
}

function find(t: ReturnType<typeof translateMetrics>, labels: Record<string, string>) {
  const want = Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, value]): Label => ({ name, value }));
  const s = t.timeseries.find((s) => JSON.stringify(s.labels) === JSON.stringify(want));
  assert.ok(s, `no series ${JSON.stringify(labels)} in ${JSON.stringify(series(t))}`);
  return s;
}

test('protobuf and JSON decode the same request to the same model', () => {
  const input = fixture();
  const fromProto = decodeExportRequest(encodeExportRequest(input));
  const fromJson = decodeExportRequestJson(encodeExportRequestJson(input));
  assert.deepEqual(fromJson, fromProto);
  const rm = fromProto.resourceMetrics[0];
  assert.deepEqual(
    rm.resource.find((a) => a.key === 'k8s.pod.uid'),
    { key: 'k8s.pod.uid', value: '123' },
  );
  assert.deepEqual(
    rm.resource.find((a) => a.key === 'tags'),
    { key: 'tags', value: '["a",1,true]' },
  );
  assert.deepEqual(
    rm.resource.find((a) => a.key === 'big.int'),
    { key: 'big.int', value: '-9007199254740993' },
    'int64 attributes keep every digit',
  );
  assert.equal(rm.scopeMetrics[0].metrics[1].numberPoints[0].exemplars[0].traceId.length, 16);
  assert.equal(rm.scopeMetrics[0].metrics[6].exponentialPointCount, 1);
});

test('translation: gauges, counters with _total, histograms, summaries, job/instance, target_info, exemplars, stale markers', () => {
  const t = translateMetrics(decodeExportRequest(encodeExportRequest(fixture())));

  const used = find(t, { __name__: 'process_memory_usage_bytes', state: 'used', ...JOB });
  assert.deepEqual(used.samples[0], { value: 1024, timestamp: T_MS });
  assert.equal(used.samples[1].stale, true, 'no-recorded-value flag becomes a stale marker');
  assert.equal(used.samples[1].timestamp, T_MS + 15_000);
  assert.deepEqual(find(t, { __name__: 'process_memory_usage_bytes', state: 'free', a_b: '1;2', ...JOB }).samples, [{ value: 7, timestamp: T_MS }]);

  const requests = find(t, { __name__: 'http_server_requests_total', http_method: 'GET', http_status_code: '200', ...JOB });
  assert.deepEqual(requests.samples, [{ value: 42, timestamp: T_MS }]);
  assert.deepEqual(requests.exemplars, [
    {
      labels: [
        { name: 'trace_id', value: TRACE },
        { name: 'span_id', value: SPAN },
        { name: 'user', value: 'u1' },
      ],
      value: 1,
      timestamp: T_MS - 1,
    },
  ]);
  assert.deepEqual(find(t, { __name__: 'queue_length', ...JOB }).samples, [{ value: 3, timestamp: T_MS }]);

  const h = { route: '/cart', ...JOB };
  assert.deepEqual(find(t, { __name__: 'http_server_duration_milliseconds_sum', ...h }).samples, [{ value: 123.5, timestamp: T_MS }]);
  assert.deepEqual(find(t, { __name__: 'http_server_duration_milliseconds_count', ...h }).samples, [{ value: 10, timestamp: T_MS }]);
  const buckets = ['5', '10', '25', '+Inf'].map((le) => find(t, { __name__: 'http_server_duration_milliseconds_bucket', le, ...h }));
  assert.deepEqual(
    buckets.map((b) => b.samples[0].value),
    [1, 3, 6, 10],
    'bucket counts are cumulative; +Inf is the count',
  );
  assert.deepEqual(
    buckets.map((b) => b.exemplars!.map((x) => x.value)),
    [[], [7], [], [100]],
    'an exemplar goes to the first bucket holding its value',
  );

  assert.deepEqual(find(t, { __name__: 'rpc_latency_seconds', quantile: '0.5', ...JOB }).samples, [{ value: 0.3, timestamp: T_MS }]);
  assert.deepEqual(find(t, { __name__: 'rpc_latency_seconds', quantile: '0.99', ...JOB }).samples, [{ value: 1.2, timestamp: T_MS }]);
  assert.deepEqual(find(t, { __name__: 'rpc_latency_seconds_count', ...JOB }).samples, [{ value: 5, timestamp: T_MS }]);
  assert.deepEqual(find(t, { __name__: 'rpc_latency_seconds_sum', ...JOB }).samples, [{ value: 2.5, timestamp: T_MS }]);

  const info = find(t, { __name__: 'target_info', big_int: '-9007199254740993', host_name: 'node-7', k8s_pod_uid: '123', tags: '["a",1,true]', ...JOB });
  assert.deepEqual(
    info.samples,
    [
      { value: 1, timestamp: T_MS },
      { value: 1, timestamp: T_MS + 15_000 },
    ],
    "target_info from the resource's earliest point, every 150 s, and at its latest",
  );
  assert.deepEqual(find(t, { __name__: 'no_service' }).samples, [{ value: 1, timestamp: T_MS }]);
  assert.equal(series(t).filter((s) => s.__name__ === 'target_info').length, 1, 'a resource without job/instance gets no target_info');

  for (const s of t.timeseries) {
    const names = s.labels.map((l) => l.name);
    assert.deepEqual(names, [...names].sort(), 'labels sorted by name');
  }
  assert.equal(t.droppedPoints, 2);
  assert.equal(t.errors.length, 1);
  assert.match(
    t.errors[0],
    /"delta\.requests" is a sum with delta aggregation temporality: deltas are stored only for tenants with otel_native_delta_ingestion/,
  );
  assert.ok(!series(t).some((s) => s.__name__.startsWith('delta')));
  const exp = find(t, { __name__: 'exp_latency', ...JOB });
  assert.equal(exp.samples.length, 0);
  assert.equal(exp.histograms?.length, 1, 'a cumulative exponential histogram becomes one native histogram');

  const meta = Object.fromEntries(t.metadata.map((m) => [m.metricFamilyName, m]));
  assert.deepEqual(meta.process_memory_usage_bytes, { type: 'gauge', metricFamilyName: 'process_memory_usage_bytes', help: 'Memory in use.', unit: 'bytes' });
  assert.equal(meta.http_server_requests_total.type, 'counter');
  assert.equal(meta.queue_length.type, 'gauge');
  assert.deepEqual([meta.http_server_duration_milliseconds.type, meta.http_server_duration_milliseconds.unit], ['histogram', 'milliseconds']);
  assert.equal(meta.rpc_latency_seconds.type, 'summary');
  assert.equal(meta.target_info.type, 'gauge');
});

test('translated series encode as 1.0 TimeSeries with the stale marker bits', () => {
  const t = translateMetrics(decodeExportRequest(encodeExportRequest(fixture())));
  const decoded = decodeWriteRequest(encodeWriteRequest({ timeseries: t.timeseries, metadata: t.metadata }));
  const i = t.timeseries.findIndex((s) => s.samples.some((x) => x.stale));
  assert.ok(isStaleNaN(decoded.timeseries[i].values, 1));
  assert.equal(decoded.metadata.length, t.metadata.length);
});

test('UnderscoreEscapingWithoutSuffixes keeps OTLP names apart from character fixes', () => {
  const t = translateMetrics(decodeExportRequest(encodeExportRequest(fixture())), { strategy: 'UnderscoreEscapingWithoutSuffixes' });
  const names = new Set(series(t).map((s) => s.__name__));
  for (const n of ['process_memory_usage', 'http_server_requests', 'http_server_duration_bucket', 'rpc_latency', 'target_info']) assert.ok(names.has(n), n);
});

// Independent reference: protobufjs from opentelemetry-proto (field numbers of
// metrics/v1/metrics.proto, common/v1/common.proto, resource/v1/resource.proto,
// collector/metrics/v1/metrics_service.proto).
const OTLP_PROTO = `
syntax = "proto3";
package otlp;
message ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
  ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7; } }
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; string schema_url = 3; }
message ScopeMetrics { InstrumentationScope scope = 1; repeated Metric metrics = 2; string schema_url = 3; }
message Metric { string name = 1; string description = 2; string unit = 3;
  oneof data { Gauge gauge = 5; Sum sum = 7; Histogram histogram = 9; ExponentialHistogram exponential_histogram = 10; Summary summary = 11; }
  repeated KeyValue metadata = 12; }
message Gauge { repeated NumberDataPoint data_points = 1; }
message Sum { repeated NumberDataPoint data_points = 1; int32 aggregation_temporality = 2; bool is_monotonic = 3; }
message Histogram { repeated HistogramDataPoint data_points = 1; int32 aggregation_temporality = 2; }
message ExponentialHistogram { repeated ExponentialHistogramDataPoint data_points = 1; int32 aggregation_temporality = 2; }
message Summary { repeated SummaryDataPoint data_points = 1; }
message NumberDataPoint { repeated KeyValue attributes = 7; fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3;
  oneof value { double as_double = 4; sfixed64 as_int = 6; } repeated Exemplar exemplars = 5; uint32 flags = 8; }
message HistogramDataPoint { repeated KeyValue attributes = 9; fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3;
  fixed64 count = 4; optional double sum = 5; repeated fixed64 bucket_counts = 6; repeated double explicit_bounds = 7;
  repeated Exemplar exemplars = 8; uint32 flags = 10; optional double min = 11; optional double max = 12; }
message ExponentialHistogramDataPoint { repeated KeyValue attributes = 1; fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3;
  fixed64 count = 4; optional double sum = 5; sint32 scale = 6; fixed64 zero_count = 7; }
message SummaryDataPoint { repeated KeyValue attributes = 7; fixed64 start_time_unix_nano = 2; fixed64 time_unix_nano = 3;
  fixed64 count = 4; double sum = 5; repeated ValueAtQuantile quantile_values = 6; uint32 flags = 8;
  message ValueAtQuantile { double quantile = 1; double value = 2; } }
message Exemplar { repeated KeyValue filtered_attributes = 7; fixed64 time_unix_nano = 2;
  oneof value { double as_double = 3; sfixed64 as_int = 6; } bytes span_id = 4; bytes trace_id = 5; }
`;
const Request = protobuf.parse(OTLP_PROTO).root.lookupType('otlp.ExportMetricsServiceRequest');

test('interop: protobufjs-encoded requests (min/max, scope attributes, metric metadata) decode; ours decode in protobufjs', () => {
  const body = Request.encode(
    Request.fromObject({
      resourceMetrics: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }], droppedAttributesCount: 1 },
          schemaUrl: 'https://opentelemetry.io/schemas/1.21.0',
          scopeMetrics: [
            {
              scope: { name: 'lib', version: '2', attributes: [{ key: 'x', value: { intValue: -5 } }] },
              metrics: [
                {
                  name: 'latency',
                  unit: 's',
                  metadata: [{ key: 'm', value: { boolValue: true } }],
                  histogram: {
                    aggregationTemporality: 2,
                    dataPoints: [
                      {
                        timeUnixNano: String(T),
                        count: 3,
                        sum: 0.75,
                        bucketCounts: [1, 2],
                        explicitBounds: [0.5],
                        min: 0.1,
                        max: 0.4,
                        attributes: [{ key: 'neg', value: { intValue: -9007199254740994 } }],
                        exemplars: [{ timeUnixNano: String(T), asInt: 2, traceId: Buffer.from(TRACE, 'hex') }],
                      },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
    }),
  ).finish();
  const req = decodeExportRequest(Buffer.from(body));
  const m = req.resourceMetrics[0].scopeMetrics[0].metrics[0];
  assert.deepEqual([m.name, m.unit, m.kind, m.temporality], ['latency', 's', 'histogram', 2]);
  const p = m.histogramPoints[0];
  assert.deepEqual([p.timeUnixNano, p.count, p.sum, p.bucketCounts, p.explicitBounds], [T, 3, 0.75, [1, 2], [0.5]]);
  assert.deepEqual(p.attributes, [{ key: 'neg', value: '-9007199254740994' }]);
  assert.deepEqual([p.exemplars[0].value, Buffer.from(p.exemplars[0].traceId).toString('hex')], [2, TRACE]);

  const ours = Request.toObject(Request.decode(encodeExportRequest(fixture())), { longs: String, bytes: String, defaults: false }) as {
    resourceMetrics: {
      scopeMetrics: {
        metrics: {
          name: string;
          histogram?: { dataPoints: { bucketCounts: string[]; explicitBounds: number[]; count: string }[] };
          sum?: { isMonotonic: boolean; aggregationTemporality: number };
        }[];
      }[];
    }[];
  };
  const metrics = ours.resourceMetrics[0].scopeMetrics[0].metrics;
  assert.deepEqual(metrics.map((x) => x.name).slice(0, 4), ['process.memory.usage', 'http.server.requests', 'queue.length', 'http.server.duration']);
  assert.deepEqual(metrics[1].sum, { ...metrics[1].sum, isMonotonic: true, aggregationTemporality: 2 });
  assert.deepEqual(metrics[3].histogram!.dataPoints[0].bucketCounts, ['1', '2', '3', '4']);
  assert.deepEqual(metrics[3].histogram!.dataPoints[0].explicitBounds, [5, 10, 25]);
});

test('malformed protobuf and JSON bodies are 400 with the reason, never a crash', () => {
  const body = encodeExportRequest(fixture());
  for (let cut = 1; cut < body.length; cut += 7) {
    try {
      translateMetrics(decodeExportRequest(body.subarray(0, cut)));
    } catch (err) {
      assert.ok(err instanceof OtlpError && err.kind === 'bad-input' && err.code === 'err-strata-otlp-bad-protobuf', `cut ${cut}: ${String(err)}`);
    }
  }
  // Corrupted bodies: whatever decodes must also translate and encode as remote write without throwing.
  for (let seed = 1; seed <= 500; seed++) {
    const b = Buffer.from(body);
    let x = seed;
    for (let k = 0; k < 3; k++) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      b[x % b.length] ^= 1 + ((x >> 8) % 255);
    }
    let t: ReturnType<typeof translateMetrics> | undefined;
    try {
      t = translateMetrics(decodeExportRequest(b));
    } catch (err) {
      assert.ok(err instanceof OtlpError && err.kind === 'bad-input', `seed ${seed}: ${String(err)}`);
    }
    if (t) decodeWriteRequest(encodeWriteRequest({ timeseries: t.timeseries, metadata: t.metadata }));
  }
  const cases: [string, RegExp][] = [
    ['not json', /OTLP JSON: Unexpected token/],
    ['[]', /\$: expected an object/],
    ['{"resourceMetrics": {}}', /\$\.resourceMetrics: expected an array/],
    [
      '{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"x","gauge":{"dataPoints":[{"timeUnixNano":"abc"}]}}]}]}]}',
      /resourceMetrics\[0\]\.scopeMetrics\[0\]\.metrics\[0\]\.gauge\.dataPoints\[0\]\.timeUnixNano: expected an integer/,
    ],
    [
      '{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"x","sum":{"dataPoints":[{"exemplars":[{"traceId":"AAAA"}]}]}}]}]}]}',
      /traceId: expected 32 hex digits/,
    ],
  ];
  for (const [json, pattern] of cases) {
    assert.throws(
      () => decodeExportRequestJson(json),
      (err: unknown) => err instanceof OtlpError && err.kind === 'bad-input' && pattern.test(err.message),
      json,
    );
  }
  // A trace id of the wrong length in protobuf.
  const bad = Request.encode(
    Request.fromObject({
      resourceMetrics: [
        { scopeMetrics: [{ metrics: [{ name: 'x', gauge: { dataPoints: [{ asDouble: 1, exemplars: [{ traceId: Buffer.from('abcd', 'hex') }] }] } }] }] },
      ],
    }),
  ).finish();
  assert.throws(() => decodeExportRequest(Buffer.from(bad)), /exemplar trace_id is 2 bytes, must be 16/);
});

test('OTLP/HTTP framing: content types, gzip within a bound, responses', () => {
  assert.equal(otlpFormat('application/x-protobuf'), 'protobuf');
  assert.equal(otlpFormat('application/json; charset=utf-8'), 'json');
  assert.throws(
    () => otlpFormat('text/plain'),
    (e: unknown) => e instanceof OtlpError && e.kind === 'unsupported-media-type',
  );
  assert.throws(
    () => otlpFormat(undefined),
    (e: unknown) => e instanceof OtlpError && e.kind === 'unsupported-media-type',
  );

  const body = encodeExportRequest(fixture());
  const gz = gzipSync(body);
  assert.deepEqual(decodeContentEncoding(gz, 'gzip', 1 << 20), body);
  assert.deepEqual(decodeExportRequestBody(decodeContentEncoding(gz, 'gzip', 1 << 20), 'protobuf'), decodeExportRequest(body));
  assert.equal(decodeContentEncoding(body, undefined, 10), body, 'identity bodies are bounded by the HTTP layer');
  assert.throws(
    () => decodeContentEncoding(gz, 'gzip', body.length - 1),
    (e: unknown) => e instanceof OtlpError && e.kind === 'too-large',
  );
  assert.throws(
    () => decodeContentEncoding(body, 'gzip', 1 << 20),
    (e: unknown) => e instanceof OtlpError && e.kind === 'bad-input' && /^gzip: /.test(e.message),
  );
  assert.deepEqual(decodeContentEncoding(zstdCompressSync(body), 'zstd', 1 << 20), body);
  assert.throws(
    () => decodeContentEncoding(zstdCompressSync(body), 'zstd', body.length - 1),
    (e: unknown) => e instanceof OtlpError && e.kind === 'too-large',
  );
  assert.throws(
    () => decodeContentEncoding(body, 'zstd', 1 << 20),
    (e: unknown) => e instanceof OtlpError && e.kind === 'bad-input' && /^zstd: /.test(e.message),
  );
  assert.throws(
    () => decodeContentEncoding(body, 'br', 1 << 20),
    (e: unknown) => e instanceof OtlpError && e.kind === 'unsupported-media-type',
  );

  assert.equal(encodeExportResponse('protobuf').length, 0, 'full success: an empty ExportMetricsServiceResponse');
  assert.equal(encodeExportResponse('json').toString(), '{}');
  const Status = protobuf.parse('syntax = "proto3"; message Status { int32 code = 1; string message = 2; }').root.lookupType('Status');
  assert.deepEqual(Status.toObject(Status.decode(encodeStatus('protobuf', 3, 'bad metric'))), { code: 3, message: 'bad metric' });
  assert.deepEqual(JSON.parse(encodeStatus('json', 14, 'kafka down').toString()), { code: 14, message: 'kafka down' });
});

test('exponential histograms become native histograms as Prometheus converts them: schema = scale (downscaled above 8), OTLP bucket i is bucket i + 1', () => {
  const req: ExportRequestInput = {
    resourceMetrics: [
      {
        resource: { 'service.name': 'svc' },
        scopeMetrics: [
          {
            metrics: [
              {
                name: 'rpc.duration',
                unit: 's',
                exponentialHistogram: {
                  aggregationTemporality: 2,
                  dataPoints: [
                    // scale 2: kept; positive buckets 0..3 (one empty inside), negative bucket -1; zero bucket.
                    {
                      timeUnixNano: T,
                      count: 13,
                      sum: 4.5,
                      scale: 2,
                      zeroCount: 1,
                      zeroThreshold: 1e-9,
                      positive: { offset: 0, bucketCounts: [3, 0, 4, 2] },
                      negative: { offset: -1, bucketCounts: [3] },
                    },
                  ],
                },
              },
              {
                name: 'fine',
                exponentialHistogram: {
                  aggregationTemporality: 2,
                  // scale 10 is downscaled twice to 8: OTLP indexes 0..7 merge into 0, 0, 0, 0, 1, 1, 1, 1 -> buckets 1 and 2.
                  dataPoints: [{ timeUnixNano: T, count: 8, sum: 8, scale: 10, positive: { offset: 0, bucketCounts: [1, 1, 1, 1, 1, 1, 1, 1] } }],
                },
              },
              { name: 'delta.exp', exponentialHistogram: { aggregationTemporality: 1, dataPoints: [{ timeUnixNano: T, count: 1, scale: 0 }] } },
            ],
          },
        ],
      },
    ],
  };
  for (const decoded of [decodeExportRequest(encodeExportRequest(req)), decodeExportRequestJson(encodeExportRequestJson(req))]) {
    const t = translateMetrics(decoded);
    const hist = (name: string) => {
      const s = t.timeseries.find((x) => x.labels.some((l) => l.name === '__name__' && l.value === name));
      assert.ok(s?.histograms?.length === 1, name);
      const body = s.histograms[0];
      const d = readHistogram(new ProtoReader(body), body.length);
      assert.equal(validateHistogram(d), null, name);
      return d;
    };
    const a = hist('rpc_duration_seconds');
    assert.equal(a.timestamp, T_MS);
    assert.deepEqual(a.histogram, {
      counterResetHint: 'unknown',
      schema: 2,
      zeroThreshold: 1e-128, // Prometheus' own, not the point's 1e-9
      zeroCount: 1,
      count: 13,
      sum: 4.5,
      positiveSpans: [{ offset: 1, length: 4 }],
      positiveBuckets: [3, 0, 4, 2],
      negativeSpans: [{ offset: 0, length: 1 }],
      negativeBuckets: [3],
    });
    const b = hist('fine');
    assert.equal(b.histogram.schema, 8);
    assert.deepEqual(b.histogram.positiveSpans, [{ offset: 1, length: 2 }]);
    assert.deepEqual(b.histogram.positiveBuckets, [4, 4]);
    assert.equal(t.droppedPoints, 1);
    assert.match(t.errors[0], /"delta\.exp" is an exponential histogram with delta aggregation temporality/);
    assert.deepEqual(
      t.metadata.find((m) => m.metricFamilyName === 'rpc_duration_seconds'),
      { type: 'histogram', metricFamilyName: 'rpc_duration_seconds', help: '', unit: 'seconds' },
    );
  }
});

test('target_info: every 150 s from the earliest point (refused metrics count) to the latest, once per timestamp, at most the last hour', () => {
  const s = (n: number) => BigInt(n) * 1_000_000_000n;
  const at = (t: bigint) => ({ timeUnixNano: t, value: 1 });
  const resource = { 'service.name': 'span', 'service.instance.id': 'i', 'host.name': 'h' };
  const times = (points: bigint[], twice = false) => {
    const rm = { resource, scopeMetrics: [{ metrics: [{ name: 'g', gauge: { dataPoints: points.map(at) } }] }] };
    const t = translateMetrics(decodeExportRequest(encodeExportRequest({ resourceMetrics: twice ? [rm, rm] : [rm] })));
    return find(t, { __name__: 'target_info', host_name: 'h', job: 'span', instance: 'i' }).samples.map((x) => x.timestamp / 1000 - 1_000_000);
  };
  assert.deepEqual(times([s(1_000_000), s(1_000_400)]), [0, 150, 300, 400]);
  assert.deepEqual(times([s(1_000_000), s(1_000_300)]), [0, 150, 300], 'no second sample at the latest when the step lands on it');
  assert.deepEqual(times([s(1_000_000), s(1_000_400)], true), [0, 150, 300, 400], 'two resources with the same labels: one sample per timestamp');
  const wide = times([0n, s(1_000_400)]);
  assert.equal(wide.length, 25, 'a point at 1970 does not make millions of samples');
  assert.equal(wide.at(-1), 400);
  const refused = translateMetrics(
    decodeExportRequest(
      encodeExportRequest({
        resourceMetrics: [
          {
            resource,
            scopeMetrics: [
              {
                metrics: [
                  { name: 'g', gauge: { dataPoints: [at(s(1_000_300))] } },
                  { name: 'd', sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [at(s(1_000_000))] } },
                ],
              },
            ],
          },
        ],
      }),
    ),
  );
  assert.equal(refused.errors.length, 1, 'the delta sum is refused');
  assert.deepEqual(
    find(refused, { __name__: 'target_info', host_name: 'h', job: 'span', instance: 'i' }).samples.map((x) => x.timestamp / 1000 - 1_000_000),
    [0, 150, 300],
    "a refused metric's points still widen the span, as in Prometheus",
  );
});

test('exponential histogram points keep their exemplars (trace and span ids as labels), from protobuf and JSON', () => {
  const req = {
    resourceMetrics: [
      {
        resource: { 'service.name': 'x' },
        scopeMetrics: [
          {
            metrics: [
              {
                name: 'lat',
                exponentialHistogram: {
                  aggregationTemporality: 2 as const,
                  dataPoints: [{ timeUnixNano: T, count: 1, scale: 0, exemplars: [{ timeUnixNano: T, value: 0.5, traceId: TRACE, spanId: SPAN }] }],
                },
              },
            ],
          },
        ],
      },
    ],
  };
  for (const decoded of [decodeExportRequest(encodeExportRequest(req)), decodeExportRequestJson(encodeExportRequestJson(req))]) {
    const t = translateMetrics(decoded);
    assert.deepEqual(find(t, { __name__: 'lat', job: 'x' }).exemplars, [
      {
        labels: [
          { name: 'trace_id', value: TRACE },
          { name: 'span_id', value: SPAN },
        ],
        value: 0.5,
        timestamp: T_MS,
      },
    ]);
  }
});
