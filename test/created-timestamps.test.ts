// Start (created) timestamps end to end, against Prometheus 3 as the reference. A Prometheus 3
// (st-storage: each sample keeps its start timestamp in its WAL and remote write 2.0 sends it)
// scrapes an exporter of a counter, a classic and a native histogram with start timestamps
// (protobuf exposition) whose process "restarts" halfway, and writes to Strata, once as a tenant
// with created_timestamp_zero_ingestion_enabled and once as one without, and to a second
// Prometheus 3 that makes zero samples of them (created-timestamp-zero-ingestion). Strata's raw
// samples and rate/increase/histogram_quantile at the series' start and after the reset equal the
// reference's, from the head and, after a flush, from the blocks alone; the other tenant has no zeros.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { ProtoWriter, WIRE_FIXED64, WIRE_VARINT } from '@strata/remote-write';
import { encodeExportRequest, type ExportRequestInput } from '@strata/otlp';
import { api, waitFor } from './support/client.ts';
import { startPrometheus3, type Prometheus3 } from './support/prometheus3.ts';

const ON = 'ct-on';
const OFF = 'ct-off';
/** Scrapes before the exporter's restart, and in all; after them it answers 404 (the series go stale). */
const RESTART_AFTER = 10;
const SCRAPES = 20;

// --- the exporter: io.prometheus.client.MetricFamily, varint-length-delimited, with start timestamps ---

const zigzag = (v: number) => (v < 0 ? -2 * v - 1 : 2 * v);

function timestamp(w: ProtoWriter, field: number, ms: number): void {
  const at = w.begin(field);
  w.tag(1, WIRE_VARINT);
  w.uvarint(Math.floor(ms / 1000));
  w.tag(2, WIRE_VARINT);
  w.uvarint((ms % 1000) * 1_000_000);
  w.end(at);
}

/** A MetricFamily of one unlabelled Metric; `body` writes the Metric's counter (3) or histogram (7). */
function family(name: string, type: number, body: (w: ProtoWriter) => void): Buffer {
  const w = new ProtoWriter(512);
  w.string(1, name);
  w.string(2, `${name} of the test exporter.`);
  w.tag(3, WIRE_VARINT);
  w.uvarint(type);
  const m = w.begin(4);
  body(w);
  w.end(m);
  const msg = w.finish();
  const framed = new ProtoWriter(msg.length + 10);
  framed.uvarint(msg.length);
  framed.raw(msg);
  return framed.finish();
}

/** The exporter's state `n` scrapes after its (re)start at `created` (ms). */
function exposition(n: number, created: number): Buffer {
  const counter = family('app_requests_total', 0, (w) => {
    const c = w.begin(3);
    w.tag(1, WIRE_FIXED64);
    w.double(7 * n + (n % 3));
    timestamp(w, 3, created);
    w.end(c);
  });
  const classic = family('app_latency_seconds', 4, (w) => {
    const h = w.begin(7);
    w.tag(1, WIRE_VARINT);
    w.uvarint(6 * n);
    w.tag(2, WIRE_FIXED64);
    w.double(1.75 * n);
    for (const [le, count] of [
      [0.1, n],
      [0.5, 3 * n],
      [1, 5 * n],
    ]) {
      const b = w.begin(3);
      w.tag(1, WIRE_VARINT);
      w.uvarint(count);
      w.tag(2, WIRE_FIXED64);
      w.double(le);
      w.end(b);
    }
    timestamp(w, 15, created);
    w.end(h);
  });
  const native = family('app_size_bytes', 4, (w) => {
    const h = w.begin(7);
    const buckets = [n, 2 * n, Math.floor((n * n) / 4)];
    w.tag(1, WIRE_VARINT);
    w.uvarint(n + buckets.reduce((a, b) => a + b, 0));
    w.tag(2, WIRE_FIXED64);
    w.double(3.5 * n + 0.25 * n * n);
    w.tag(5, WIRE_VARINT);
    w.uvarint(zigzag(1));
    w.tag(6, WIRE_FIXED64);
    w.double(0.001);
    w.tag(7, WIRE_VARINT);
    w.uvarint(n);
    const span = w.begin(12);
    w.tag(1, WIRE_VARINT);
    w.uvarint(zigzag(0));
    w.tag(2, WIRE_VARINT);
    w.uvarint(buckets.length);
    w.end(span);
    let prev = 0;
    for (const c of buckets) {
      w.tag(13, WIRE_VARINT);
      w.uvarint(zigzag(c - prev));
      prev = c;
    }
    timestamp(w, 15, created);
    w.end(h);
  });
  return Buffer.concat([counter, classic, native]);
}

