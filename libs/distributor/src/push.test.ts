// The distributor's push routes over HTTP (fastify inject) with a fake Kafka
// writer: status codes, the remote write 2.0 Written headers, OTLP answers, and
// what the records carry.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { Registry } from 'prom-client';
import type { Label } from '@strata/model';
import {
  compressBody,
  decodeRecordValue,
  encodeSymbolizedWriteRequestV2,
  encodeWriteRequest,
  encodeWriteRequestV2,
  isStaleNaN,
  type DecodedWriteRequest,
  type WriteRequestV2Input,
} from '@strata/remote-write';
import { encodeExportRequest, encodeExportRequestJson, type ExportRequestInput } from '@strata/otlp';
import { KafkaUnavailableError, type PartitionRecord } from '@strata/kafka';
import { DEFAULT_LIMITS, Overrides, type RuntimeConfig } from '@strata/limits';
import { createHttpServer, createLogger } from '@strata/service';
import { Distributor, registerPushRoutes, type RecordWriter } from './index.ts';

const l = (name: string, value: string): Label => ({ name, value });
const V2 = 'application/x-protobuf;proto=io.prometheus.write.v2.Request';
const WRITTEN = ['x-prometheus-remote-write-samples-written', 'x-prometheus-remote-write-histograms-written', 'x-prometheus-remote-write-exemplars-written'];

class FakeWriter implements RecordWriter {
  records: (PartitionRecord & { tenant: string })[] = [];
  down = false;
  async write(tenant: string, records: PartitionRecord[]): Promise<void> {
    if (this.down) throw new KafkaUnavailableError('connection refused (fake)');
    for (const r of records) this.records.push({ tenant, ...r });
  }
  async partitionCount(): Promise<number> {
    return 3;
  }
  decoded(): DecodedWriteRequest[] {
    return this.records.map((r) => decodeRecordValue(r.value, r.format));
  }
  series() {
    return this.decoded().flatMap((d) => d.timeseries);
  }
}

async function server(opts: { multitenancy?: boolean } = {}) {
  const writer = new FakeWriter();
  const logger = createLogger('test', 'silent');
  const registry = new Registry();
  const distributor = new Distributor({ writer, maxRecvMsgSize: 1 << 20, logger, registry });
  const app = createHttpServer({ logger, registry, readiness: { notReadyReason: () => undefined } });
  registerPushRoutes(app, { distributor, multitenancyEnabled: opts.multitenancy ?? false, logger, registry, maxBodyBytes: 1 << 20 });
  await app.ready();
  return { app, writer };
}

function written(headers: Record<string, unknown>): (string | undefined)[] {
  return WRITTEN.map((h) => headers[h] as string | undefined);
}

const T = 1732950000000;

function v2Fixture(): WriteRequestV2Input {
  return {
    timeseries: [
      {
        labels: [l('__name__', 'http_requests_total'), l('code', '200'), l('job', 'api')],
        samples: [
          { value: 1, timestamp: T },
          { value: 0, timestamp: T + 15_000, stale: true },
        ],
        exemplars: [{ labels: [l('trace_id', 'abc')], value: 1, timestamp: T }],
        metadata: { type: 'counter', help: 'Requests.', unit: '' },
      },
      ...Array.from({ length: 20 }, (_, i) => ({
        labels: [l('__name__', 'up'), l('empty', ''), l('instance', `host-${i}`)],
        samples: [{ value: 1, timestamp: T }],
        metadata: { type: 'gauge' as const, help: 'Up.' },
      })),
    ],
  };
}

