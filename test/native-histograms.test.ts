// Native histograms end to end with a real Prometheus 2.42 as the sender and the
// reference (and a Prometheus 3 receiving the same remote write, the reference
// for histogram_quantile's exponential interpolation): it scrapes a small exporter (protobuf exposition format, native
// histograms only), stores them itself and remote-writes them to Strata
// (send_native_histograms: true). The raw histograms must be the same in both,
// and so must rate-based queries at times not aligned with samples: from the
// head, after both zones' ingesters flushed their heads to blocks, and after the
// compactor merged the two zones' blocks into one (which Prometheus 3's promtool
// dumps with the histograms Prometheus stored).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCluster, freePorts } from '@strata/local-cluster';
import { ProtoWriter, WIRE_FIXED64, WIRE_VARINT } from '@strata/remote-write';
import { FilesystemBucket } from '@strata/objstore';
import { api, waitFor } from './support/client.ts';
import { PROMETHEUS3, copyTenantBlocks, parseDumpHistograms, promtool3 } from './support/promtool.ts';

const PROMETHEUS = '/usr/bin/prometheus';
const METRIC = 'nh_request_seconds';

// --- the exporter: io.prometheus.client.MetricFamily, varint-length-delimited ---

const zigzag = (v: number) => (v < 0 ? -2 * v - 1 : 2 * v);

interface Span {
  offset: number;
  length: number;
}

/** One native histogram's state: absolute bucket counts along the spans. */
interface HistState {
  schema: number;
  zeroThreshold: number;
  zeroCount: number;
  sum: number;
  positiveSpans: Span[];
  positive: number[];
  negativeSpans: Span[];
  negative: number[];
}

function writeSpans(w: ProtoWriter, field: number, spans: Span[]): void {
  for (const s of spans) {
    const at = w.begin(field);
    w.tag(1, WIRE_VARINT);
    w.uvarint(zigzag(s.offset));
    w.tag(2, WIRE_VARINT);
    w.uvarint(s.length);
    w.end(at);
  }
}

function writeDeltas(w: ProtoWriter, field: number, counts: number[]): void {
  let prev = 0;
  for (const c of counts) {
    w.tag(field, WIRE_VARINT);
    w.uvarint(zigzag(c - prev));
    prev = c;
  }
}

/** A MetricFamily of type HISTOGRAM (4) with one Metric per label set, each a native histogram. */
function metricFamily(name: string, metrics: { labels: Record<string, string>; h: HistState }[]): Buffer {
  const w = new ProtoWriter(1024);
  w.string(1, name);
  w.string(2, 'Request latency, as a native histogram.');
  w.tag(3, WIRE_VARINT);
  w.uvarint(4);
  for (const { labels, h } of metrics) {
    const m = w.begin(4);
    for (const [k, v] of Object.entries(labels)) {
      const lp = w.begin(1);
      w.string(1, k);
      w.string(2, v);
      w.end(lp);
    }
    const hs = w.begin(7);
    const count = h.zeroCount + h.positive.reduce((a, b) => a + b, 0) + h.negative.reduce((a, b) => a + b, 0);
    w.tag(1, WIRE_VARINT);
    w.uvarint(count);
    w.tag(2, WIRE_FIXED64);
    w.double(h.sum);
    w.tag(5, WIRE_VARINT);
    w.uvarint(zigzag(h.schema));
    w.tag(6, WIRE_FIXED64);
    w.double(h.zeroThreshold);
    w.tag(7, WIRE_VARINT);
    w.uvarint(h.zeroCount);
    writeSpans(w, 9, h.negativeSpans);
    writeDeltas(w, 10, h.negative);
    writeSpans(w, 12, h.positiveSpans);
    writeDeltas(w, 13, h.positive);
    w.end(hs);
    w.end(m);
  }
  const body = w.finish();
  const framed = new ProtoWriter(body.length + 10);
  framed.uvarint(body.length);
  framed.raw(body);
  return Buffer.from(framed.finish());
}

/** The n-th scrape's state of series `k`: counts grow with every scrape, unevenly across buckets. */
function state(n: number, k: number): HistState {
  return {
    schema: 3,
    zeroThreshold: 1e-3,
    zeroCount: n * k,
    sum: 0.37 * n * (k + 1) + 0.01 * n * n,
    positiveSpans: [
      { offset: -2, length: 3 },
      { offset: 2, length: 2 },
    ],
    positive: [n, 2 * n + k, n * (k + 1), Math.floor((n * n) / 3), 3 * n],
    negativeSpans: [{ offset: 1, length: 1 }],
    negative: [k * n],
  };
}

// --- comparison of API results ---

function close(a: string | number, b: string | number, what: string): void {
  const x = Number(a);
  const y = Number(b);
  if (x === y || (Number.isNaN(x) && Number.isNaN(y))) return;
  assert.ok(Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y)), `${what}: ${a} vs ${b}`);
}

