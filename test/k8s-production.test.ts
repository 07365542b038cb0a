// The kustomize overlays run as a kubelet would (test/support/pod-runner): every pod in its own
// network namespace, its container's args and env as rendered, its user, volumes and probes.
// production (test/k8s/production: the overlay with 2 partitions, one querier, no rulers, plus the
// S3 server it expects and a real Prometheus): 3 Kafka brokers, 2 distributors, 2 x 2 ingesters,
// querier, compactor, Redis, bucket. A real Prometheus 2.42 remote-writes through the distributor
// Service; data older than -querier.query-store-after is read from the shared bucket after a flush;
// a SIGKILLed ingester is restarted in place with its volume; zone a then zone b are rolled one pod
// at a time through the eviction API (the one ingester PDB refuses the partner zone meanwhile)
// while a writer pushes, and every acknowledged sample is read back. single: comes up, accepts a
// push, answers a query.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EvictionRefused, PodRunner, renderOverlay } from './support/pod-runner/index.ts';
import { api, fetchRetryingClosed, push, waitFor, type MatrixSeries, type VectorSample } from './support/client.ts';
import { scrape } from './support/metrics.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TENANT = 'k8s-e2e';
const HEADERS = { 'X-Scope-OrgID': TENANT };
const keep = process.env.STRATA_KEEP_TEST_DATA !== undefined;

function startLog(): (line: string) => void {
  const t0 = Date.now();
  return (line) => {
    if (process.env.STRATA_POD_RUNNER_LOG) process.stderr.write(`${((Date.now() - t0) / 1000).toFixed(1)}s ${line}\n`);
  };
}

/** Every raw sample of `selector` within `range` at `timeMs`: series key -> timestamp -> value. */
async function readRaw(url: string, selector: string, timeMs: number, headers: Record<string, string>): Promise<Map<string, Map<number, number>>> {
  const res = await api<{ result: MatrixSeries[] }>(url, '/prometheus/api/v1/query', { query: selector, time: String(timeMs / 1000) }, { headers });
  assert.equal(res.httpStatus, 200, res.error);
  return new Map(res.data.result.map((s) => [s.metric.instance, new Map(s.values.map(([t, v]) => [Math.round(t * 1000), Number(v)]))]));
}

function series(metric: string, n: number, ts: number[], value: (s: number, t: number) => number) {
  return Array.from({ length: n }, (_, s) => ({
    labels: [
      { name: '__name__', value: metric },
      { name: 'instance', value: `host-${s}` },
      { name: 'job', value: 'k8s' },
    ],
    samples: ts.map((t) => ({ timestamp: t, value: value(s, t) })),
  }));
}

function record(into: Map<string, Map<number, number>>, pushed: ReturnType<typeof series>): void {
  for (const s of pushed) {
    const key = s.labels[1].value;
    let m = into.get(key);
    if (!m) into.set(key, (m = new Map()));
    for (const x of s.samples) m.set(x.timestamp, x.value);
  }
}

function missing(want: Map<string, Map<number, number>>, got: Map<string, Map<number, number>>): string[] {
  const out: string[] = [];
  for (const [k, m] of want) for (const [t, v] of m) if (got.get(k)?.get(t) !== v) out.push(`${k}@${t}`);
  return out;
}