test('remote write 2.0: 204 with exact Written headers; records are 1.0 across partitions with stale bits and metadata', async () => {
  const { app, writer } = await server();
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/push',
    headers: { 'content-type': V2, 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '2.0.0' },
    payload: compressBody(encodeWriteRequestV2(v2Fixture())),
  });
  assert.equal(res.statusCode, 204, res.body);
  assert.deepEqual(written(res.headers), ['22', '0', '1']);
  assert.ok(new Set(writer.records.map((r) => r.partition)).size > 1, 'sharded over partitions');
  const series = writer.series();
  assert.equal(series.length, 21);
  const counter = series.find((s) => s.labels[0].value === 'http_requests_total')!;
  assert.deepEqual(counter.labels, v2Fixture().timeseries[0].labels);
  assert.deepEqual([...counter.timestamps], [T, T + 15_000]);
  assert.ok(isStaleNaN(counter.values, 1), 'stale marker bits survive 2.0 -> Kafka');
  assert.deepEqual(counter.exemplars, [{ labels: [l('trace_id', 'abc')], value: 1, timestamp: T }]);
  const up = series.find((s) => s.labels[0].value === 'up')!;
  assert.deepEqual(
    up.labels.map((x) => x.name),
    ['__name__', 'instance'],
    'empty-valued labels dropped',
  );
  const metadata = writer.decoded().flatMap((d) => d.metadata);
  assert.deepEqual(
    metadata.map((m) => [m.metricFamilyName, m.type, m.help]),
    [
      ['http_requests_total', 'counter', 'Requests.'],
      ['up', 'gauge', 'Up.'],
    ],
    'metadata de-duplicated per family, in partition 0',
  );
  assert.equal(writer.records.find((r) => r.partition === 0)!.value.length > 0, true);
});

test('remote write 1.0 answers carry none of the Written headers', async () => {
  const { app } = await server();
  for (const contentType of ['application/x-protobuf', 'application/x-protobuf;proto=prometheus.WriteRequest']) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/write',
      headers: { 'content-type': contentType, 'content-encoding': 'snappy' },
      payload: compressBody(encodeWriteRequest({ timeseries: [{ labels: [l('__name__', 'up')], samples: [{ value: 1, timestamp: T }] }] })),
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(written(res.headers), [undefined, undefined, undefined]);
    const bad = await app.inject({
      method: 'POST',
      url: '/api/v1/push',
      headers: { 'content-type': contentType },
      payload: compressBody(encodeWriteRequest({ timeseries: [{ labels: [l('job', 'x')], samples: [{ value: 1, timestamp: T }] }] })),
    });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(written(bad.headers), [undefined, undefined, undefined]);
  }
});

test('remote write 2.0 partial write: 400 with the reason; Written headers count only what was written', async () => {
  const { app, writer } = await server();
  const histogram = Buffer.from([0x08, 0x05, 0x78, 0x01]); // count_int = 5, timestamp = 1
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/push',
    headers: { 'content-type': V2, 'content-encoding': 'snappy' },
    payload: compressBody(
      encodeWriteRequestV2({
        timeseries: [
          {
            labels: [l('job', 'x'), l('__name__', 'duplicate'), l('job', 'y')],
            samples: [
              { value: 1, timestamp: T },
              { value: 2, timestamp: T + 1 },
            ],
          },
          { labels: [l('__name__', 'native_hist')], samples: [], histograms: [histogram, histogram] },
          { labels: [l('__name__', 'ok')], samples: [{ value: 1, timestamp: T }], exemplars: [{ labels: [l('trace_id', 't')], value: 1, timestamp: T }] },
        ],
      }),
    ),
  });
  assert.equal(res.statusCode, 400);
  assert.match(res.body, /duplicate label name "job".*\(2 of 3 series rejected, 4 samples\)/);
  assert.equal(res.body.trim().split('\n').length, 1);
  assert.deepEqual(written(res.headers), ['1', '0', '1']);
  assert.deepEqual(
    writer.series().map((s) => s.labels),
    [[l('__name__', 'ok')]],
  );

  const hist = await app.inject({
    method: 'POST',
    url: '/api/v1/push',
    headers: { 'content-type': V2 },
    payload: compressBody(encodeWriteRequestV2({ timeseries: [{ labels: [l('__name__', 'native_hist')], samples: [], histograms: [histogram] }] })),
  });
  assert.equal(hist.statusCode, 400);
  assert.match(hist.body, /invalid native histogram in series \{__name__="native_hist"\}: histogram count 5 does not match its buckets' total 0/);
  assert.deepEqual(written(hist.headers), ['0', '0', '0']);

  const valid = Buffer.from([0x08, 0x05, 0x30, 0x05, 0x78, 0x01]); // count_int = 5, zero_count_int = 5, timestamp = 1
  const ok = await app.inject({
    method: 'POST',
    url: '/api/v1/push',
    headers: { 'content-type': V2 },
    payload: compressBody(encodeWriteRequestV2({ timeseries: [{ labels: [l('__name__', 'native_hist')], samples: [], histograms: [valid, valid] }] })),
  });
  assert.equal(ok.statusCode, 204, ok.body);
  assert.deepEqual(written(ok.headers), ['0', '2', '0']);
  const stored = writer.series().find((s) => s.labels[0].value === 'native_hist');
  assert.equal(stored?.histogramSamples.length, 2, 'both histograms travel in field 4 of the 1.0 record');
});

