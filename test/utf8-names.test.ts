// Prometheus 3's UTF-8 names end to end, with a real Prometheus 3 as the
// reference: the same `http.server.request.duration{"service.name"="api"}`
// series is pushed over remote write 2.0 and over OTLP (NoTranslation) to both,
// and the quoted-name PromQL syntax, the series, labels and label values APIs
// (with Prometheus' `U__` escaping in the path) must answer the same. A tenant
// left on the legacy scheme gets a 400 that says which setting to change.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { compressBody, encodeWriteRequestV2 } from '@strata/remote-write';
import { encodeExportRequest } from '@strata/otlp';
import { waitFor } from './support/client.ts';
import { PROMETHEUS3 } from './support/promtool.ts';

const NAME = 'http.server.request.duration';
const UTF8_TENANT = 'otel';
const LEGACY_TENANT = 'legacy';
const T = Math.floor(Date.now() / 1000) * 1000 - 60_000;

const rw2 = (tenant?: string) => ({
  method: 'POST',
  headers: {
    'content-type': 'application/x-protobuf;proto=io.prometheus.write.v2.Request',
    'content-encoding': 'snappy',
    'x-prometheus-remote-write-version': '2.0.0',
    ...(tenant === undefined ? {} : { 'X-Scope-OrgID': tenant }),
  },
  body: compressBody(
    encodeWriteRequestV2({
      timeseries: [0, 1].map((k) => ({
        labels: [
          { name: '__name__', value: NAME },
          { name: 'http.response.status_code', value: k === 0 ? '200' : '500' },
          { name: 'service.name', value: 'api' },
          { name: 'via', value: 'rw2' },
        ],
        samples: [0, 1, 2].map((i) => ({ value: 0.25 * (i + 1) + k, timestamp: T + i * 15_000 })),
      })),
    }),
  ),
  signal: AbortSignal.timeout(30_000),
});

const otlp = (tenant?: string) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-protobuf', ...(tenant === undefined ? {} : { 'X-Scope-OrgID': tenant }) },
  body: encodeExportRequest({
    resourceMetrics: [
      {
        resource: { 'service.name': 'checkout' },
        scopeMetrics: [
          {
            scope: { name: 'e2e' },
            metrics: [
              {
                name: NAME,
                unit: 's',
                gauge: {
                  dataPoints: [0, 1, 2].map((i) => ({
                    attributes: { 'service.name': 'api', via: 'otlp', 'http.route': '/cart' },
                    timeUnixNano: BigInt(T + i * 15_000) * 1_000_000n,
                    value: 0.5 * (i + 1),
                  })),
                },
              },
            ],
          },
        ],
      },
    ],
  }),
  signal: AbortSignal.timeout(30_000),
});

interface Answer {
  status: string;
  data: unknown;
}

async function get(url: string, path: string, params: Record<string, string | string[]>, tenant?: string): Promise<Answer> {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const x of Array.isArray(v) ? v : [v]) qs.append(k, x);
  const res = await fetch(`${url}${path}?${qs}`, { headers: tenant === undefined ? {} : { 'X-Scope-OrgID': tenant }, signal: AbortSignal.timeout(30_000) });
  return (await res.json()) as Answer;
}

/** Results in a stable order (Prometheus sorts series by labels; the set is what must be equal). */
function normalised(data: unknown): unknown {
  if (Array.isArray(data)) return data.map(normalised).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  if (data !== null && typeof data === 'object') return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, normalised(v)]));
  return data;
}