describe('the production overlay under the pod runner', { timeout: 1_200_000 }, () => {
  let runner: PodRunner;
  let dir: string;
  let distributor: string;
  let querier: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-k8s-production-'));
    runner = await PodRunner.start({ objects: renderOverlay(join(ROOT, 'test/k8s/production')), dir, repoRoot: ROOT, log: startLog() });
    await runner.waitReady(undefined, 420_000);
    distributor = await runner.forward('distributor', 8080);
    querier = await runner.forward('querier', 8080);
  });

  after(async () => {
    await runner?.stop();
    if (!keep && dir) rmSync(dir, { recursive: true, force: true });
  });

  test('every workload came up: 3 brokers, 2 distributors, 2 partitions x 2 zones, querier, compactor, Redis, bucket', () => {
    const count = (w: string): number => runner.podsOf(w).filter((p) => p.ready).length;
    assert.deepEqual(
      ['kafka', 'distributor', 'ingester-zone-a', 'ingester-zone-b', 'querier', 'compactor', 'redis', 'ring-kv', 's3'].map((w) => [w, count(w)]),
      [
        ['kafka', 3],
        ['distributor', 2],
        ['ingester-zone-a', 2],
        ['ingester-zone-b', 2],
        ['querier', 1],
        ['compactor', 1],
        ['redis', 1],
        ['ring-kv', 1],
        ['s3', 1],
      ],
    );
    assert.equal(runner.podsOf('kafka-create-topic')[0].phase, 'Succeeded');
  });

  test('the distributor and the querier read the partition ring from the ring KV: 2 ACTIVE partitions, their owners healthy', async () => {
    for (const url of [distributor, querier]) {
      await waitFor(
        `the partition ring at ${url}`,
        async () => {
          const page = await scrape(url);
          const got = [
            page.sum('strata_partition_ring_stale'),
            page.sum('strata_partition_ring_partitions', { state: 'ACTIVE' }),
            page.sum('strata_partition_ring_owners', { health: 'healthy' }),
          ];
          if (got.join() !== '0,2,4') throw new Error(`stale, ACTIVE partitions, healthy owners: ${got.join(', ')}, not 0, 2, 4`);
          return true;
        },
        60_000,
      );
    }
  });

  test('a real Prometheus remote-writes through the distributor Service and the querier Service answers', async () => {
    const headers = { 'X-Scope-OrgID': 'k8s-prometheus' };
    const up = await waitFor(
      'up{job="strata"} from Prometheus',
      async () => {
        const res = await api<{ result: VectorSample[] }>(querier, '/prometheus/api/v1/query', { query: 'up{job="strata"}' }, { headers });
        // A scrape can time out on a busy machine (up 0); wait for one where both targets answered.
        return res.httpStatus === 200 && res.data.result.length === 2 && res.data.result.every((x) => x.value[1] === '1') ? res.data.result : undefined;
      },
      120_000,
    );
    assert.deepEqual(up.map((s) => [s.metric.instance, s.value[1]]).sort(), [
      ['distributor:8080', '1'],
      ['querier:8080', '1'],
    ]);
    assert.ok(
      up.every((s) => s.metric.cluster === 'pod-runner'),
      'external labels kept',
    );
    // Many scrapes arrived, not one: Prometheus keeps remote-writing through the Service.
    const n = await api<{ result: VectorSample[] }>(querier, '/prometheus/api/v1/query', { query: 'count_over_time(up{job="strata"}[5m])' }, { headers });
    assert.ok(
      n.data.result.every((x) => Number(x.value[1]) >= 2),
      JSON.stringify(n.data.result),
    );
  });

  test('data older than -querier.query-store-after is read from the shared bucket after a flush', async () => {
    // 4 minutes of 1s samples ending 6 minutes ago: older than query-store-after (2m) and
    // query-ingesters-within (3m), so only the bucket can answer for them.
    const end = Math.floor((Date.now() - 6 * 60_000) / 1000) * 1000;
    const want = new Map<string, Map<number, number>>();
    for (let t = end - 240_000; t < end; t += 20_000) {
      const ts = Array.from({ length: 20 }, (_, i) => t + i * 1000);
      const body = series('k8s_old', 10, ts, (s, x) => s * 1e6 + x / 1000);
      const res = await push(distributor, body, HEADERS);
      assert.equal(res.status, 200, res.body);
      record(want, body);
    }
    const before = await readRaw(querier, 'k8s_old[5m]', end, HEADERS);
    assert.equal(before.size, 0, 'nothing in the bucket before the flush: the ingesters are not asked for data this old');
    await flushAll();
    const got = await waitFor(
      'k8s_old from the bucket',
      async () => {
        const m = await readRaw(querier, 'k8s_old[5m]', end, HEADERS);
        return missing(want, m).length === 0 ? m : undefined;
      },
      60_000,
    );
    assert.deepEqual(missing(want, got), []);
    // Both zones of each partition shipped, and every ingester's volume keeps what it cut.
    for (const p of ['ingester-zone-a-0', 'ingester-zone-a-1', 'ingester-zone-b-0', 'ingester-zone-b-1']) {
      assert.ok(blocksOnVolume(p).length > 0, `${p} has blocks on its volume`);
    }
  });

  async function flushAll(): Promise<void> {
    for (const p of ['ingester-zone-a-0', 'ingester-zone-a-1', 'ingester-zone-b-0', 'ingester-zone-b-1']) {
      const url = await runner.forward(p, 8080);
      const res = await fetchRetryingClosed(`${url}/ingester/flush?wait=true`, { method: 'POST', signal: AbortSignal.timeout(120_000) });
      assert.equal(res.status, 204, `${p}: ${await res.text()}`);
    }
  }

  function blocksOnVolume(pod: string): string[] {
    const tsdb = join(dir, 'pvc', `data-${pod}`, 'tsdb');
    return readdirSync(tsdb, { recursive: true, encoding: 'utf8' }).filter((f) => /[0-9A-Z]{26}$/.test(f));
  }

  test('an ingester killed with SIGKILL is restarted in place, with its volume', async () => {
    const pod = runner.pod('ingester-zone-b-1');
    const pid = pod.pid();
    assert.ok(pid !== undefined);
    const blocks = blocksOnVolume(pod.name);
    process.kill(pid, 'SIGKILL');
    await waitFor('ingester-zone-b-1 restarted and ready', async () => (pod.restarts === 1 && pod.ready ? true : undefined), 180_000);
    assert.notEqual(pod.pid(), pid);
    assert.equal(runner.pod('ingester-zone-b-1'), pod, 'the same pod: the container restarted, the pod was not replaced');
    assert.deepEqual(
      blocksOnVolume(pod.name).filter((b) => blocks.includes(b)),
      blocks,
      'the blocks on its volume are still there',
    );
  });

  test('zone a then zone b rolled one pod at a time under load: the PDB holds the partner, every acknowledged sample is read back', async (t) => {
    const usageBefore = runner.usage();
    const t0 = Date.now();
    const acked = new Map<string, Map<number, number>>();
    let stop = false;
    let pushes = 0;
    let failures = 0;
    const writer = (async () => {
      while (!stop) {
        const t = Date.now();
        const body = series('k8s_load', 20, [t], (s, x) => s + x / 1e6);
        try {
          const res = await push(distributor, body, HEADERS);
          if (res.status === 200) record(acked, body);
          else failures++;
        } catch {
          failures++;
        }
        pushes++;
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    try {
      for (const [zone, partner] of [
        ['a', 'b'],
        ['b', 'a'],
      ]) {
        for (const n of [0, 1]) {
          const name = `ingester-zone-${zone}-${n}`;
          const fresh = await runner.evict(name);
          // While this copy of partition n is down, its other copy may not be evicted.
          await assert.rejects(runner.evict(`ingester-zone-${partner}-${n}`), EvictionRefused);
          await waitFor(`${name} back and ready`, async () => (fresh.ready ? true : undefined), 240_000);
        }
      }
    } finally {
      stop = true;
      await writer;
    }
    // CPU under the load (pods that kept their process), for the manifests' requests.
    const seconds = (Date.now() - t0) / 1000;
    for (const u of runner.usage()) {
      const b = usageBefore.find((x) => x.pod === u.pod && x.container === u.container);
      if (b && u.cpuSeconds >= b.cpuSeconds)
        t.diagnostic(`${u.pod}/${u.container}: ${((u.cpuSeconds - b.cpuSeconds) / seconds).toFixed(3)} CPU under load, ${u.rssMiB.toFixed(0)} MiB RSS`);
    }
    const total = [...acked.values()].reduce((a, m) => a + m.size, 0);
    assert.ok(pushes > 50 && total > 1000, `pushes ${pushes}, acknowledged samples ${total}`);
    // Everything in the bucket or an ingester: flush, so data older than query-store-after is there too.
    await flushAll();
    const end = Date.now() + 1000;
    const got = await waitFor(
      'every acknowledged sample',
      async () => {
        const m = await readRaw(querier, 'k8s_load[20m]', end, HEADERS);
        return missing(acked, m).length === 0 ? m : undefined;
      },
      90_000,
    ).catch(async () => readRaw(querier, 'k8s_load[20m]', end, HEADERS));
    const lost = missing(acked, got);
    assert.deepEqual(lost.slice(0, 10), [], `${lost.length} of ${total} acknowledged samples lost (${failures} pushes refused)`);
    t.diagnostic(`${pushes} pushes during the rolls, ${total} samples acknowledged, ${lost.length} lost, ${failures} pushes not acknowledged`);
  });

  test("resource footprint (RSS, CPU) of every pod, for the manifests' requests", (t) => {
    for (const u of runner.usage()) t.diagnostic(`${u.pod}/${u.container}: ${u.rssMiB.toFixed(0)} MiB RSS, ${u.cpuSeconds.toFixed(1)} CPU-s`);
    assert.ok(runner.usage().length >= 14);
  });
});

describe('the single overlay under the pod runner', { timeout: 600_000 }, () => {
  let runner: PodRunner;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-k8s-single-'));
    runner = await PodRunner.start({ objects: renderOverlay(join(ROOT, 'k8s/overlays/single')), dir, repoRoot: ROOT, log: startLog() });
    await runner.waitReady(undefined, 300_000);
  });

  after(async () => {
    await runner?.stop();
    if (!keep && dir) rmSync(dir, { recursive: true, force: true });
  });

  test('comes up, accepts a push and answers a query', async () => {
    const url = await runner.forward('strata', 8080);
    const t = Date.now();
    const body = series('k8s_single', 3, [t - 2000, t - 1000, t], (s, x) => s + (x - t) / 1000);
    const res = await push(url, body);
    assert.equal(res.status, 200, res.body);
    const got = await waitFor(
      'the pushed samples',
      async () => {
        const m = await readRaw(url, 'k8s_single[1m]', t + 1000, {});
        return m.size === 3 ? m : undefined;
      },
      60_000,
    );
    const want = new Map<string, Map<number, number>>();
    record(want, body);
    assert.deepEqual(missing(want, got), []);
  });
});