test('unsorted label names are sorted and stored, as Prometheus does, on remote write 1.0, 2.0 and OTLP', async () => {
  const { app, writer } = await server();
  const unsorted = [l('instance', 'localhost:9090'), l('__name__', 'up'), l('job', 'testjob')];
  const sorted = [l('__name__', 'up'), l('instance', 'localhost:9090'), l('job', 'testjob')];
  // The second series also has an empty value and a sorted neighbour, so the rewrite and the sender's bytes both route.
  const v1 = await app.inject({
    method: 'POST',
    url: '/api/v1/push',
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy' },
    payload: compressBody(
      encodeWriteRequest({
        timeseries: [
          { labels: unsorted, samples: [{ value: 1, timestamp: T }] },
          { labels: [l('z', 'last'), l('empty', ''), l('__name__', 'up'), l('a', 'first')], samples: [{ value: 2, timestamp: T }] },
          { labels: sorted, samples: [{ value: 3, timestamp: T + 1 }] },
        ],
      }),
    ),
  });
  assert.equal(v1.statusCode, 200, v1.body);
  const v2 = await app.inject({
    method: 'POST',
    url: '/api/v1/push',
    headers: { 'content-type': V2, 'content-encoding': 'snappy' },
    payload: compressBody(encodeWriteRequestV2({ timeseries: [{ labels: unsorted, samples: [{ value: 4, timestamp: T + 2 }] }] })),
  });
  assert.equal(v2.statusCode, 204, v2.body);
  assert.deepEqual(written(v2.headers), ['1', '0', '0']);
  const otlp = await app.inject({
    method: 'POST',
    url: '/otlp/v1/metrics',
    headers: { 'content-type': 'application/x-protobuf' },
    payload: encodeExportRequest({
      resourceMetrics: [
        {
          resource: {},
          scopeMetrics: [
            { metrics: [{ name: 'temp', gauge: { dataPoints: [{ attributes: { zone: 'b', area: 'a', mid: 'm' }, timeUnixNano: NS, value: 5 }] } }] },
          ],
        },
      ],
    }),
  });
  assert.equal(otlp.statusCode, 200, otlp.body);
  const stored = writer.series().map((s) => s.labels);
  assert.deepEqual(stored.slice(0, 4), [sorted, [l('__name__', 'up'), l('a', 'first'), l('z', 'last')], sorted, sorted]);
  assert.deepEqual(
    stored.find((ls) => ls[0].value === 'temp'),
    [l('__name__', 'temp'), l('area', 'a'), l('mid', 'm'), l('zone', 'b')],
  );
  // One series goes to one partition, whichever order its labels were sent in.
  const partitionsOf = writer.records.filter((r) => decodeRecordValue(r.value, r.format).timeseries.some((s) => s.labels[2]?.value === 'testjob'));
  assert.equal(new Set(partitionsOf.map((r) => r.partition)).size, 1);
});