describe('UTF-8 metric and label names, as Prometheus 3 has them', { timeout: 300_000 }, () => {
  let dir: string;
  let strata: AppProcess;
  let prometheus: ChildProcess | undefined;
  let promUrl: string;
  let promStderr = '';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-utf8-'));
    const [strataPort, promPort] = await freePorts(2);
    const runtime = join(dir, 'runtime.yaml');
    writeFileSync(runtime, `overrides:\n  ${UTF8_TENANT}:\n    name_validation_scheme: utf8\n    otel_translation_strategy: NoTranslation\n`);
    strata = new AppProcess({
      name: 'strata',
      target: 'all',
      httpPort: strataPort,
      logFile: join(dir, 'strata.log'),
      args: ['-auth.multitenancy-enabled=true', `-data-dir=${dir}/data`, `-server.http-listen-port=${strataPort}`, `-runtime-config.file=${runtime}`],
    });
    strata.start();
    writeFileSync(join(dir, 'prometheus.yml'), 'global:\n  scrape_interval: 1m\notlp:\n  translation_strategy: NoTranslation\n');
    promUrl = `http://127.0.0.1:${promPort}`;
    prometheus = spawn(
      PROMETHEUS3,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'prometheus')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        '--web.enable-remote-write-receiver',
        '--web.remote-write-receiver.accepted-protobuf-messages=prometheus.WriteRequest',
        '--web.remote-write-receiver.accepted-protobuf-messages=io.prometheus.write.v2.Request',
        '--web.enable-otlp-receiver',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    prometheus.stderr!.on('data', (d: Buffer) => (promStderr = (promStderr + d.toString()).slice(-4000)));
    await Promise.all([
      strata.waitReady(180_000),
      waitFor('Prometheus 3 ready', async () => ((await fetch(`${promUrl}/-/ready`).catch(() => undefined))?.ok ? true : undefined), 60_000).catch(
        (err: Error) => assert.fail(`${err.message}\nprometheus stderr: ${promStderr}`),
      ),
    ]);
  });

  after(async () => {
    if (prometheus?.pid !== undefined && prometheus.exitCode === null) process.kill(prometheus.pid, 'SIGKILL');
    await strata?.kill('SIGTERM');
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('a tenant on the legacy scheme gets 400 naming the setting, over remote write 2.0 and OTLP', async () => {
    const res = await fetch(`${strata.url}/api/v1/push`, rw2(LEGACY_TENANT));
    assert.equal(res.status, 400);
    assert.match(await res.text(), /invalid metric name "http\.server\.request\.duration".*name_validation_scheme to utf8/);
    // OTLP's default translation escapes the dots, so the same push is accepted under Prometheus 2 names.
    const o = await fetch(`${strata.url}/otlp/v1/metrics`, otlp(LEGACY_TENANT));
    assert.equal(o.status, 200, await o.text());
    await waitFor('the escaped OTLP series', async () => {
      const r = await get(
        strata.url,
        '/prometheus/api/v1/query',
        { query: 'http_server_request_duration_seconds{service_name="api"}', time: String(T / 1000 + 60) },
        LEGACY_TENANT,
      );
      return (r.data as { result: unknown[] }).result.length === 1 ? r : undefined;
    });
  });

  test('pushed over remote write 2.0 and OTLP (NoTranslation), UTF-8 names answer as Prometheus 3 answers', async () => {
    for (const [url, path, req] of [
      [strata.url, '/api/v1/push', rw2(UTF8_TENANT)],
      [promUrl, '/api/v1/write', rw2()],
      [strata.url, '/otlp/v1/metrics', otlp(UTF8_TENANT)],
      [promUrl, '/api/v1/otlp/v1/metrics', otlp()],
    ] as const) {
      const res = await fetch(`${url}${path}`, req);
      assert.ok(res.status === 204 || res.status === 200, `${url}${path}: ${res.status} ${await res.text()}`);
    }
    const at = String(T / 1000 + 40);
    const queries: [string, Record<string, string | string[]>][] = [
      ['/api/v1/query', { query: `{"${NAME}", "service.name"="api"}`, time: at }],
      ['/api/v1/query', { query: `sum by ("service.name", via) ({"${NAME}"})`, time: at }],
      ['/api/v1/query', { query: `{"${NAME}", "http.response.status_code"=~"5.."}`, time: at }],
      ['/api/v1/query', { query: `label_replace({"${NAME}", via="otlp"}, "route.copy", "$1", "http.route", "(.*)")`, time: at }],
      ['/api/v1/query_range', { query: `max by ("http.route") ({"${NAME}"})`, start: String(T / 1000), end: at, step: '15' }],
      ['/api/v1/series', { 'match[]': `{"${NAME}"}`, start: String(T / 1000 - 60), end: at }],
      ['/api/v1/labels', { 'match[]': `{"${NAME}"}`, start: String(T / 1000 - 60), end: at }],
      ['/api/v1/label/U__service_2e_name/values', { start: String(T / 1000 - 60), end: at }],
      ['/api/v1/label/U__http_2e_route/values', { start: String(T / 1000 - 60), end: at }],
      ['/api/v1/label/__name__/values', { start: String(T / 1000 - 60), end: at }],
    ];
    // Ingestion is asynchronous in Strata: wait for the first query to see all three series.
    await waitFor('both pushes in Strata', async () => {
      const r = await get(strata.url, '/prometheus/api/v1/query', queries[0][1], UTF8_TENANT);
      return (r.data as { result: unknown[] }).result.length === 3 ? true : undefined;
    });
    for (const [path, params] of queries) {
      const [p, s] = await Promise.all([get(promUrl, path, params), get(strata.url, `/prometheus${path}`, params, UTF8_TENANT)]);
      assert.equal(p.status, 'success', `Prometheus 3 ${path} ${JSON.stringify(params)}: ${JSON.stringify(p)}`);
      assert.equal(s.status, 'success', `Strata ${path} ${JSON.stringify(params)}: ${JSON.stringify(s)}`);
      assert.deepEqual(normalised(s.data), normalised(p.data), `${path} ${JSON.stringify(params)}`);
      assert.notDeepEqual(normalised(p.data), normalised({ resultType: 'vector', result: [] }), `${path}: Prometheus 3 found something`);
    }
  });
});