class Exporter {
  scrapes = 0;
  /** Start time of the exporter's "process": 2s before the first scrape, then the restart's. */
  created = 0;
  firstCreated = 0;
  private sinceStart = 0;
  readonly server: Server = createServer((_req, res) => {
    if (this.scrapes >= SCRAPES) {
      res.writeHead(404).end();
      return;
    }
    if (this.scrapes === 0) this.created = this.firstCreated = Date.now() - 2_000;
    this.scrapes++;
    this.sinceStart++;
    res.writeHead(200, { 'content-type': 'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited' });
    res.end(exposition(this.sinceStart, this.created));
    // The process restarts right after this scrape: its counters start again, from a new start time.
    if (this.scrapes === RESTART_AFTER) {
      this.created = Date.now();
      this.sinceStart = 0;
    }
  });
}

// --- querying both sides alike ---

interface Side {
  name: string;
  url: string;
  path: string;
  headers: Record<string, string>;
}

type Result = { metric: Record<string, string>; values?: [number, unknown][]; histograms?: [number, unknown][]; value?: [number, string] }[];

async function query(side: Side, endpoint: 'query' | 'query_range', params: Record<string, string>): Promise<Result> {
  const res = await api<{ result: Result }>(side.url, `${side.path}/api/v1/${endpoint}`, params, { headers: side.headers });
  assert.equal(res.httpStatus, 200, `${side.name} ${params.query}: ${res.error}`);
  return res.data.result;
}

/** Series by their labels, each value as a number (histograms: count, sum and each bucket), for a comparison that names what differs. */
function normalized(result: Result): Record<string, [number, number[]][]> {
  const out: Record<string, [number, number[]][]> = {};
  const num = (v: unknown): number[] => {
    if (typeof v === 'string') return [Number(v)];
    const h = v as { count: string; sum: string; buckets?: [number, string, string, string][] };
    return [Number(h.count), Number(h.sum), ...(h.buckets ?? []).flatMap((b) => [Number(b[1]), Number(b[2]), Number(b[3])])];
  };
  for (const s of result) {
    const key = JSON.stringify(Object.entries(s.metric).sort());
    const rows = [...(s.values ?? []), ...(s.histograms ?? []), ...(s.value ? [s.value] : [])].map(([t, v]): [number, number[]] => [t, num(v)]);
    out[key] = rows.sort((a, b) => a[0] - b[0]);
  }
  return out;
}

function assertSame(ours: Result, theirs: Result, what: string): void {
  const a = normalized(ours);
  const b = normalized(theirs);
  assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort(), `${what}: the same series`);
  for (const key of Object.keys(b)) {
    assert.deepEqual(
      a[key].map((r) => r[0]),
      b[key].map((r) => r[0]),
      `${what} ${key}: the same timestamps`,
    );
    a[key].forEach(([t, vs], i) => {
      const ws = b[key][i][1];
      const close = vs.length === ws.length && vs.every((v, k) => v === ws[k] || Math.abs(v - ws[k]) <= 1e-9 * Math.max(1, Math.abs(v), Math.abs(ws[k])));
      assert.ok(close, `${what} ${key} at ${t}: Strata ${JSON.stringify(vs)}, Prometheus ${JSON.stringify(ws)}`);
    });
  }
}

