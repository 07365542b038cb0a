// OTLP StartTimeUnixNano as the samples' start timestamps (created_timestamp_zero_ingestion_enabled):
// cumulative monotonic sums, histograms (classic series, custom buckets, exponential) and summaries
// get it on every sample; gauges, up-down sums, deltas and target_info never; off, nothing does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readHistogram, ProtoReader } from '@strata/remote-write';
import { decodeExportRequest, encodeExportRequest, translateMetrics, type ExportRequestInput, type TranslateOptions } from './index.ts';

const NS = 1_000_000n;
const T = 1_732_950_000_000n;
const START = T - 90_000n;
const at = { startTimeUnixNano: START * NS, timeUnixNano: T * NS };

function request(): ExportRequestInput {
  return {
    resourceMetrics: [
      {
        resource: { 'service.name': 'api', 'host.name': 'h1' },
        scopeMetrics: [
          {
            metrics: [
              { name: 'requests', sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [{ ...at, value: 7 }] } },
              { name: 'queue_depth', sum: { aggregationTemporality: 2, isMonotonic: false, dataPoints: [{ ...at, value: 3 }] } },
              { name: 'temperature', gauge: { dataPoints: [{ ...at, value: 21 }] } },
              { name: 'delta_requests', sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [{ ...at, value: 2 }] } },
              {
                name: 'latency',
                unit: 's',
                histogram: { aggregationTemporality: 2, dataPoints: [{ ...at, count: 3, sum: 1.5, bucketCounts: [1, 2, 0], explicitBounds: [0.5, 1] }] },
              },
              {
                name: 'size',
                unit: 'By',
                exponentialHistogram: {
                  aggregationTemporality: 2,
                  dataPoints: [{ ...at, count: 2, sum: 6, scale: 0, positive: { offset: 1, bucketCounts: [2] } }],
                },
              },
              { name: 'rpc', unit: 's', summary: { dataPoints: [{ ...at, count: 4, sum: 2, quantileValues: [{ quantile: 0.5, value: 0.4 }] }] } },
            ],
          },
        ],
      },
    ],
  };
}

/** Each series' start timestamps: its samples' and histograms' (undefined: none). */
function starts(opts: TranslateOptions): Record<string, (number | undefined)[]> {
  const t = translateMetrics(decodeExportRequest(encodeExportRequest(request())), { allowDelta: true, ...opts });
  const out: Record<string, (number | undefined)[]> = {};
  for (const s of t.timeseries) {
    const key = s.labels
      .filter((l) => l.name === '__name__' || l.name === 'le' || l.name === 'quantile')
      .map((l) => l.value)
      .join(' ');
    out[key] = [...s.samples.map((x) => x.startTimestamp), ...(s.histograms ?? []).map((h) => readHistogram(new ProtoReader(h), h.length).startTimestamp)];
  }
  return out;
}

test('start times go with the samples of counters, histograms and summaries, never gauges, up-down sums, deltas or target_info', () => {
  const s = Number(START);
  assert.deepEqual(starts({ startTimestamps: true }), {
    requests_total: [s],
    queue_depth: [undefined],
    temperature: [undefined],
    delta_requests_total: [undefined],
    latency_seconds_sum: [s],
    latency_seconds_count: [s],
    'latency_seconds_bucket 0.5': [s],
    'latency_seconds_bucket 1': [s],
    'latency_seconds_bucket +Inf': [s],
    size_bytes: [s],
    rpc_seconds_sum: [s],
    rpc_seconds_count: [s],
    'rpc_seconds 0.5': [s],
    target_info: [undefined],
  });
});

test('custom-bucket histograms carry the start time; without the setting nothing does', () => {
  assert.deepEqual(starts({ startTimestamps: true, convertHistogramsToNhcb: true }).latency_seconds, [Number(START)]);
  for (const [series, values] of Object.entries(starts({})))
    assert.ok(
      values.every((v) => v === undefined),
      series,
    );
});