test('remote write 2.0 whole-request failures: symbol errors 400, Kafka down 503, both with zero Written headers', async () => {
  const { app, writer } = await server();
  const cases: [string, Buffer, RegExp][] = [
    [
      'out-of-range ref',
      encodeSymbolizedWriteRequestV2({ symbols: ['', '__name__', 'up'], timeseries: [{ labelsRefs: [1, 7], samples: [{ value: 1, timestamp: T }] }] }),
      /label value reference 7 in timeseries\[0\] is out of range: the request has 3 symbols/,
    ],
    [
      'odd refs',
      encodeSymbolizedWriteRequestV2({ symbols: ['', '__name__', 'up'], timeseries: [{ labelsRefs: [1, 2, 1], samples: [{ value: 1, timestamp: T }] }] }),
      /3 label references, an odd number/,
    ],
    [
      '1.0 body',
      encodeWriteRequest({ timeseries: [{ labels: [l('__name__', 'up')], samples: [{ value: 1, timestamp: T }] }] }),
      /looks like a remote write 1\.0/,
    ],
  ];
  for (const [what, body, reason] of cases) {
    const res = await app.inject({ method: 'POST', url: '/api/v1/push', headers: { 'content-type': V2 }, payload: compressBody(body) });
    assert.equal(res.statusCode, 400, what);
    assert.match(res.body, reason, what);
    assert.deepEqual(written(res.headers), ['0', '0', '0'], what);
  }
  const snappy = await app.inject({ method: 'POST', url: '/api/v1/push', headers: { 'content-type': V2 }, payload: Buffer.from('not snappy') });
  assert.equal(snappy.statusCode, 400);
  assert.deepEqual(written(snappy.headers), ['0', '0', '0']);
  assert.equal(writer.records.length, 0, 'nothing produced');

  writer.down = true;
  const down = await app.inject({
    method: 'POST',
    url: '/api/v1/push',
    headers: { 'content-type': V2 },
    payload: compressBody(encodeWriteRequestV2(v2Fixture())),
  });
  assert.equal(down.statusCode, 503);
  assert.match(down.body, /Kafka/);
  assert.deepEqual(written(down.headers), ['0', '0', '0']);
});

test('unsupported remote write message or encoding: 415 without Written headers', async () => {
  const { app } = await server();
  const body = compressBody(encodeWriteRequestV2(v2Fixture()));
  const cases: Record<string, string>[] = [
    { 'content-type': 'application/x-protobuf;proto=io.prometheus.write.v3.Request' },
    { 'content-type': 'application/json' },
    { 'content-type': V2, 'content-encoding': 'zstd' },
  ];
  for (const headers of cases) {
    const res = await app.inject({ method: 'POST', url: '/api/v1/push', headers, payload: body });
    assert.equal(res.statusCode, 415, JSON.stringify(headers));
    assert.deepEqual(written(res.headers), [undefined, undefined, undefined]);
  }
});

const NS = BigInt(T) * 1_000_000n;

function otlpFixture(): ExportRequestInput {
  return {
    resourceMetrics: [
      {
        resource: { 'service.name': 'cart', 'service.instance.id': 'cart-1', region: 'eu' },
        scopeMetrics: [
          {
            metrics: [
              {
                name: 'http.server.requests',
                sum: {
                  aggregationTemporality: 2,
                  isMonotonic: true,
                  dataPoints: [
                    {
                      attributes: { 'http.method': 'GET' },
                      timeUnixNano: NS,
                      value: 5,
                      exemplars: [{ value: 1, timeUnixNano: NS, traceId: '0af7651916cd43dd8448eb211c80319c' }],
                    },
                  ],
                },
              },
              {
                name: 'http.server.duration',
                unit: 's',
                histogram: { aggregationTemporality: 2, dataPoints: [{ timeUnixNano: NS, count: 3, sum: 0.6, bucketCounts: [1, 2], explicitBounds: [0.25] }] },
              },
            ],
          },
        ],
      },
    ],
  };
}

test('OTLP protobuf: 200 with an empty ExportMetricsServiceResponse; series routed as 1.0 records', async () => {
  const { app, writer } = await server();
  const res = await app.inject({
    method: 'POST',
    url: '/otlp/v1/metrics',
    headers: { 'content-type': 'application/x-protobuf' },
    payload: encodeExportRequest(otlpFixture()),
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], 'application/x-protobuf');
  assert.equal(res.rawPayload.length, 0);
  const names = writer
    .series()
    .map((s) => s.labels.find((x) => x.name === '__name__')!.value)
    .sort();
  assert.deepEqual(names, [
    'http_server_duration_seconds_bucket',
    'http_server_duration_seconds_bucket',
    'http_server_duration_seconds_count',
    'http_server_duration_seconds_sum',
    'http_server_requests_total',
    'target_info',
  ]);
  const counter = writer.series().find((s) => s.labels.some((x) => x.value === 'http_server_requests_total'))!;
  assert.deepEqual(counter.labels, [l('__name__', 'http_server_requests_total'), l('http_method', 'GET'), l('instance', 'cart-1'), l('job', 'cart')]);
  assert.deepEqual(counter.exemplars[0].labels, [l('trace_id', '0af7651916cd43dd8448eb211c80319c')]);
  assert.ok(
    writer
      .decoded()
      .flatMap((d) => d.metadata)
      .some((m) => m.metricFamilyName === 'http_server_requests_total' && m.type === 'counter'),
  );
});