const SERIES = '{__name__=~"app_.+"}';
const QUERIES = [
  'rate(app_requests_total[3s])',
  'increase(app_requests_total[5s])',
  'increase(app_requests_total[1m])',
  'resets(app_requests_total[1m])',
  'histogram_quantile(0.9, sum by (le) (rate(app_latency_seconds_bucket[3s])))',
  'histogram_quantile(0.5, sum by (le) (increase(app_latency_seconds_bucket[1m])))',
  'histogram_quantile(0.9, rate(app_size_bytes[3s]))',
  'histogram_count(increase(app_size_bytes[5s]))',
  'histogram_sum(rate(app_size_bytes[1m]))',
];

/**
 * An OTLP request of a counter, an explicit-bucket and an exponential histogram and a summary,
 * started at `start` (ms) and observed `n` times since, at `t`.
 */
function otlpRequest(start: number, t: number, n: number): ExportRequestInput {
  const at = { startTimeUnixNano: BigInt(start) * 1_000_000n, timeUnixNano: BigInt(t) * 1_000_000n };
  return {
    resourceMetrics: [
      {
        resource: { 'service.name': 'otlp-app', 'service.instance.id': 'i-1' },
        scopeMetrics: [
          {
            metrics: [
              { name: 'otlp.jobs', sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [{ ...at, value: 5 * n }] } },
              {
                name: 'otlp.latency',
                unit: 's',
                histogram: {
                  aggregationTemporality: 2,
                  dataPoints: [{ ...at, count: 4 * n, sum: 1.5 * n, bucketCounts: [n, 2 * n, n], explicitBounds: [0.25, 1] }],
                },
              },
              {
                name: 'otlp.size',
                unit: 'By',
                exponentialHistogram: {
                  aggregationTemporality: 2,
                  dataPoints: [{ ...at, count: 3 * n, sum: 9 * n, scale: 1, zeroCount: n, positive: { offset: 2, bucketCounts: [n, n] } }],
                },
              },
              {
                name: 'otlp.rpc',
                unit: 's',
                summary: { dataPoints: [{ ...at, count: 2 * n, sum: 0.5 * n, quantileValues: [{ quantile: 0.9, value: 0.3 }] }] },
              },
            ],
          },
        ],
      },
    ],
  };
}