interface ApiHistogram {
  count: string;
  sum: string;
  buckets?: [number, string, string, string][];
}

function sameHistogram(a: ApiHistogram, b: ApiHistogram, what: string): void {
  close(a.count, b.count, `${what} count`);
  close(a.sum, b.sum, `${what} sum`);
  const ab = a.buckets ?? [];
  const bb = b.buckets ?? [];
  assert.equal(ab.length, bb.length, `${what}: ${JSON.stringify(ab)} vs ${JSON.stringify(bb)}`);
  ab.forEach((x, i) => {
    assert.equal(x[0], bb[i][0], `${what} bucket ${i} boundary rule`);
    for (let j = 1; j < 4; j++) close(x[j], bb[i][j], `${what} bucket ${i} field ${j}`);
  });
}

/** The q-quantile of an API histogram, interpolated inside its bucket both ways (buckets ascending, positive ones only here). */
function quantiles(q: number, h: ApiHistogram): { exponential: number; linear: number } {
  const buckets = (h.buckets ?? []).map(([, lo, hi, c]) => ({ lower: Number(lo), upper: Number(hi), count: Number(c) }));
  let rank = q * Number(h.count);
  let count = 0;
  for (const b of buckets) {
    count += b.count;
    if (count < rank) continue;
    rank -= count - b.count;
    const fraction = rank / b.count;
    assert.ok(b.lower > 0, 'the quantile falls in a positive bucket');
    const ll = Math.log2(b.lower);
    const lu = Math.log2(b.upper);
    return { exponential: 2 ** (ll + (lu - ll) * fraction), linear: b.lower + (b.upper - b.lower) * fraction };
  }
  throw new Error('rank beyond the buckets');
}

interface VectorResult {
  metric: Record<string, string>;
  value?: [number, string];
  histogram?: [number, ApiHistogram];
}

interface MatrixResult {
  metric: Record<string, string>;
  values?: [number, string][];
  histograms?: [number, ApiHistogram][];
}

const key = (m: Record<string, string>) => JSON.stringify(Object.entries(m).sort());

function sameVector(a: VectorResult[], b: VectorResult[], what: string): void {
  assert.ok(a.length > 0, `${what}: Strata returned nothing`);
  assert.deepEqual(a.map((s) => key(s.metric)).sort(), b.map((s) => key(s.metric)).sort(), `${what}: series`);
  const bm = new Map(b.map((s) => [key(s.metric), s]));
  for (const s of a) {
    const r = bm.get(key(s.metric))!;
    if (s.histogram !== undefined || r.histogram !== undefined) {
      assert.ok(s.histogram && r.histogram, `${what}: a histogram in both`);
      assert.equal(s.histogram[0], r.histogram[0]);
      sameHistogram(s.histogram[1], r.histogram[1], what);
    } else {
      assert.equal(s.value![0], r.value![0]);
      close(s.value![1], r.value![1], what);
    }
  }
}