test('OTLP JSON with gzip: 200 {}', async () => {
  const { app, writer } = await server();
  const res = await app.inject({
    method: 'POST',
    url: '/otlp/v1/metrics',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    payload: gzipSync(encodeExportRequestJson(otlpFixture())),
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.body, '{}');
  assert.equal(writer.series().length, 6);
});

test('OTLP protobuf with zstd: 200; a body that is not zstd: 400 naming it', async () => {
  const { app, writer } = await server();
  const headers = { 'content-type': 'application/x-protobuf', 'content-encoding': 'zstd' };
  const res = await app.inject({ method: 'POST', url: '/otlp/v1/metrics', headers, payload: zstdCompressSync(encodeExportRequest(otlpFixture())) });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(writer.series().length, 6);
  const bad = await app.inject({ method: 'POST', url: '/otlp/v1/metrics', headers, payload: Buffer.from('not zstd at all') });
  assert.equal(bad.statusCode, 400);
  assert.match(status(bad.rawPayload).message, /^zstd: /);
});

const Status = protobuf.parse('syntax = "proto3"; message Status { int32 code = 1; string message = 2; }').root.lookupType('Status');
const status = (payload: Buffer) => Status.toObject(Status.decode(payload)) as { code: number; message: string };

test('OTLP delta sums: the rest is written, then 400 with a google.rpc.Status naming the metric', async () => {
  const { app, writer } = await server();
  const input = otlpFixture();
  input.resourceMetrics[0].scopeMetrics[0].metrics.push({
    name: 'jobs.done',
    sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [{ timeUnixNano: NS, value: 2 }] },
  });
  const res = await app.inject({
    method: 'POST',
    url: '/otlp/v1/metrics',
    headers: { 'content-type': 'application/x-protobuf' },
    payload: encodeExportRequest(input),
  });
  assert.equal(res.statusCode, 400);
  const s = status(res.rawPayload);
  assert.equal(s.code, 3);
  assert.match(s.message, /1 OTLP data points were not ingested: OTLP metric "jobs\.done" is a sum with delta aggregation temporality/);
  assert.equal(writer.series().length, 6, 'the convertible metrics were written');
});

