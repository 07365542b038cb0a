// Start (created) timestamps on the push path: a tenant with created_timestamp_zero_ingestion_enabled
// gets its remote write 2.0 samples' and histograms' start timestamps into the records (format 3
// and 2 alike), where the ingester turns them into zero samples; other tenants' records carry none.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import type { Label } from '@strata/model';
import { compressBody, decodeRecordValue, encodeHistogram, encodeWriteRequest, encodeWriteRequestV2, type DecodedSeries } from '@strata/remote-write';
import type { PartitionRecord } from '@strata/kafka';
import { DEFAULT_LIMITS, Overrides } from '@strata/limits';
import { encodeExportRequest } from '@strata/otlp';
import { createLogger } from '@strata/service';
import { Distributor, type RecordWriter } from './index.ts';

const l = (name: string, value: string): Label => ({ name, value });
const V2 = 'application/x-protobuf;proto=io.prometheus.write.v2.Request';
const NOW = 1732950000000;
const CT = NOW - 60_000;

class FakeWriter implements RecordWriter {
  records: PartitionRecord[] = [];
  async write(_tenant: string, records: PartitionRecord[]): Promise<void> {
    this.records.push(...records);
  }
  async partitionCount(): Promise<number> {
    return 2;
  }
  series(): DecodedSeries[] {
    return this.records.flatMap((r) => decodeRecordValue(r.value, r.format).timeseries);
  }
}

function distributor(symbolizeRecords: boolean) {
  const writer = new FakeWriter();
  const limits = new Overrides({
    defaults: DEFAULT_LIMITS,
    runtimeConfig: () => ({
      overrides: { ct: { created_timestamp_zero_ingestion_enabled: true }, 'mimir-style': { otel_created_timestamp_zero_ingestion_enabled: true } },
    }),
  });
  const d = new Distributor({
    writer,
    maxRecvMsgSize: 1 << 20,
    logger: createLogger('test', 'silent'),
    registry: new Registry(),
    limits,
    symbolizeRecords,
    now: () => NOW,
  });
  return { d, writer };
}

function histogram(): Buffer {
  return encodeHistogram({
    timestamp: NOW,
    startTimestamp: CT,
    float: false,
    histogram: {
      counterResetHint: 'unknown',
      schema: 0,
      zeroThreshold: 0,
      zeroCount: 0,
      count: 2,
      sum: 3,
      positiveSpans: [{ offset: 0, length: 1 }],
      negativeSpans: [],
      positiveBuckets: [2],
      negativeBuckets: [],
    },
  });
}

const timeseries = () => [
  { labels: [l('__name__', 'requests_total'), l('job', 'a')], samples: [{ value: 4, timestamp: NOW, startTimestamp: CT }] },
  { labels: [l('__name__', 'requests_total'), l('job', 'b')], samples: [{ value: 6, timestamp: NOW, startTimestamp: CT + 1 }] },
  { labels: [l('__name__', 'latency_seconds')], samples: [], histograms: [histogram()] },
];

function body(): Buffer {
  return compressBody(encodeWriteRequestV2({ timeseries: timeseries() }));
}

function starts(series: DecodedSeries[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of series) {
    const key = s.labels.map((x) => x.value).join(',');
    out[key] = s.histograms > 0 ? s.histogramSamples.map((h) => h.startTimestamp) : s.starts === undefined ? undefined : [...s.starts];
  }
  return out;
}

for (const symbolize of [true, false]) {
  test(`remote write 2.0 start timestamps reach the records only for a tenant that ingests them (record format ${symbolize ? 3 : 2})`, async () => {
    const { d, writer } = distributor(symbolize);
    const on = await d.push({ tenant: 'ct', body: body(), contentType: V2 });
    assert.equal(on.status, 204);
    assert.deepEqual(on.written, { samples: 2, histograms: 1, exemplars: 0 }, 'the zero samples are the ingester’s, not counted as written');
    assert.deepEqual(starts(writer.series()), { 'requests_total,a': [CT], 'requests_total,b': [CT + 1], latency_seconds: [CT] });
    if (symbolize)
      assert.ok(
        writer.records.some((r) => r.format === 'symbolized'),
        'float series with start timestamps stay format 3',
      );

    writer.records = [];
    const off = await d.push({ tenant: 'other', body: body(), contentType: V2 });
    assert.equal(off.status, 204);
    assert.deepEqual(starts(writer.series()), { 'requests_total,a': undefined, 'requests_total,b': undefined, latency_seconds: [undefined] });
  });
}

test('remote write 1.0 has no start timestamps: where a sender puts them as Strata’s records do, only a tenant with the setting keeps them', async () => {
  const { d, writer } = distributor(true);
  const v1 = compressBody(encodeWriteRequest({ timeseries: timeseries() }));
  assert.equal((await d.push({ tenant: 'ct', body: v1, contentType: 'application/x-protobuf' })).status, 200);
  assert.deepEqual(starts(writer.series()), { 'requests_total,a': [CT], 'requests_total,b': [CT + 1], latency_seconds: [CT] });
  writer.records = [];
  assert.equal((await d.push({ tenant: 'other', body: v1, contentType: 'application/x-protobuf' })).status, 200);
  assert.deepEqual(starts(writer.series()), { 'requests_total,a': undefined, 'requests_total,b': undefined, latency_seconds: [undefined] });
  const values = writer.series().map((s) => (s.histograms > 0 ? s.histogramSamples[0].histogram.count : s.values[0]));
  assert.deepEqual(values, [4, 6, 2], 'the rest of each sample and histogram is kept');
});

test('OTLP start times reach the records for a tenant with either setting (Mimir names the OTLP one otel_*)', async () => {
  const { d, writer } = distributor(true);
  const body = encodeExportRequest({
    resourceMetrics: [
      {
        scopeMetrics: [
          {
            metrics: [
              {
                name: 'jobs',
                sum: {
                  aggregationTemporality: 2,
                  isMonotonic: true,
                  dataPoints: [{ startTimeUnixNano: BigInt(CT) * 1_000_000n, timeUnixNano: BigInt(NOW) * 1_000_000n, value: 2 }],
                },
              },
            ],
          },
        ],
      },
    ],
  });
  for (const [tenant, want] of [
    ['ct', [CT]],
    ['mimir-style', [CT]],
    ['other', undefined],
  ] as const) {
    writer.records = [];
    assert.equal((await d.pushOtlp({ tenant, body, contentType: 'application/x-protobuf' })).status, 200);
    assert.deepEqual(starts(writer.series()), { jobs_total: want }, tenant);
  }
});