describe('native histograms: Prometheus 2.42 scrapes and remote-writes them, Strata answers as Prometheus does', { timeout: 300_000 }, () => {
  let dir: string;
  let cluster: LocalCluster;
  let strataUrl: string;
  let prometheus: ChildProcess | undefined;
  let prometheus3: ChildProcess | undefined;
  let exporter: Server;
  let promUrl: string;
  let prom3Url: string;
  let promStderr = '';
  let scrapes = 0;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-nh-'));
    const [promPort, exporterPort, prom3Port] = await freePorts(3);
    // Prometheus 3 receives the same remote write: the reference for histogram_quantile, which 2.42
    // interpolates linearly inside a bucket and Prometheus 3 (as Strata) exponentially.
    prom3Url = `http://127.0.0.1:${prom3Port}`;
    writeFileSync(join(dir, 'prometheus3.yml'), 'global:\n  scrape_interval: 1m\n');
    prometheus3 = spawn(
      PROMETHEUS3,
      [
        `--config.file=${join(dir, 'prometheus3.yml')}`,
        `--storage.tsdb.path=${join(dir, 'prometheus3')}`,
        `--web.listen-address=127.0.0.1:${prom3Port}`,
        '--web.enable-remote-write-receiver',
      ],
      { stdio: ['ignore', 'ignore', 'ignore'] },
    );
    // Both zones' ingesters cut a block of the same range; the compactor merges the two (vertical compaction).
    const single = ['-auth.multitenancy-enabled=false'];
    cluster = await LocalCluster.start({
      dataDir: dir,
      partitions: 1,
      compactor: true,
      extraArgs: {
        distributor: single,
        querier: [...single, '-querier.query-store-after=0s', '-blocks-storage.bucket-store.sync-interval=1s'],
        compactor: ['-compactor.compaction-interval=2s', '-compactor.first-level-compaction-wait-period=0s'],
      },
    });
    strataUrl = cluster.querierUrl;
    exporter = createServer((req, res) => {
      scrapes++;
      const body = metricFamily(METRIC, [
        { labels: { path: '/a' }, h: state(scrapes, 0) },
        { labels: { path: '/b' }, h: state(scrapes, 2) },
      ]);
      res.writeHead(200, { 'content-type': 'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited' });
      res.end(body);
    });
    await new Promise<void>((resolve) => exporter.listen(exporterPort, '127.0.0.1', resolve));

    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1m',
        'scrape_configs:',
        '  - job_name: nh',
        '    scrape_interval: 1s',
        '    scrape_timeout: 1s',
        '    static_configs:',
        `      - targets: ['127.0.0.1:${exporterPort}']`,
        'remote_write:',
        `  - url: ${cluster.distributorUrl}/api/v1/push`,
        '    send_native_histograms: true',
        '    queue_config:',
        '      batch_send_deadline: 500ms',
        `  - url: ${prom3Url}/api/v1/write`,
        '    send_native_histograms: true',
        '    queue_config:',
        '      batch_send_deadline: 500ms',
        '',
      ].join('\n'),
    );
    promUrl = `http://127.0.0.1:${promPort}`;
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'prometheus')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        '--enable-feature=native-histograms',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    prometheus.stderr!.on('data', (d: Buffer) => (promStderr = (promStderr + d.toString()).slice(-4000)));
    await waitFor('Prometheus ready', async () => ((await fetch(`${promUrl}/-/ready`).catch(() => undefined))?.ok ? true : undefined), 60_000).catch(
      (err: Error) => assert.fail(`${err.message}\nprometheus stderr: ${promStderr}`),
    );
  });

  after(async () => {
    for (const p of [prometheus, prometheus3]) if (p?.pid !== undefined && p.exitCode === null) process.kill(p.pid, 'SIGKILL');
    exporter?.close();
    await cluster?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** The raw histograms in [at - 5m, at] must be the same; then the queries, at `at` and at two offsets off the sample grid. */
  async function compare(at: number, when: string): Promise<void> {
    const raw = await waitFor(
      `${when}: Strata has the same raw histograms as Prometheus`,
      async () => {
        const params = { query: `${METRIC}[5m]`, time: String(at / 1000) };
        const [p, s] = await Promise.all([
          api<{ result: MatrixResult[] }>(promUrl, '/api/v1/query', params),
          api<{ result: MatrixResult[] }>(strataUrl, '/prometheus/api/v1/query', params),
        ]);
        assert.equal(p.status, 'success', JSON.stringify(p));
        assert.equal(s.status, 'success', JSON.stringify(s));
        const count = (r: MatrixResult[]) => r.reduce((n, x) => n + (x.histograms?.length ?? 0), 0);
        return count(s.data.result) === count(p.data.result) ? { p: p.data.result, s: s.data.result } : undefined;
      },
      60_000,
    );
    assert.equal(raw.p.length, 2, 'two series');
    const pm = new Map(raw.p.map((x) => [key(x.metric), x]));
    for (const s of raw.s) {
      const p = pm.get(key(s.metric));
      assert.ok(p, `${when}: series ${key(s.metric)} in Prometheus`);
      assert.ok((s.histograms?.length ?? 0) >= 10, `${when}: at least 10 histograms per series`);
      assert.equal(s.values, undefined, `${when}: no float samples`);
      assert.deepEqual(
        s.histograms!.map((h) => h[0]),
        p.histograms!.map((h) => h[0]),
        `${when}: timestamps`,
      );
      s.histograms!.forEach((h, i) => sameHistogram(h[1], p.histograms![i][1], `${when} ${key(s.metric)} #${i}`));
    }
    for (const t of [at, at - 1_234, at - 4_567]) {
      // histogram_quantile: Prometheus 2.42 interpolates linearly inside a bucket, Prometheus since 2.50 (and Mimir,
      // and Strata) exponentially. Strata must give the exponential interpolation of Prometheus' own rate() histogram,
      // the linear interpolation of that same bucket must reproduce Prometheus 2.42's answer, and Strata's answer
      // must be Prometheus 3's on the same remote-written data.
      const rateParams = { query: `rate(${METRIC}[5m])`, time: String(t / 1000) };
      const qParams = { query: `histogram_quantile(0.9, rate(${METRIC}[5m]))`, time: String(t / 1000) };
      const [pRate, pQ, sQ, p3Q] = await Promise.all([
        api<{ result: VectorResult[] }>(promUrl, '/api/v1/query', rateParams),
        api<{ result: VectorResult[] }>(promUrl, '/api/v1/query', qParams),
        api<{ result: VectorResult[] }>(strataUrl, '/prometheus/api/v1/query', qParams),
        api<{ result: VectorResult[] }>(prom3Url, '/api/v1/query', qParams),
      ]);
      assert.equal(p3Q.status, 'success', JSON.stringify(p3Q));
      sameVector(sQ.data.result, p3Q.data.result, `${when}: histogram_quantile at ${t}, Strata vs Prometheus 3`);
      assert.equal(sQ.status, 'success', JSON.stringify(sQ));
      assert.equal(sQ.data.result.length, 2, `${when}: quantile per series`);
      const pQm = new Map(pQ.data.result.map((x) => [key(x.metric), x.value![1]]));
      for (const r of pRate.data.result) {
        const k = key(r.metric);
        const mine = sQ.data.result.find((x) => key(x.metric) === k);
        assert.ok(mine, `${when}: Strata quantile for ${k}`);
        const { exponential, linear } = quantiles(0.9, r.histogram![1]);
        close(mine.value![1], exponential, `${when}: histogram_quantile at ${t} for ${k} (exponential interpolation)`);
        close(pQm.get(k)!, linear, `${when}: Prometheus 2.42's histogram_quantile at ${t} for ${k} is the linear interpolation of the same bucket`);
      }
      for (const query of [`histogram_count(rate(${METRIC}[5m]))`, `sum(rate(${METRIC}[5m]))`, `rate(${METRIC}[5m])`, `histogram_sum(${METRIC})`]) {
        const params = { query, time: String(t / 1000) };
        const [p, s] = await Promise.all([
          api<{ result: VectorResult[] }>(promUrl, '/api/v1/query', params),
          api<{ result: VectorResult[] }>(strataUrl, '/prometheus/api/v1/query', params),
        ]);
        assert.equal(s.status, 'success', JSON.stringify(s));
        sameVector(s.data.result, p.data.result, `${when}: ${query} at ${t}`);
      }
    }
  }

  const flush = async () => {
    for (const name of ['ingester-zone-a-0', 'ingester-zone-b-0']) {
      const res = await fetch(`${cluster.process(name).url}/ingester/flush?wait=true`, { method: 'POST', signal: AbortSignal.timeout(120_000) });
      assert.equal(res.status, 204, await res.text());
    }
  };

  test('the same histograms in both; histogram_quantile, histogram_count and sum of rate equal in the head, in blocks and after compaction', async () => {
    await waitFor('Prometheus scraped 15 times', async () => (scrapes >= 15 ? true : undefined), 120_000);
    // A time between scrapes (scrape times are whole milliseconds, this one is offset by half a second).
    const at = Date.now() - 2_500;
    await compare(at, 'head');
    await flush();
    await compare(at, 'blocks');

    const tenantDir = join(dir, 'bucket', 'anonymous');
    const compacted = await waitFor(
      "the two zones' blocks compacted into one",
      async () => {
        const live = readdirSync(tenantDir).filter(
          (n) => /^[0-9A-Z]{26}$/.test(n) && existsSync(join(tenantDir, n, 'meta.json')) && !existsSync(join(tenantDir, n, 'deletion-mark.json')),
        );
        const metas = live.map((n) => JSON.parse(readFileSync(join(tenantDir, n, 'meta.json'), 'utf8')) as { ulid: string; compaction: { level: number } });
        return metas.length === 1 && metas[0].compaction.level >= 2 ? metas[0] : undefined;
      },
      120_000,
    );
    await compare(at, 'compacted');

    // The compacted block as Prometheus 3's promtool reads it: the histograms Prometheus 2.42 stored.
    const out = join(dir, 'dump');
    await copyTenantBlocks(new FilesystemBucket(join(dir, 'bucket')), 'anonymous', out, (u) => u === compacted.ulid);
    const dumped = parseDumpHistograms(await promtool3('tsdb', 'dump', out));
    const stored = await api<{ result: MatrixResult[] }>(promUrl, '/api/v1/query', { query: `${METRIC}[1h]`, time: String(at / 1000) });
    for (const series of stored.data.result) {
      const path = series.metric.path;
      const mine = dumped.filter((d) => d.labels.includes(`path="${path}"`) && d.timestamp <= at);
      assert.deepEqual(
        mine.map((d) => d.timestamp / 1000),
        series.histograms!.map((h) => h[0]),
        `dump path=${path}: timestamps`,
      );
      mine.forEach((d, i) => {
        const p = series.histograms![i][1];
        assert.equal(d.count, Number(p.count), `dump path=${path} #${i} count`);
        close(d.sum, Number(p.sum), `dump path=${path} #${i} sum`);
        const buckets = (p.buckets ?? []).filter((b) => Number(b[3]) !== 0);
        assert.equal(d.buckets.length, buckets.length, `dump path=${path} #${i} buckets`);
      });
    }
  });
});
