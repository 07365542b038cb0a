// Remote write 2.0 and OTLP end to end in single-process mode: pushed over HTTP,
// through the distributor and Kafka into the ingester, read back with PromQL.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import type { AppProcess } from '@strata/local-cluster';
import { compressBody, encodeWriteRequest, encodeWriteRequestV2 } from '@strata/remote-write';
import { encodeExportRequest, encodeExportRequestJson, type ExportRequestInput } from '@strata/otlp';
import { api, waitFor, type MatrixSeries, type VectorSample } from './support/client.ts';
import { startSingleProcess, type SingleProcess } from './support/single-process.ts';

describe('remote write 2.0 and OTLP in single-process mode', { timeout: 300_000 }, () => {
  let sp: SingleProcess;
  let strata: AppProcess;
  const start = Math.floor(Date.now() / 1000) * 1000 - 10 * 60_000;
  const at = (ms: number) => String(ms / 1000);

  before(async () => {
    sp = await startSingleProcess('protocols');
    strata = sp.strata;
  });

  after(async () => {
    await sp?.stop();
  });

  test('remote write 2.0: 204 with the Written headers, then the series and values read back', async () => {
    const timeseries = Array.from({ length: 50 }, (_, s) => ({
      labels: [
        { name: '__name__', value: 'rw2_metric' },
        { name: 'instance', value: `host-${s}` },
        { name: 'job', value: 'rw2' },
      ],
      samples: Array.from({ length: 5 }, (_, i) => ({ value: s * 10 + i, timestamp: start + i * 15_000 })),
      exemplars: s === 0 ? [{ labels: [{ name: 'trace_id', value: '4bf92f3577b34da6a3ce929d0e0e4736' }], value: 1, timestamp: start }] : [],
      metadata: { type: 'gauge' as const, help: 'A remote write 2.0 gauge.', unit: '' },
    }));
    const res = await fetch(`${strata.url}/api/v1/push`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-protobuf;proto=io.prometheus.write.v2.Request',
        'content-encoding': 'snappy',
        'x-prometheus-remote-write-version': '2.0.0',
      },
      body: compressBody(encodeWriteRequestV2({ timeseries })),
      signal: AbortSignal.timeout(30_000),
    });
    assert.equal(res.status, 204, await res.text());
    assert.equal(res.headers.get('x-prometheus-remote-write-samples-written'), '250');
    assert.equal(res.headers.get('x-prometheus-remote-write-histograms-written'), '0');
    assert.equal(res.headers.get('x-prometheus-remote-write-exemplars-written'), '1');

    await waitFor('count(rw2_metric) = 50', async () => {
      const r = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', { query: 'count(rw2_metric)', time: at(start + 60_000) });
      return r.data.result[0]?.value[1] === '50' ? r : undefined;
    });
    const range = await api<{ result: MatrixSeries[] }>(strata.url, '/prometheus/api/v1/query_range', {
      query: 'rw2_metric{instance="host-7"}',
      start: at(start),
      end: at(start + 60_000),
      step: '15s',
    });
    assert.equal(range.httpStatus, 200, range.error);
    assert.deepEqual(range.data.result[0].metric, { __name__: 'rw2_metric', instance: 'host-7', job: 'rw2' });
    assert.deepEqual(
      range.data.result[0].values,
      [0, 1, 2, 3, 4].map((i) => [(start + i * 15_000) / 1000, String(70 + i)]),
    );
  });

  const ns = (ms: number) => BigInt(ms) * 1_000_000n;

  function otlpRequest(offsetMs: number, requests: number): ExportRequestInput {
    const t = ns(start + offsetMs);
    return {
      resourceMetrics: [
        {
          resource: { 'service.namespace': 'shop', 'service.name': 'cart', 'service.instance.id': 'cart-1', 'cloud.region': 'eu-west-1' },
          scopeMetrics: [
            {
              scope: { name: 'e2e' },
              metrics: [
                {
                  name: 'app.requests',
                  sum: {
                    aggregationTemporality: 2,
                    isMonotonic: true,
                    dataPoints: [
                      {
                        attributes: { 'http.route': '/checkout' },
                        timeUnixNano: t,
                        value: requests,
                        exemplars: [{ value: 1, timeUnixNano: t, traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' }],
                      },
                    ],
                  },
                },
                { name: 'app.queue.depth', unit: '{item}', gauge: { dataPoints: [{ timeUnixNano: t, value: 12 }] } },
                {
                  name: 'app.latency',
                  unit: 'ms',
                  histogram: {
                    aggregationTemporality: 2,
                    dataPoints: [{ timeUnixNano: t, count: 10, sum: 420, bucketCounts: [2, 5, 3], explicitBounds: [10, 100] }],
                  },
                },
              ],
            },
          ],
        },
      ],
    };
  }

  test('OTLP protobuf and JSON+gzip: 200, then queryable under the Prometheus names with job, instance and target_info', async () => {
    const proto = await fetch(`${strata.url}/otlp/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: encodeExportRequest(otlpRequest(0, 5)),
      signal: AbortSignal.timeout(30_000),
    });
    assert.equal(proto.status, 200, await proto.clone().text());
    assert.equal(proto.headers.get('content-type'), 'application/x-protobuf');
    assert.equal((await proto.arrayBuffer()).byteLength, 0);

    const json = await fetch(`${strata.url}/otlp/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(encodeExportRequestJson(otlpRequest(30_000, 9))),
      signal: AbortSignal.timeout(30_000),
    });
    assert.equal(json.status, 200, await json.clone().text());
    assert.equal(await json.text(), '{}');

    const ids = { job: 'shop/cart', instance: 'cart-1' };
    const requests = await waitFor('app_requests_total at both timestamps', async () => {
      const r = await api<{ result: MatrixSeries[] }>(strata.url, '/prometheus/api/v1/query_range', {
        query: 'app_requests_total',
        start: at(start),
        end: at(start + 30_000),
        step: '30s',
      });
      // Ingestion is asynchronous: until the second sample lands, lookback repeats the first one.
      return r.data.result[0]?.values[1]?.[1] === '9' ? r : undefined;
    });
    assert.deepEqual(requests.data.result[0].metric, { __name__: 'app_requests_total', http_route: '/checkout', ...ids });
    assert.deepEqual(requests.data.result[0].values, [
      [start / 1000, '5'],
      [(start + 30_000) / 1000, '9'],
    ]);

    const instant = async (query: string) => {
      const r = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', { query, time: at(start + 30_000) });
      assert.equal(r.httpStatus, 200, r.error);
      return r.data.result;
    };
    assert.deepEqual(
      (await instant('app_queue_depth')).map((s) => [s.metric, s.value[1]]),
      [[{ __name__: 'app_queue_depth', ...ids }, '12']],
    );
    const buckets = await instant('app_latency_milliseconds_bucket');
    assert.deepEqual(buckets.map((s) => [s.metric.le, s.value[1]]).sort(), [
      ['+Inf', '10'],
      ['10', '2'],
      ['100', '7'],
    ]);
    assert.equal((await instant('app_latency_milliseconds_count'))[0].value[1], '10');
    assert.equal((await instant('app_latency_milliseconds_sum'))[0].value[1], '420');
    const median = await instant('histogram_quantile(0.5, app_latency_milliseconds_bucket)');
    assert.ok(Number(median[0].value[1]) > 10 && Number(median[0].value[1]) <= 100, `median ${median[0].value[1]}`);
    assert.deepEqual(
      (await instant('target_info')).map((s) => s.metric),
      [{ __name__: 'target_info', cloud_region: 'eu-west-1', ...ids }],
    );
  });

  test('OTLP delta sums are refused with a 400 naming the metric; the rest of the request is stored', async () => {
    const req = otlpRequest(60_000, 11);
    req.resourceMetrics[0].scopeMetrics[0].metrics.push({
      name: 'app.delta',
      sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [{ timeUnixNano: ns(start + 60_000), value: 1 }] },
    });
    const res = await fetch(`${strata.url}/otlp/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: encodeExportRequestJson(req),
      signal: AbortSignal.timeout(30_000),
    });
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { message: string }).message, /"app\.delta" is a sum with delta aggregation temporality/);
    await waitFor('app_requests_total = 11', async () => {
      const r = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', { query: 'app_requests_total', time: at(start + 60_000) });
      return r.data.result[0]?.value[1] === '11' ? r : undefined;
    });
    const delta = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', {
      query: '{__name__=~"app_delta.*"}',
      time: at(start + 60_000),
    });
    assert.deepEqual(delta.data.result, []);
  });

  test('native histograms over remote write 1.0 and 2.0 are stored and queryable; an invalid one is refused by name, the rest written', async () => {
    const t = start + 120_000;
    const floats = (name: string) => ({ labels: [{ name: '__name__', value: name }], samples: [{ value: 7, timestamp: t }] });
    const hist = (name: string, count = 3) => ({
      labels: [{ name: '__name__', value: name }],
      samples: [],
      histograms: [histogramBody(t, count, count), histogramBody(t + 15_000, count + 2, count + 2)],
    });
    const rw1 = await fetch(`${strata.url}/api/v1/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' },
      // An exemplar on a native histogram series, as Prometheus keeps them (a trace id on an observation).
      body: compressBody(
        encodeWriteRequest({
          timeseries: [
            { ...hist('nh_rw1_hist'), exemplars: [{ labels: [{ name: 'trace_id', value: 'a1b2c3d4e5f60718293a4b5c6d7e8f90' }], value: 0.75, timestamp: t }] },
            floats('nh_rw1_float'),
          ],
        }),
      ),
      signal: AbortSignal.timeout(30_000),
    });
    assert.equal(rw1.status, 200, await rw1.text());
    const rw2 = await fetch(`${strata.url}/api/v1/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf;proto=io.prometheus.write.v2.Request', 'content-encoding': 'snappy' },
      body: compressBody(encodeWriteRequestV2({ timeseries: [hist('nh_rw2_hist', 4), floats('nh_rw2_float')] })),
      signal: AbortSignal.timeout(30_000),
    });
    assert.equal(rw2.status, 204, await rw2.text());
    assert.equal(rw2.headers.get('x-prometheus-remote-write-histograms-written'), '2');
    assert.equal(rw2.headers.get('x-prometheus-remote-write-samples-written'), '1');
    // count 9 but buckets totalling 3: invalid, refused naming the series; the float beside it is written.
    const bad = await fetch(`${strata.url}/api/v1/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf;proto=io.prometheus.write.v2.Request', 'content-encoding': 'snappy' },
      body: compressBody(
        encodeWriteRequestV2({
          timeseries: [{ labels: [{ name: '__name__', value: 'nh_bad_hist' }], samples: [], histograms: [histogramBody(t, 9, 3)] }, floats('nh_bad_float')],
        }),
      ),
      signal: AbortSignal.timeout(30_000),
    });
    const badBody = await bad.text();
    assert.equal(bad.status, 400, badBody);
    assert.match(badBody, /invalid native histogram in series \{__name__="nh_bad_hist"\}: histogram count 9 does not match its buckets' total 3/);
    assert.equal(bad.headers.get('x-prometheus-remote-write-histograms-written'), '0');
    assert.equal(bad.headers.get('x-prometheus-remote-write-samples-written'), '1');

    for (const name of ['nh_rw1_float', 'nh_rw2_float', 'nh_bad_float']) {
      await waitFor(`${name} stored`, async () => {
        const r = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', { query: name, time: at(t) });
        return r.data.result[0]?.value[1] === '7' ? r : undefined;
      });
    }
    for (const [name, count] of [
      ['nh_rw1_hist', 3],
      ['nh_rw2_hist', 4],
    ] as const) {
      const inst = await waitFor(`${name} stored`, async () => {
        const r = await api<{ result: { metric: Record<string, string>; histogram?: [number, { count: string; sum: string; buckets: unknown[] }] }[] }>(
          strata.url,
          '/prometheus/api/v1/query',
          { query: name, time: at(t + 15_000) },
        );
        return r.data.result[0]?.histogram !== undefined ? r : undefined;
      });
      // Schema 0, one bucket at index 0: (0.5, 1], boundary rule 0 (left open, right closed).
      assert.deepEqual(
        inst.data.result[0].histogram?.[1],
        { count: String(count + 2), sum: String(count + 2), buckets: [[0, '0.5', '1', String(count + 2)]] },
        name,
      );
      const range = await api<{ result: { histograms?: [number, { count: string }][] }[] }>(strata.url, '/prometheus/api/v1/query_range', {
        query: name,
        start: at(t),
        end: at(t + 15_000),
        step: '15',
      });
      assert.deepEqual(
        range.data.result[0].histograms?.map(([ts, h]) => [ts * 1000, h.count]),
        [
          [t, String(count)],
          [t + 15_000, String(count + 2)],
        ],
        name,
      );
      const c = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', { query: `histogram_count(${name})`, time: at(t + 15_000) });
      assert.equal(c.data.result[0]?.value[1], String(count + 2), name);
    }
    const stored = await api<string[]>(strata.url, '/prometheus/api/v1/label/__name__/values', {});
    assert.ok(!stored.data.includes('nh_bad_hist'), 'the invalid histogram series was not stored');
    const ex = await api<{ seriesLabels: Record<string, string>; exemplars: { labels: Record<string, string>; value: string; timestamp: number }[] }[]>(
      strata.url,
      '/prometheus/api/v1/query_exemplars',
      { query: 'nh_rw1_hist', start: at(t - 60_000), end: at(t + 60_000) },
    );
    assert.deepEqual(ex.data, [
      {
        seriesLabels: { __name__: 'nh_rw1_hist' },
        exemplars: [{ labels: { trace_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90' }, value: '0.75', timestamp: t / 1000 }],
      },
    ]);
  });

  test('OTLP cumulative exponential histograms are stored as native histograms (scale 10 downscaled to schema 8) and queryable', async () => {
    const t = start + 180_000;
    const otlp = otlpRequest(180_000, 13);
    otlp.resourceMetrics[0].scopeMetrics[0].metrics.push({
      name: 'nh_otlp_hist',
      exponentialHistogram: {
        aggregationTemporality: 2,
        dataPoints: [
          { timeUnixNano: ns(t), count: 9, sum: 12, scale: 10, zeroCount: 1, positive: { offset: 0, bucketCounts: [1, 1, 1, 1, 1, 1, 1, 1] } },
          { timeUnixNano: ns(t + 15_000), count: 12, sum: 15, scale: 10, zeroCount: 1, positive: { offset: 0, bucketCounts: [2, 1, 1, 1, 1, 1, 1, 3] } },
        ],
      },
    });
    const res = await fetch(`${strata.url}/otlp/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: encodeExportRequest(otlp),
      signal: AbortSignal.timeout(30_000),
    });
    assert.equal(res.status, 200, await res.text());
    const inst = await waitFor('nh_otlp_hist stored', async () => {
      const r = await api<{ result: { histogram?: [number, { count: string; sum: string; buckets: [number, string, string, string][] }] }[] }>(
        strata.url,
        '/prometheus/api/v1/query',
        { query: 'nh_otlp_hist', time: at(t + 15_000) },
      );
      return r.data.result[0]?.histogram !== undefined ? r : undefined;
    });
    const h = inst.data.result[0].histogram![1];
    assert.equal(h.count, '12');
    assert.equal(h.sum, '15');
    // Schema 8: OTLP buckets 0..3 merge into bucket 1 = (1, 2^(1/256)], 4..7 into bucket 2; the zero bucket [-0, 0] first.
    assert.deepEqual(
      h.buckets.map((b) => [b[0], b[3]]),
      [
        [3, '1'],
        [0, '5'],
        [0, '6'],
      ],
    );
    assert.equal(h.buckets[1][1], '1');
    assert.equal(Number(h.buckets[1][2]), 2 ** (1 / 256));
    const c = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', { query: 'histogram_count(nh_otlp_hist)', time: at(t) });
    assert.equal(c.data.result[0]?.value[1], '9');
  });
});

/** A prompb Histogram message: count_int (1), sum = count (3), schema = 0 (4), one positive span of one bucket holding `bucket` (11, 12), timestamp (15). */
function histogramBody(timestampMs: number, count: number, bucket: number): Uint8Array {
  const varint = (n: number) => {
    const out: number[] = [];
    let v = BigInt(n);
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    out.push(Number(v));
    return out;
  };
  const sum = Buffer.alloc(8);
  sum.writeDoubleLE(count);
  const span = [0x08, 0x00, 0x10, 0x01]; // offset 0 (sint32), length 1
  return Uint8Array.from([0x08, count, 0x19, ...sum, 0x20, 0, 0x5a, span.length, ...span, 0x62, 1, bucket * 2, 0x78, ...varint(timestampMs)]);
}
