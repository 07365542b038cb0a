// `npm start`'s single-process mode as a user meets it: one process on one
// port with its own Kafka; a 1000-series push reads back exactly, and a real
// Prometheus 2.42 scrapes and remote-writes into it. Tracing is on (an OTLP
// receiver in the test), so Prometheus also scrapes exemplars (OpenMetrics)
// and remote-writes them back, where they link to exported traces.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { api, generateSeries, push, waitFor, type MatrixSeries, type VectorSample } from './support/client.ts';

describe('single-process mode', { timeout: 600_000 }, () => {
  let strata: AppProcess;
  let dir: string;
  // What Strata exported over OTLP/HTTP: request paths and bodies.
  const otlp: { url: string; body: Buffer }[] = [];
  let otlpReceiver: Server;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-single-'));
    otlpReceiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        otlp.push({ url: req.url ?? '', body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => otlpReceiver.listen(0, '127.0.0.1', resolve));
    const [port] = await freePorts(1);
    strata = new AppProcess({
      name: 'strata',
      target: 'all',
      httpPort: port,
      logFile: join(dir, 'strata.log'),
      args: [
        '-auth.multitenancy-enabled=false',
        `-data-dir=${dir}/data`,
        `-server.http-listen-port=${port}`,
        `-tracing.otlp-endpoint=http://127.0.0.1:${(otlpReceiver.address() as AddressInfo).port}`,
      ],
    });
    strata.start();
    await strata.waitReady(180_000);
  });

  after(async () => {
    await strata?.kill('SIGTERM');
    await new Promise<void>((resolve) => (otlpReceiver ? otlpReceiver.close(() => resolve()) : resolve()));
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('startup log says what listens where', () => {
    const log = readFileSync(strata.opts.logFile, 'utf8');
    assert.match(log, /listening on http:\/\/127\.0\.0\.1:\d+: push .*\/api\/v1\/push/);
    assert.match(log, /local Kafka broker ready at 127\.0\.0\.1:\d+/);
  });

  test('1,000 series × 10 samples: count is 1000 and query_range returns exactly the pushed values', async () => {
    const start = Math.floor(Date.now() / 1000) * 1000 - 20 * 60_000;
    const series = generateSeries('quickstart_metric', 1000, 10, start, 10_000, (s, i) => s + i / 10);
    const res = await push(strata.url, series);
    assert.ok(res.status >= 200 && res.status < 300, `push: ${res.status} ${res.body}`);

    const at = String((start + 95_000) / 1000);
    const count = await waitFor('count() = 1000', async () => {
      const r = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', { query: 'count(quickstart_metric)', time: at });
      return r.data.result[0]?.value[1] === '1000' ? r : undefined;
    });
    assert.equal(count.data.result.length, 1);

    const range = await api<{ resultType: string; result: MatrixSeries[] }>(strata.url, '/prometheus/api/v1/query_range', {
      query: 'quickstart_metric',
      start: String(start / 1000),
      end: String((start + 90_000) / 1000),
      step: '10s',
    });
    assert.equal(range.httpStatus, 200, range.error);
    assert.equal(range.data.resultType, 'matrix');
    assert.equal(range.data.result.length, 1000);
    for (const s of range.data.result) {
      const n = Number(s.metric.instance.slice('host-'.length));
      const want = series[n].samples.map((p) => [p.timestamp / 1000, String(p.value)]);
      assert.deepEqual(s.values, want, s.metric.instance);
    }
  });

  test('a real Prometheus 2.42 scrapes a target and remote-writes it; the scraped series and exemplars are queryable', async (t) => {
    const prometheus = findPrometheus();
    if (!prometheus) {
      assert.fail('prometheus binary not found: install Debian package "prometheus" (.ci/run does)');
    }
    const [promPort] = await freePorts(1);
    const promDir = join(dir, 'prometheus');
    const config = join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      [
        'global:',
        '  scrape_interval: 1s',
        '  external_labels: { replica: e2e }',
        'scrape_configs:',
        '  - job_name: strata',
        `    static_configs: [{ targets: ["127.0.0.1:${strata.opts.httpPort}"] }]`,
        '  - job_name: prometheus',
        `    static_configs: [{ targets: ["127.0.0.1:${promPort}"] }]`,
        'remote_write:',
        `  - url: ${strata.url}/api/v1/push`,
        '    send_exemplars: true',
        '    queue_config: { batch_send_deadline: 1s, min_backoff: 100ms, max_backoff: 1s }',
        '',
      ].join('\n'),
    );
    const child: ChildProcess = spawn(
      prometheus,
      [`--config.file=${config}`, `--storage.tsdb.path=${promDir}`, `--web.listen-address=127.0.0.1:${promPort}`, '--enable-feature=exemplar-storage'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    t.after(() => {
      if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
    });
    const up = await waitFor(
      'up{job="strata"} and up{job="prometheus"} in Strata',
      async () => {
        const r = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', { query: 'up == 1' });
        const jobs = r.data.result.map((s) => s.metric.job).sort();
        return jobs.includes('strata') && jobs.includes('prometheus') ? r : undefined;
      },
      90_000,
    ).catch((err: Error) => assert.fail(`${err.message}\nprometheus stderr: ${stderr}`));
    for (const s of up.data.result) assert.equal(s.metric.replica, 'e2e', 'external labels arrive');
    const scraped = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', {
      query: 'count(strata_distributor_push_duration_seconds_bucket{job="strata"}) > 0',
    });
    assert.equal(scraped.data.result.length, 1, "Strata's own histogram, scraped by Prometheus, is queryable");
    const series = await api<Record<string, string>[]>(strata.url, '/prometheus/api/v1/series', { 'match[]': 'prometheus_build_info' });
    assert.ok(series.data.length >= 1 && series.data[0].version.startsWith('2.'), JSON.stringify(series.data));

    // Strata's push latency exemplars (trace ids of Prometheus' own remote-write pushes) went
    // Strata /metrics (OpenMetrics) → Prometheus scrape → remote write → Strata's exemplar storage.
    type ExemplarData = { seriesLabels: Record<string, string>; exemplars: { labels: Record<string, string>; value: string; timestamp: number }[] }[];
    const exemplars = await waitFor(
      'push latency exemplars in Strata',
      async () => {
        const r = await api<ExemplarData>(strata.url, '/prometheus/api/v1/query_exemplars', {
          query: 'strata_distributor_push_duration_seconds_bucket{job="strata"}',
          start: String(Date.now() / 1000 - 600),
          end: String(Date.now() / 1000 + 60),
        });
        const found = r.data.flatMap((s) => s.exemplars);
        return found.length > 0 ? found : undefined;
      },
      60_000,
    ).catch((err: Error) => assert.fail(`${err.message}\nprometheus stderr: ${stderr}`));
    const traceId = exemplars[0].labels.trace_id;
    assert.match(traceId, /^[0-9a-f]{32}$/, JSON.stringify(exemplars[0]));
    // The trace it names was exported over OTLP/HTTP (batched every few seconds).
    await waitFor(
      `trace ${traceId} exported over OTLP`,
      async () => (otlp.some((o) => o.url === '/v1/traces' && o.body.includes(Buffer.from(traceId, 'hex'))) ? true : undefined),
      30_000,
    );
    for (const span of ['distributor.push', 'distributor.produce', 'ingester.append', 'querier.query']) {
      assert.ok(
        otlp.some((o) => o.body.includes(Buffer.from(span))),
        `${span} spans exported`,
      );
    }
  });

  test('POST /ingester/flush lands blocks in <data-dir>/bucket/anonymous/<ULID>/ and queries still answer from them', async () => {
    const q = { query: 'count(count_over_time(quickstart_metric[1h]))' };
    const before = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', q);
    assert.deepEqual(
      before.data.result.map((r) => r.value[1]),
      ['1000'],
    );
    const res = await fetch(`${strata.url}/ingester/flush?wait=true`, { method: 'POST' });
    assert.equal(res.status, 204, await res.text());
    const tenantDir = join(dir, 'data', 'bucket', 'anonymous');
    const blocks = readdirSync(tenantDir).filter((n) => /^[0-9A-Z]{26}$/.test(n));
    assert.ok(blocks.length >= 1, `blocks in ${tenantDir}: ${readdirSync(tenantDir).join(', ')}`);
    for (const b of blocks) for (const f of ['meta.json', 'index', 'chunks/000001']) assert.ok(existsSync(join(tenantDir, b, f)), `${b}/${f}`);
    const after = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', q);
    assert.deepEqual(
      after.data.result.map((r) => r.value[1]),
      ['1000'],
      'the 1000 series read back from head + blocks after the flush',
    );
  });
});

function findPrometheus(): string | undefined {
  for (const p of ['/usr/bin/prometheus', '/usr/local/bin/prometheus']) if (existsSync(p)) return p;
  const r = spawnSync('which', ['prometheus']);
  return r.status === 0 ? r.stdout.toString().trim() : undefined;
}