describe('created timestamps from a Prometheus 3 sender, against a Prometheus 3 receiver', { timeout: 420_000 }, () => {
  let dir: string;
  let strata: AppProcess;
  let storeOnly: AppProcess | undefined;
  let sender: Prometheus3 | undefined;
  let reference: Prometheus3 | undefined;
  const exporter = new Exporter();
  let strataSide: (tenant: string) => Side;
  let referenceSide: Side;
  /** The window every sample (zeros included) lies in, in seconds. */
  let from = 0;
  let to = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-created-ts-'));
    const [strataPort, exporterPort] = await freePorts(2);
    writeFileSync(join(dir, 'runtime.yaml'), `overrides:\n  ${ON}:\n    created_timestamp_zero_ingestion_enabled: true\n`);
    strata = new AppProcess({
      name: 'strata',
      target: 'all',
      httpPort: strataPort,
      logFile: join(dir, 'strata.log'),
      args: [`-data-dir=${dir}/data`, `-server.http-listen-port=${strataPort}`, `-runtime-config.file=${join(dir, 'runtime.yaml')}`],
    });
    strata.start();
    await new Promise<void>((resolve) => exporter.server.listen(exporterPort, '127.0.0.1', resolve));
    mkdirSync(join(dir, 'reference'));
    reference = await startPrometheus3(join(dir, 'reference'), [
      '--web.enable-remote-write-receiver',
      '--web.remote-write-receiver.accepted-protobuf-messages=io.prometheus.write.v2.Request',
      '--web.enable-otlp-receiver',
      '--enable-feature=created-timestamp-zero-ingestion',
    ]);
    await strata.waitReady(180_000);
    strataSide = (tenant) => ({ name: `Strata (${tenant})`, url: strata.url, path: '/prometheus', headers: { 'X-Scope-OrgID': tenant } });
    referenceSide = { name: 'Prometheus', url: reference.url, path: '', headers: {} };
    const write = (url: string, tenant?: string) =>
      [
        `  - url: ${url}`,
        '    protobuf_message: io.prometheus.write.v2.Request',
        '    send_native_histograms: true',
        ...(tenant === undefined ? [] : ['    headers:', `      X-Scope-OrgID: ${tenant}`]),
        '    queue_config:',
        '      batch_send_deadline: 500ms',
      ].join('\n');
    const config = [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: app',
      '    scrape_protocols: [PrometheusProto]',
      '    scrape_native_histograms: true',
      '    static_configs:',
      `      - targets: ['127.0.0.1:${exporterPort}']`,
      'remote_write:',
      write(`${strata.url}/api/v1/push`, ON),
      write(`${strata.url}/api/v1/push`, OFF),
      write(`${reference.url}/api/v1/write`),
      '',
    ].join('\n');
    mkdirSync(join(dir, 'sender'));
    // st-storage, not created-timestamp-zero-ingestion: the sender must send start timestamps, not zeros of its own.
    sender = await startPrometheus3(join(dir, 'sender'), ['--enable-feature=st-storage'], config);
    await waitFor('the exporter scraped to the end', async () => (exporter.scrapes >= SCRAPES ? true : undefined), 120_000);
    from = Math.floor(exporter.firstCreated / 1000) - 1;
    // Everything sent (the stale markers of the failed scrapes after the last one included) reaches every receiver.
    const count = async (side: Side) => {
      const r = await query(side, 'query', { query: 'count_over_time(app_requests_total[10m])', time: String(Date.now() / 1000) });
      return r.length === 1 ? Number(r[0].value![1]) : 0;
    };
    await waitFor(
      'every receiver has every scrape',
      async () =>
        (await count(strataSide(ON))) >= SCRAPES && (await count(strataSide(OFF))) >= SCRAPES && (await count(referenceSide)) >= SCRAPES ? true : undefined,
      60_000,
    );
    await new Promise((r) => setTimeout(r, 3_000));
    to = Math.ceil(Date.now() / 1000);
  });

  after(async () => {
    sender?.stop();
    reference?.stop();
    exporter.server.close();
    await storeOnly?.kill('SIGTERM');
    await strata?.kill('SIGTERM');
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  const raw = (side: Side) => query(side, 'query', { query: `${SERIES}[10m]`, time: String(to) });

  test('the reference made a zero at each start time; so did the tenant with the setting, and the other tenant has none', async () => {
    const zeros = async (side: Side) => {
      const r = await query(side, 'query', { query: 'count_over_time(app_requests_total[10m])', time: String(to) });
      return Number(r[0]?.value?.[1] ?? 0);
    };
    const reference = await zeros(referenceSide);
    assert.equal(
      reference,
      SCRAPES + 2,
      'the reference stores every scrape plus the zeros at the start and at the restart (did the sender send start timestamps?)',
    );
    assert.equal(await zeros(strataSide(ON)), reference);
    assert.equal(await zeros(strataSide(OFF)), SCRAPES, 'without the setting, start timestamps make no samples');
  });

  test('raw samples of the counter and both histograms equal the reference’s, zeros included', async () => {
    assertSame(await raw(strataSide(ON)), await raw(referenceSide), 'raw samples');
  });

  test('rate, increase and histogram_quantile at the series’ start and after the restart equal the reference’s', async () => {
    for (const q of QUERIES) {
      const params = { query: q, start: String(from), end: String(to), step: '1' };
      const theirs = await query(referenceSide, 'query_range', params);
      assert.ok(theirs.length > 0, `${q}: the reference has a result`);
      assertSame(await query(strataSide(ON), 'query_range', params), theirs, q);
    }
    // Without the zeros the counter's first increase is not seen: the tenant without the setting differs there.
    const first = { query: 'increase(app_requests_total[1m])', start: String(from), end: String(to), step: '1' };
    assert.notDeepEqual(normalized(await query(strataSide(OFF), 'query_range', first)), normalized(await query(referenceSide, 'query_range', first)));
  });

  test('OTLP start times: the same pushes to Strata and to Prometheus 3’s OTLP receiver store the same samples, zeros included', async () => {
    const t = Date.now() - 40_000;
    // Two exports of a long-lived process (same start time), then one after its restart.
    const pushes = [otlpRequest(t - 5_000, t, 1), otlpRequest(t - 5_000, t + 10_000, 3), otlpRequest(t + 12_000, t + 20_000, 1)];
    for (const p of pushes) {
      const body = encodeExportRequest(p);
      const headers = { 'content-type': 'application/x-protobuf' };
      const ours = await fetch(`${strata.url}/otlp/v1/metrics`, { method: 'POST', headers: { ...headers, 'X-Scope-OrgID': ON }, body });
      const theirs = await fetch(`${reference!.url}/api/v1/otlp/v1/metrics`, { method: 'POST', headers, body });
      assert.deepEqual([ours.status, theirs.status], [200, 200], `${await ours.text()} ${await theirs.text()}`);
    }
    const otlpRaw = (side: Side) => query(side, 'query', { query: '{__name__=~"otlp_.+"}[5m]', time: String((t + 30_000) / 1000) });
    const want = await otlpRaw(referenceSide);
    const counter = Object.entries(normalized(want)).find(([k]) => k.includes('otlp_jobs_total'));
    assert.deepEqual(
      counter?.[1].map(([time, [v]]) => [Math.round(time * 1000) - t, v]),
      [
        [-5_000, 0],
        [0, 5],
        [10_000, 15],
        [12_000, 0],
        [20_000, 5],
      ],
      'the reference: a zero at each start time',
    );
    // Read after write is not promised: wait until the ingester has consumed every push.
    const samples = (r: Result) => Object.values(normalized(r)).reduce((n, rows) => n + rows.length, 0);
    await waitFor('Strata has the OTLP samples', async () => (samples(await otlpRaw(strataSide(ON))) >= samples(want) ? true : undefined), 30_000);
    assertSame(await otlpRaw(strataSide(ON)), want, 'OTLP raw samples');
  });

  test('after a flush, the blocks alone hold the zeros: raw samples from a store-only querier equal the reference’s', async () => {
    const flush = await fetch(`${strata.url}/ingester/flush?wait=true`, { method: 'POST' });
    assert.equal(flush.status, 204, await flush.text());
    const [port] = await freePorts(1);
    storeOnly = new AppProcess({
      name: 'querier-store-only',
      target: 'querier',
      httpPort: port,
      logFile: join(dir, 'querier-store-only.log'),
      args: [
        `-server.http-listen-port=${port}`,
        `-data-dir=${join(dir, 'store-only')}`,
        `-blocks-storage.filesystem.dir=${join(dir, 'data', 'bucket')}`,
        '-blocks-storage.bucket-store.sync-interval=1s',
        // The single process' compactor writes the bucket index on its own schedule: list the bucket instead.
        '-blocks-storage.bucket-store.bucket-index.enabled=false',
        '-querier.query-store-after=0s',
      ],
    });
    storeOnly.start();
    await storeOnly.waitReady();
    const side: Side = { name: 'Strata blocks', url: storeOnly.url, path: '/prometheus', headers: { 'X-Scope-OrgID': ON } };
    const want = normalized(await raw(referenceSide));
    await waitFor(
      'the store-only querier sees the blocks',
      async () => (Object.keys(normalized(await raw(side))).length === Object.keys(want).length ? true : undefined),
      60_000,
    );
    assertSame(await raw(side), await raw(referenceSide), 'raw samples from blocks');
  });
});