test('OTLP failures: 415 for content type or encoding, 400 for a bad body, 401 without tenant, 503 when Kafka is down', async () => {
  const { app, writer } = await server({ multitenancy: true });
  const tenant = { 'x-scope-orgid': 'team-a' };
  const body = encodeExportRequest(otlpFixture());
  const cases: [Record<string, string>, Buffer, number, RegExp][] = [
    [{ ...tenant, 'content-type': 'text/plain' }, body, 415, /unsupported content type "text\/plain" for OTLP metrics/],
    [{ ...tenant, 'content-type': 'application/x-protobuf', 'content-encoding': 'br' }, body, 415, /unsupported content encoding "br"/],
    [{ ...tenant, 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' }, body, 400, /^gzip: /],
    [{ ...tenant, 'content-type': 'application/x-protobuf' }, Buffer.from([0x0a, 0x05, 0x01]), 400, /^protobuf: truncated/],
    [{ 'content-type': 'application/x-protobuf' }, body, 401, /X-Scope-OrgID/],
  ];
  for (const [headers, payload, code, reason] of cases) {
    const res = await app.inject({ method: 'POST', url: '/otlp/v1/metrics', headers, payload });
    assert.equal(res.statusCode, code, JSON.stringify(headers));
    assert.match(status(res.rawPayload).message, reason);
  }
  const json = await app.inject({
    method: 'POST',
    url: '/otlp/v1/metrics',
    headers: { ...tenant, 'content-type': 'application/json' },
    payload: '{"resourceMetrics": 1}',
  });
  assert.equal(json.statusCode, 400);
  assert.match(JSON.parse(json.body).message, /resourceMetrics: expected an array/);
  assert.equal(writer.records.length, 0);

  writer.down = true;
  const down = await app.inject({ method: 'POST', url: '/otlp/v1/metrics', headers: { ...tenant, 'content-type': 'application/x-protobuf' }, payload: body });
  assert.equal(down.statusCode, 503);
  assert.equal(status(down.rawPayload).code, 14);
  writer.down = false;
  const ok = await app.inject({ method: 'POST', url: '/otlp/v1/metrics', headers: { ...tenant, 'content-type': 'application/x-protobuf' }, payload: body });
  assert.equal(ok.statusCode, 200);
  assert.ok(writer.records.every((r) => r.tenant === 'team-a'));
});

test("OTLP per tenant: native delta ingestion, resource and scope promotion and NHCB follow the tenant's runtime overrides, read per push", async () => {
  const writer = new FakeWriter();
  let runtimeConfig: RuntimeConfig = {
    overrides: {
      otel: {
        otel_native_delta_ingestion: true,
        otel_convert_histograms_to_nhcb: true,
        otel_promote_scope_metadata: true,
        promote_otel_resource_attributes: ['deployment.environment'],
      },
    },
  };
  const limits = new Overrides({ defaults: DEFAULT_LIMITS, runtimeConfig: () => runtimeConfig });
  const distributor = new Distributor({ writer, maxRecvMsgSize: 1 << 20, logger: createLogger('test', 'silent'), registry: new Registry(), limits });
  const body = encodeExportRequest({
    resourceMetrics: [
      {
        resource: { 'service.name': 'api', 'deployment.environment': 'prod' },
        scopeMetrics: [
          {
            scope: { name: 'meter', version: '2' },
            metrics: [
              { name: 'jobs.done', sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [{ timeUnixNano: NS, value: 2 }] } },
              {
                name: 'latency',
                histogram: {
                  aggregationTemporality: 2,
                  dataPoints: [{ timeUnixNano: NS, count: 3, sum: 1.5, bucketCounts: [1, 2, 0], explicitBounds: [0.25, 1] }],
                },
              },
            ],
          },
        ],
      },
    ],
  });
  const push = (tenant: string) => distributor.pushOtlp({ tenant, body, contentType: 'application/x-protobuf' });
  assert.equal((await push('otel')).status, 200);
  const byName = new Map(writer.series().map((s) => [s.labels.find((x) => x.name === '__name__')!.value, s]));
  assert.deepEqual([...byName.keys()].sort(), ['jobs_done_total', 'latency', 'target_info']);
  assert.deepEqual(byName.get('jobs_done_total')!.labels, [
    l('__name__', 'jobs_done_total'),
    l('deployment_environment', 'prod'),
    l('job', 'api'),
    l('otel_scope_name', 'meter'),
    l('otel_scope_version', '2'),
  ]);
  assert.deepEqual([...byName.get('jobs_done_total')!.values, ...byName.get('jobs_done_total')!.timestamps], [2, T]);
  const { histogram: h } = byName.get('latency')!.histogramSamples[0];
  assert.deepEqual([h.schema, h.customValues, h.count], [-53, [0.25, 1], 3]);
  const metadata = writer.decoded().flatMap((d) => d.metadata);
  assert.equal(metadata.find((m) => m.metricFamilyName === 'jobs_done_total')?.type, 'unknown', 'a delta sum is recorded as unknown');

  const before = writer.series().length;
  const other = await push('other');
  assert.equal(other.status, 400, 'a tenant without the overrides still has its deltas refused');
  assert.match(other.message!, /"jobs\.done" is a sum with delta aggregation temporality/);
  assert.deepEqual(
    writer
      .series()
      .slice(before)
      .map((s) => s.labels.find((x) => x.name === '__name__')!.value)
      .sort(),
    ['latency_bucket', 'latency_bucket', 'latency_bucket', 'latency_count', 'latency_sum', 'target_info'],
  );

  runtimeConfig = { overrides: {} };
  assert.equal((await push('otel')).status, 400, 'a reloaded runtime config applies to the next push');
});
