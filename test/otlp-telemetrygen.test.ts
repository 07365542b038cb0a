// OpenTelemetry's own load generator against Strata and Prometheus 3.16 at once:
// telemetrygen (built by the test bootstrap) sends cumulative and delta sums, gauges
// and cumulative and delta explicit-bucket histograms over OTLP/HTTP to a tee that
// hands every request to both, so both store the very same points. Strata's tenant has
// native delta ingestion, resource-attribute promotion, scope promotion and NHCB on;
// Prometheus runs with otlp-native-delta-ingestion and the same `otlp` block. Every
// query, the series, metadata and target_info must answer the same.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import { freePorts } from '@strata/local-cluster';
import { compressBody, encodeWriteRequest } from '@strata/remote-write';
import { encodeExportRequest } from '@strata/otlp';
import { TELEMETRYGEN } from '../scripts/telemetrygen.mjs';
import { waitFor } from './support/client.ts';
import { startPrometheus3, type Prometheus3 } from './support/prometheus3.ts';
import { startSingleProcess, type SingleProcess } from './support/single-process.ts';

const run = promisify(execFile);
const PROMOTED = ['deployment.environment', 'k8s.namespace.name'];

const RUNTIME_CONFIG = `overrides:
  anonymous:
    otel_native_delta_ingestion: true
    otel_convert_histograms_to_nhcb: true
    otel_promote_scope_metadata: true
    promote_otel_resource_attributes: ${PROMOTED.join(',')}
`;
const PROMETHEUS_CONFIG = `global:
  scrape_interval: 1m
otlp:
  promote_resource_attributes: [${PROMOTED.join(', ')}]
  convert_histograms_to_nhcb: true
  promote_scope_metadata: true
`;

interface Answer {
  status: string;
  data: unknown;
}

async function get(url: string, path: string, params: Record<string, string>): Promise<Answer> {
  const res = await fetch(`${url}${path}?${new URLSearchParams(params)}`, { signal: AbortSignal.timeout(30_000) });
  return (await res.json()) as Answer;
}

/** Results in a stable order: the set of series is what must be equal, not Prometheus' sort. */
function normalised(data: unknown): unknown {
  if (Array.isArray(data)) return data.map(normalised).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  if (data !== null && typeof data === 'object') return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, normalised(v)]));
  return data;
}

/** An OTLP/HTTP endpoint that hands each request to both receivers and answers with Strata's answer. */
async function startTee(strataUrl: string, promUrl: string): Promise<{ server: Server; port: number; statuses: [number, number][] }> {
  const [port] = await freePorts(1);
  const statuses: [number, number][] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = { 'content-type': req.headers['content-type'] ?? '' };
      if (req.headers['content-encoding'] !== undefined) headers['content-encoding'] = req.headers['content-encoding'];
      const body = Buffer.concat(chunks);
      const send = (url: string) => fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) });
      void Promise.all([send(`${strataUrl}/otlp/v1/metrics`), send(`${promUrl}/api/v1/otlp/v1/metrics`)]).then(
        async ([s, p]) => {
          statuses.push([s.status, p.status]);
          const answer = Buffer.from(await s.arrayBuffer());
          await p.arrayBuffer();
          res.writeHead(s.status, { 'content-type': s.headers.get('content-type') ?? 'application/x-protobuf' }).end(answer);
        },
        (err: Error) => res.writeHead(502).end(err.message),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { server, port, statuses };
}

/** One telemetrygen run: `count` points of one metric, 5 per second, each its own OTLP/HTTP request. */
async function telemetrygen(port: number, name: string, type: string, temporality: string, count: number): Promise<void> {
  const args = [
    'metrics',
    '--otlp-http',
    '--otlp-insecure',
    `--otlp-endpoint=127.0.0.1:${port}`,
    '--service=tg',
    // One resource per run: Prometheus refuses a whole request whose target_info sample is out of order.
    `--otlp-attributes=service.instance.id="${name}"`,
    '--otlp-attributes=deployment.environment="e2e"',
    '--otlp-attributes=k8s.namespace.name="shop"',
    '--otlp-attributes=host.name="node-1"',
    '--telemetry-attributes=http.route="/cart"',
    `--otlp-metric-name=${name}`,
    `--metric-type=${type}`,
    `--aggregation-temporality=${temporality}`,
    `--metrics=${count}`,
    '--rate=5',
    '--workers=1',
    // One point per request, as an SDK exporting on its interval does (telemetrygen batches 100 by default).
    '--batch=false',
  ];
  await run(TELEMETRYGEN, args, { timeout: 120_000 });
}

