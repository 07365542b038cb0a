// The walking skeleton end to end with separate processes and a real broker:
// push, read back every sample, lose a zone, restart it, lose the other zone,
// reject bad input, lose the broker — and never lose an acknowledged write.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCluster } from '@strata/local-cluster';
import { compressBody, encodeWriteRequest } from '@strata/remote-write';
import { api, generateSeries, push, pushRaw, type MatrixSeries, type VectorSample } from './support/client.ts';
import { scrape, type MetricsPage } from './support/metrics.ts';

const INTERVAL = 15_000;
const TENANT = { 'X-Scope-OrgID': 'team-e2e' };
const T0 = Math.floor(Date.now() / 60_000) * 60_000 - 30 * 60_000;

describe('cluster e2e: distributor → Kafka → two zones → querier', { timeout: 600_000 }, () => {
  let cluster: LocalCluster;
  let dir: string;
  // Every acknowledged sample, by series instance label → [timestamp, value].
  const acked = new Map<string, Map<number, number>>();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-e2e-'));
    cluster = await LocalCluster.start({ dataDir: dir, partitions: 2 });
  });

  after(async () => {
    await cluster?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function pushAndRecord(batch: number, samples: number): Promise<void> {
    const start = T0 + batch * samples * INTERVAL;
    const series = generateSeries('e2e_metric', 100, samples, start, INTERVAL, (s, i) => s * 10_000 + batch * 100 + i);
    const res = await push(cluster.distributorUrl, series, TENANT);
    assert.equal(res.status, 200, `push answered ${res.status}: ${res.body}`);
    for (const s of series) {
      const instance = s.labels.find((l) => l.name === 'instance')!.value;
      let m = acked.get(instance);
      if (!m) acked.set(instance, (m = new Map()));
      for (const smp of s.samples) m.set(smp.timestamp, smp.value);
    }
  }

  /**
   * Reads every acked sample back through the querier and compares exactly.
   * Ingestion is asynchronous (Kafka in between), so it retries for a while
   * before failing with the last difference.
   */
  async function assertEverySampleReadable(what: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        return await compareOnce(what);
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 300));
      }
    }
  }

  async function compareOnce(what: string): Promise<void> {
    const times = [...acked.values()].flatMap((m) => [...m.keys()]);
    const start = Math.min(...times);
    const end = Math.max(...times);
    const res = await api<{ resultType: string; result: MatrixSeries[] }>(
      cluster.querierUrl,
      '/prometheus/api/v1/query_range',
      {
        query: 'e2e_metric',
        start: String(start / 1000),
        end: String(end / 1000),
        step: `${INTERVAL / 1000}s`,
      },
      { headers: TENANT },
    );
    assert.equal(res.httpStatus, 200, `${what}: ${res.error}`);
    assert.equal(res.data.result.length, acked.size, `${what}: series count`);
    for (const s of res.data.result) {
      const want = acked.get(s.metric.instance)!;
      // Each step lands on a sample; between batches the lookback repeats the last value, so compare at sample times.
      const got = new Map(s.values.map(([t, v]) => [Math.round(t * 1000), Number(v)]));
      for (const [t, v] of want) assert.equal(got.get(t), v, `${what}: ${s.metric.instance} at ${t}`);
    }
  }

  test('every pushed sample reads back exactly; count and sum by agree', async () => {
    await pushAndRecord(0, 10);
    await waitForSeries(cluster.querierUrl, 100);
    await assertEverySampleReadable('after first push');
    const count = await api<{ result: VectorSample[] }>(
      cluster.querierUrl,
      '/prometheus/api/v1/query',
      {
        query: 'count(e2e_metric)',
        time: String((T0 + 9 * INTERVAL + 7_500) / 1000),
      },
      { headers: TENANT },
    );
    assert.equal(count.httpStatus, 200, count.error);
    assert.deepEqual(
      count.data.result.map((r) => r.value[1]),
      ['100'],
    );
    const byJob = await api<{ result: VectorSample[] }>(
      cluster.querierUrl,
      '/api/v1/query',
      {
        query: 'sum by (job) (e2e_metric)',
        time: String((T0 + 9 * INTERVAL + 1) / 1000),
      },
      { method: 'POST', headers: TENANT },
    );
    assert.equal(byJob.httpStatus, 200, byJob.error);
    const want = Array.from({ length: 100 }, (_, s) => s * 10_000 + 9).reduce((a, b) => a + b, 0);
    assert.deepEqual(byJob.data.result, [{ metric: { job: 'e2e' }, value: [(T0 + 9 * INTERVAL + 1) / 1000, String(want)] }]);
  });

  test('tenants are isolated and a missing tenant is 401 on push and query', async () => {
    const other = await api<VectorSample[]>(
      cluster.querierUrl,
      '/prometheus/api/v1/series',
      { 'match[]': 'e2e_metric' },
      {
        headers: { 'X-Scope-OrgID': 'someone-else' },
      },
    );
    assert.equal(other.httpStatus, 200);
    assert.deepEqual(other.data, []);
    const noTenantQuery = await api(cluster.querierUrl, '/prometheus/api/v1/query', { query: 'e2e_metric' });
    assert.equal(noTenantQuery.httpStatus, 401);
    const noTenantPush = await push(cluster.distributorUrl, generateSeries('e2e_metric', 1, 1, T0, INTERVAL));
    assert.equal(noTenantPush.status, 401);
    assert.match(noTenantPush.body, /X-Scope-OrgID/);
  });

  test('invalid writes get 400 with a one-line reason and nothing else breaks', async () => {
    const url = cluster.distributorUrl;
    const cases: [string, Uint8Array, RegExp][] = [
      ['bad snappy', Buffer.from('definitely not snappy'), /snappy/i],
      ['bad protobuf', compressBody(Buffer.from([0x0a, 0x7f, 0x01])), /protobuf/i],
      [
        'duplicate labels',
        body([
          ['__name__', 'm'],
          ['a', '1'],
          ['a', '2'],
        ]),
        /duplicate/i,
      ],
      [
        'empty label name',
        body([
          ['__name__', 'm'],
          ['', 'v'],
        ]),
        /label/i,
      ],
      ['missing metric name', body([['job', 'x']]), /metric name/i],
      ['invalid metric name', body([['__name__', '1bad']]), /metric name/i],
    ];
    for (const [what, payload, reason] of cases) {
      const res = await pushRaw(url, payload, TENANT);
      assert.equal(res.status, 400, `${what}: ${res.status} ${res.body}`);
      assert.match(res.body, reason, what);
      assert.equal(res.body.trim().split('\n').length, 1, `${what}: one line`);
    }
    const res = await pushRaw(url, Buffer.from('x'), { ...TENANT, 'content-type': 'application/json' });
    assert.equal(res.status, 415, `wrong content type: ${res.body}`);
    // Unsorted label names are sorted and stored, as Prometheus does.
    const unsorted = await pushRaw(
      url,
      body([
        ['job', 'x'],
        ['__name__', 'e2e_unsorted'],
        ['instance', 'i'],
      ]),
      TENANT,
    );
    assert.equal(unsorted.status, 200, unsorted.body);
    await waitUntil(async () => {
      const r = await api<Record<string, string>[]>(cluster.querierUrl, '/prometheus/api/v1/series', { 'match[]': 'e2e_unsorted' }, { headers: TENANT });
      // Key order is the stored label order.
      return r.data.length === 1 && JSON.stringify(Object.keys(r.data[0])) === '["__name__","instance","job"]';
    }, 30_000);
    await assertEverySampleReadable('after bad writes');
  });

  test('zone-a down: queries still complete from zone-b; zone-a rejoins only after catch-up; zone-a alone has everything', async () => {
    for (const p of cluster.ingesters('a')) await p.kill('SIGKILL');
    await assertEverySampleReadable('zone-a killed');
    await pushAndRecord(1, 10); // written while zone-a is down
    await assertEverySampleReadable('zone-a killed, new writes');

    for (const p of cluster.ingesters('a')) p.start();
    await Promise.all(cluster.ingesters('a').map((p) => p.waitReady()));
    for (const p of cluster.ingesters('a')) {
      const log = readFileSync(p.opts.logFile, 'utf8');
      assert.match(log, /caught up with partition \d; ready/, `${p.name} logs its catch-up`);
    }
    await pushAndRecord(2, 10);
    for (const p of cluster.ingesters('b')) await p.kill('SIGKILL');
    await assertEverySampleReadable('zone-b killed, zone-a restarted');

    for (const p of cluster.ingesters('b')) p.start();
    await Promise.all(cluster.ingesters('b').map((p) => p.waitReady()));
  });

  test('broker stopped: pushes get 5xx; after it returns every acknowledged write is queryable', async () => {
    await cluster.kafka.stopBroker(0);
    const down = await push(cluster.distributorUrl, generateSeries('e2e_metric', 5, 1, T0 + 40 * INTERVAL, INTERVAL), TENANT);
    assert.ok(down.status >= 500 && down.status < 600, `push with broker down answered ${down.status}: ${down.body}`);
    assert.match(down.body, /Kafka/);
    await cluster.kafka.startBroker(0);
    // The distributor recovers by itself; the agent would retry.
    let status = 0;
    for (let i = 0; i < 60 && status !== 200; i++) {
      const res = await push(cluster.distributorUrl, generateSeries('e2e_probe', 1, 1, T0, INTERVAL), TENANT);
      status = res.status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 1000));
    }
    assert.equal(status, 200, 'distributor recovered after the broker returned');
    await pushAndRecord(3, 10);
    await assertEverySampleReadable('after broker restart');
  });

  test('/metrics of every app has the operational metrics, with values that match the traffic', async () => {
    const ingesters = cluster.ingesters();
    const pages = async () => Promise.all(ingesters.map((p) => scrape(p.url)));
    const outOfOrder = (ms: MetricsPage[]) => ms.reduce((n, m) => n + (m.sum('strata_ingester_samples_rejected_total', { reason: 'out-of-order' }) ?? 0), 0);
    const before = outOfOrder(await pages());
    // One sample behind its series' newest: both zones' ingesters of its partition reject it as out of order.
    const late = generateSeries('e2e_metrics_probe', 1, 2, T0 + 60 * INTERVAL, INTERVAL);
    assert.equal((await push(cluster.distributorUrl, late, TENANT)).status, 200);
    assert.equal((await push(cluster.distributorUrl, generateSeries('e2e_metrics_probe', 1, 1, T0 + 59 * INTERVAL, INTERVAL), TENANT)).status, 200);
    let ing: MetricsPage[] = [];
    const deadline = Date.now() + 30_000;
    do {
      ing = await pages();
      if (outOfOrder(ing) >= before + 2) break;
      await new Promise((r) => setTimeout(r, 500));
    } while (Date.now() < deadline);

    const dist = await scrape(cluster.distributorUrl);
    assert.ok(dist.sum('strata_distributor_received_samples_total', { tenant: 'team-e2e' })! > 0, 'distributor: samples received');
    assert.ok(dist.sum('strata_distributor_push_duration_seconds_count', { status: '200' })! > 0, 'distributor: push latency histogram');
    assert.ok(dist.sum('strata_distributor_push_duration_seconds_bucket', { le: '+Inf' })! > 0);
    assert.ok(dist.sum('strata_distributor_kafka_produce_duration_seconds_count')! > 0, 'distributor: produce latency histogram');

    for (const [i, m] of ing.entries()) {
      const name = ingesters[i].name;
      const partition = name.slice(name.lastIndexOf('-') + 1);
      const lag = m.sum('strata_ingester_kafka_partition_lag_records', { partition });
      assert.ok(lag !== undefined && lag >= 0 && lag < 100, `${name}: partition lag ${lag}`);
      assert.ok(m.sum('strata_ingester_kafka_receive_delay_seconds_count', { partition })! > 0, `${name}: receive delay histogram`);
      assert.ok(m.sum('strata_ingester_kafka_records_consumed_total')! > 0, `${name}: records consumed`);
      const consumed = m.sum('strata_ingester_samples_consumed_total', { tenant: 'team-e2e' })!;
      const appended = m.sum('strata_ingester_samples_appended_total', { tenant: 'team-e2e' })!;
      assert.ok(consumed > 0 && appended > 0 && appended <= consumed, `${name}: samples consumed ${consumed}, appended ${appended}`);
      assert.ok(m.sum('strata_ingester_active_series', { tenant: 'team-e2e' })! > 0, `${name}: active series of the tenant`);
      assert.ok(m.declares('strata_ingester_samples_rejected_total'), `${name}: rejected samples by reason`);
      for (const family of ['strata_ingester_blocks_cut_total', 'strata_ingester_blocks_shipped_total']) {
        assert.ok(m.sum(family) !== undefined, `${name}: ${family}`);
      }
    }
    assert.equal(outOfOrder(ing), before + 2, 'the late sample was rejected once per zone, reason out-of-order');

    // A flush cuts and ships the head: the block counters move.
    const zoneA0 = cluster.process('ingester-zone-a-0');
    const flushed = await fetch(`${zoneA0.url}/ingester/flush?wait=true`, { method: 'POST' });
    assert.equal(flushed.status, 204, await flushed.text());
    const after = await scrape(zoneA0.url);
    assert.ok(after.sum('strata_ingester_blocks_cut_total')! > 0, 'blocks cut after a flush');
    assert.ok(after.sum('strata_ingester_blocks_shipped_total')! > 0, 'blocks shipped after a flush');

    const q = await scrape(cluster.querierUrl);
    assert.ok(q.sum('strata_querier_request_duration_seconds_count', { endpoint: 'query_range', status: '200' })! > 0, 'querier: query latency histogram');
  });
});

function body(labels: [string, string][]): Buffer {
  return compressBody(
    encodeWriteRequest({ timeseries: [{ labels: labels.map(([name, value]) => ({ name, value })), samples: [{ value: 1, timestamp: T0 }] }] }),
  );
}

async function waitForSeries(url: string, n: number): Promise<void> {
  await waitUntil(async () => {
    const res = await api<string[]>(url, '/api/v1/series', { 'match[]': 'e2e_metric' }, { headers: TENANT });
    return res.httpStatus === 200 && (res.data as unknown as unknown[]).length === n;
  }, 60_000);
}

async function waitUntil(fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`condition not met within ${timeoutMs}ms`);
}