describe('telemetrygen over OTLP/HTTP: Strata answers as Prometheus 3 does', { timeout: 600_000 }, () => {
  let dir: string;
  let strata: SingleProcess;
  let prometheus: Prometheus3;
  let tee: Awaited<ReturnType<typeof startTee>>;
  let start = 0;
  let end = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-telemetrygen-'));
    const runtime = join(dir, 'runtime.yaml');
    writeFileSync(runtime, RUNTIME_CONFIG);
    [strata, prometheus] = await Promise.all([
      startSingleProcess('telemetrygen', [`-runtime-config.file=${runtime}`]),
      startPrometheus3(
        dir,
        ['--web.enable-otlp-receiver', '--web.enable-remote-write-receiver', '--enable-feature=otlp-native-delta-ingestion,exemplar-storage'],
        PROMETHEUS_CONFIG,
      ),
    ]);
    tee = await startTee(strata.strata.url, prometheus.url);
    start = Math.floor(Date.now() / 1000) - 1;
    await Promise.all([
      telemetrygen(tee.port, 'tg.requests', 'Sum', 'cumulative', 30),
      telemetrygen(tee.port, 'tg.delta.requests', 'Sum', 'delta', 30),
      telemetrygen(tee.port, 'tg.queue', 'Gauge', 'cumulative', 30),
      telemetrygen(tee.port, 'tg.latency', 'Histogram', 'cumulative', 30),
      telemetrygen(tee.port, 'tg.delta.latency', 'Histogram', 'delta', 30),
    ]);
    end = Math.ceil(Date.now() / 1000) + 1;
  });

  after(async () => {
    tee?.server.close();
    prometheus?.stop();
    await strata?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('every telemetrygen request, delta ones included, is answered 200 by both', () => {
    assert.equal(tee.statuses.length, 150);
    assert.deepEqual(
      tee.statuses.filter(([s, p]) => s !== 200 || p !== 200),
      [],
    );
  });

  test('queries over sums, deltas, gauges and NHCB answer the same, promoted attributes as labels', async () => {
    const range = { start: String(start), end: String(end), step: '1' };
    // Strata ingests through Kafka: wait until it holds every point Prometheus holds.
    const all = { query: 'count_over_time({__name__=~"tg_.*|target_info"}[5m])', time: String(end) };
    await waitFor('Strata to hold every point', async () => {
      const [p, s] = await Promise.all([get(prometheus.url, '/api/v1/query', all), get(strata.strata.url, '/prometheus/api/v1/query', all)]);
      return JSON.stringify(normalised(s.data)) === JSON.stringify(normalised(p.data)) ? true : undefined;
    });
    const queries = [
      'tg_requests_total',
      'rate(tg_requests_total[5s])',
      'tg_delta_requests_total',
      'sum_over_time(tg_delta_requests_total[5s])',
      'sum_over_time(tg_delta_requests_total[5s]) / 5',
      'tg_queue',
      'tg_latency',
      'histogram_quantile(0.9, tg_latency)',
      'histogram_fraction(0, 100, tg_latency)',
      'rate(tg_latency[5s])',
      'histogram_quantile(0.5, rate(tg_latency[5s]))',
      'histogram_count(rate(tg_latency[5s]))',
      'sum by (deployment_environment) (tg_latency)',
      'tg_delta_latency',
      'histogram_quantile(0.9, sum_over_time(tg_delta_latency[5s]))',
      'histogram_sum(sum_over_time(tg_delta_latency[5s]))',
      'count by (__name__, job, instance, deployment_environment, k8s_namespace_name, http_route, host_name) ({__name__=~"tg_.*|target_info"})',
    ];
    for (const query of queries) {
      const params = { query, ...range };
      const [p, s] = await Promise.all([get(prometheus.url, '/api/v1/query_range', params), get(strata.strata.url, '/prometheus/api/v1/query_range', params)]);
      assert.equal(p.status, 'success', `Prometheus 3 ${query}: ${JSON.stringify(p)}`);
      assert.equal(s.status, 'success', `Strata ${query}: ${JSON.stringify(s)}`);
      assert.notDeepEqual((p.data as { result: unknown[] }).result, [], `${query}: Prometheus 3 found something`);
      assert.deepEqual(normalised(s.data), normalised(p.data), query);
    }
    const series = { 'match[]': '{job="tg"}', start: String(start), end: String(end) };
    const [ps, ss] = await Promise.all([get(prometheus.url, '/api/v1/series', series), get(strata.strata.url, '/prometheus/api/v1/series', series)]);
    assert.deepEqual(normalised(ss.data), normalised(ps.data), 'series');
    const nhcb = (ss.data as Record<string, string>[]).find((l) => l.__name__ === 'tg_latency');
    assert.deepEqual(nhcb, {
      __name__: 'tg_latency',
      deployment_environment: 'e2e',
      http_route: '/cart',
      instance: 'tg.latency',
      job: 'tg',
      k8s_namespace_name: 'shop',
    });
    assert.ok(!(ss.data as Record<string, string>[]).some((l) => l.__name__ === 'tg_latency_bucket'), 'NHCB: no _bucket series');
  });

  // Prometheus 3 serves /api/v1/metadata from its scrape targets only, so this is checked against its documented types.
  test('metadata: delta sums and histograms are unknown, cumulative ones counter and histogram, as Prometheus 3 records them', async () => {
    const s = await get(strata.strata.url, '/prometheus/api/v1/metadata', {});
    const ours = (d: unknown) =>
      Object.fromEntries(
        Object.entries(d as Record<string, { type: string; unit: string }[]>)
          .filter(([name]) => name.startsWith('tg_'))
          .map(([n, [m]]) => [n, m.type]),
      );
    assert.deepEqual(ours(s.data), {
      tg_delta_latency: 'unknown',
      tg_delta_requests_total: 'unknown',
      tg_latency: 'histogram',
      tg_queue: 'gauge',
      tg_requests_total: 'counter',
    });
  });

  test('target_info spans a request every 2.5 minutes; exponential histograms keep their exemplars (zero threshold as Prometheus 3)', async () => {
    const ns = (s: number) => BigInt(s) * 1_000_000_000n;
    const latest = end - 1;
    const traceId = '0102030405060708090a0b0c0d0e0f10';
    const spanId = 'a0a1a2a3a4a5a6a7';
    const body = encodeExportRequest({
      resourceMetrics: [
        {
          resource: { 'service.name': 'spanning', 'service.instance.id': 'i-1', 'host.name': 'node-2' },
          scopeMetrics: [
            {
              metrics: [
                { name: 'spanning.gauge', gauge: { dataPoints: [{ timeUnixNano: ns(latest - 400), value: 1 }] } },
                {
                  name: 'spanning.latency',
                  exponentialHistogram: {
                    aggregationTemporality: 2,
                    dataPoints: [
                      {
                        timeUnixNano: ns(latest),
                        count: 9,
                        sum: 4.5,
                        scale: 2,
                        zeroCount: 3,
                        zeroThreshold: 0.001,
                        positive: { offset: -2, bucketCounts: [1, 2, 0, 0, 0, 3] },
                        exemplars: [{ timeUnixNano: ns(latest - 2), value: 0.7, traceId, spanId }],
                      },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
    });
    const post = (url: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body }).then((r) => r.status);
    assert.deepEqual(await Promise.all([post(`${strata.strata.url}/otlp/v1/metrics`), post(`${prometheus.url}/api/v1/otlp/v1/metrics`)]), [200, 200]);
    const samples = { query: 'target_info{job="spanning"}[10m]', time: String(latest) };
    const p = await get(prometheus.url, '/api/v1/query', samples);
    const s = await waitFor('the spanning resource in Strata', async () => {
      const r = await get(strata.strata.url, '/prometheus/api/v1/query', samples);
      return (r.data as { result: unknown[] }).result.length > 0 ? r : undefined;
    });
    assert.deepEqual(normalised(s.data), normalised(p.data), 'target_info samples');
    const values = (p.data as { result: { values: [number, string][] }[] }).result[0].values.map(([t]) => latest - t);
    assert.deepEqual(values, [400, 250, 100, 0], 'Prometheus 3 writes target_info every 150 s from the earliest point, then at the latest');
    const histogram = { query: 'spanning_latency', time: String(latest) };
    const [ph, sh] = await Promise.all([get(prometheus.url, '/api/v1/query', histogram), get(strata.strata.url, '/prometheus/api/v1/query', histogram)]);
    assert.deepEqual(normalised(sh.data), normalised(ph.data), 'the histogram, its zero bucket included');
    const exemplars = { query: 'spanning_latency', start: String(latest - 10), end: String(latest) };
    const [pe, se] = await Promise.all([
      get(prometheus.url, '/api/v1/query_exemplars', exemplars),
      get(strata.strata.url, '/prometheus/api/v1/query_exemplars', exemplars),
    ]);
    assert.notDeepEqual(pe.data, [], 'Prometheus 3 keeps the exemplar');
    assert.deepEqual(normalised(se.data), normalised(pe.data), 'exemplars');
  });

  test('scope promotion and Content-Encoding: both take gzip OTLP; remote write gzip is 415 on both; zstd OTLP only Strata (as Mimir)', async () => {
    const t = BigInt(end - 1) * 1_000_000_000n;
    const body = encodeExportRequest({
      resourceMetrics: [
        {
          resource: { 'service.name': 'scoped', 'deployment.environment': 'e2e' },
          scopeMetrics: [
            {
              scope: { name: 'e2e.meter', version: '1.4.0', attributes: { 'meter.team': 'obs' } },
              schemaUrl: 'https://opentelemetry.io/schemas/1.26.0',
              metrics: [{ name: 'scoped.gauge', gauge: { dataPoints: [{ timeUnixNano: t, value: 7 }] } }],
            },
          ],
        },
      ],
    });
    const post = (url: string, encoding: string, payload: Buffer) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'content-encoding': encoding }, body: payload }).then((r) => r.status);
    assert.deepEqual(
      await Promise.all([
        post(`${strata.strata.url}/otlp/v1/metrics`, 'gzip', gzipSync(body)),
        post(`${prometheus.url}/api/v1/otlp/v1/metrics`, 'gzip', gzipSync(body)),
      ]),
      [200, 200],
    );
    const zstd = zstdCompressSync(body);
    assert.deepEqual(
      await Promise.all([post(`${strata.strata.url}/otlp/v1/metrics`, 'zstd', zstd), post(`${prometheus.url}/api/v1/otlp/v1/metrics`, 'zstd', zstd)]),
      [200, 400],
      "zstd: Strata takes it as Mimir's OTLP endpoint does, Prometheus 3 only gzip",
    );
    const rw = gzipSync(
      compressBody(encodeWriteRequest({ timeseries: [{ labels: [{ name: '__name__', value: 'rw_gzip' }], samples: [{ value: 1, timestamp: Date.now() }] }] })),
    );
    assert.deepEqual(
      await Promise.all([post(`${strata.strata.url}/api/v1/push`, 'gzip', rw), post(`${prometheus.url}/api/v1/write`, 'gzip', rw)]),
      [415, 415],
      'remote write is snappy only, on both',
    );
    const query = { query: '{otel_scope_name="e2e.meter"}', time: String(end) };
    const p = await get(prometheus.url, '/api/v1/query', query);
    const s = await waitFor('the scoped series in Strata', async () => {
      const r = await get(strata.strata.url, '/prometheus/api/v1/query', query);
      return (r.data as { result: unknown[] }).result.length > 0 ? r : undefined;
    });
    assert.deepEqual(normalised(s.data), normalised(p.data));
    assert.deepEqual((s.data as { result: { metric: Record<string, string> }[] }).result[0].metric, {
      __name__: 'scoped_gauge',
      deployment_environment: 'e2e',
      job: 'scoped',
      otel_scope_meter_team: 'obs',
      otel_scope_name: 'e2e.meter',
      otel_scope_schema_url: 'https://opentelemetry.io/schemas/1.26.0',
      otel_scope_version: '1.4.0',
    });
  });
});
