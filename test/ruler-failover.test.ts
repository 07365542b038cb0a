// Two ruler processes sharding rule groups through the ruler ring in a real
// redis-server, writing recording-rule output through a real distributor,
// Kafka and an ingester: both evaluate a share of 20 groups; when one is
// SIGKILLed, the other takes over all groups within the heartbeat timeout
// (+ one check period and the reload; all evaluated one interval later), no evaluation is written twice for
// the same timestamp (the ingester counts a sample repeated at a timestamp as
// a duplicate), and the recorded series have no gap longer than the failover
// allows.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, LocalCluster, freePorts } from '@strata/local-cluster';
import { api, push, waitFor, type MatrixSeries } from './support/client.ts';
import { scrape } from './support/metrics.ts';

const TENANT = { 'X-Scope-OrgID': 'team-rules' };
const GROUPS = 20;
const INTERVAL_MS = 2000;
const HEARTBEAT_PERIOD_MS = 1000;
const HEARTBEAT_TIMEOUT_MS = 5000;

describe('ruler failover: two rulers in the Redis ruler ring (multi-process)', { timeout: 600_000 }, () => {
  let cluster: LocalCluster;
  let dir: string;
  const rulers: AppProcess[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-ruler-failover-'));
    cluster = await LocalCluster.start({
      dataDir: dir,
      partitions: 1,
      zones: ['a'],
      redis: true,
      extraArgs: { ingester: ['-ingester.partition-ring.min-partition-owners-duration=1s', '-ingester.ring.heartbeat-period=1s'] },
    });
    const querierArgs = cluster.process('querier').opts.args;
    const ingesterAddresses = querierArgs.find((a) => a.startsWith('-querier.ingester-addresses='))!;
    const kafkaArgs = querierArgs.filter((a) => a.startsWith('-ingest-storage.kafka.'));
    const ports = await freePorts(2);
    for (const [i, port] of ports.entries()) {
      const id = `ruler-${i + 1}`;
      rulers.push(
        new AppProcess({
          name: id,
          target: 'ruler',
          httpPort: port,
          logFile: join(dir, 'logs', `${id}.log`),
          args: [
            `-server.http-listen-port=${port}`,
            ...kafkaArgs,
            ingesterAddresses,
            `-blocks-storage.filesystem.dir=${join(dir, 'bucket')}`,
            '-ring.store=redis',
            `-ring.redis.endpoint=${cluster.redis!.endpoint}`,
            `-ruler.push-url=${cluster.distributorUrl}/api/v1/push`,
            `-ruler.ring.instance-id=${id}`,
            `-ruler.ring.heartbeat-period=${HEARTBEAT_PERIOD_MS / 1000}s`,
            `-ruler.ring.heartbeat-timeout=${HEARTBEAT_TIMEOUT_MS / 1000}s`,
            `-ruler.evaluation-interval=${INTERVAL_MS / 1000}s`,
            '-ruler.poll-interval=2s',
          ],
        }),
      );
    }
    for (const r of rulers) r.start();
    await Promise.all(rulers.map((r) => r.waitReady(180_000)));
    // Both rulers see each other before any group exists (a joining ruler is not what this test is about).
    await waitFor(
      "both rulers healthy in each other's view of the ring",
      async () => {
        const seen = await Promise.all(rulers.map(async (r) => (await scrape(r.url)).sum('strata_ruler_ring_healthy_rulers')));
        return seen.every((n) => n === 2) ? true : undefined;
      },
      60_000,
    );
  });

  after(async () => {
    await Promise.all(rulers.map((r) => r.kill('SIGTERM')));
    await cluster?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined && dir) rmSync(dir, { recursive: true, force: true });
  });

  const groupsOf = async (r: AppProcess) => (await scrape(r.url)).sum('strata_ruler_rule_groups') ?? 0;
  const duplicates = async () => {
    const page = await scrape(cluster.ingesters()[0].url);
    return (
      (page.sum('strata_ingester_samples_rejected_total', { reason: 'duplicate' }) ?? 0) +
      (page.sum('strata_ingester_samples_rejected_total', { reason: 'duplicate-timestamp-other-value' }) ?? 0)
    );
  };

  test('killing one of two rulers moves its groups to the other within the heartbeat timeout, no evaluation twice', async (t) => {
    // An input series the rules read (within the 5m lookback for the whole test).
    const t0 = Date.now();
    const res = await push(
      cluster.distributorUrl,
      [
        {
          labels: [
            { name: '__name__', value: 'failover_input' },
            { name: 'job', value: 'e2e' },
          ],
          samples: [{ value: 10, timestamp: t0 }],
        },
      ],
      TENANT,
    );
    assert.equal(res.status, 200, res.body);
    const dupBefore = await duplicates();

    for (let g = 0; g < GROUPS; g++) {
      const yaml = `name: g${g}\nrules:\n  - record: failover:rec\n    expr: sum by (job) (failover_input) + ${g}\n    labels:\n      group: g${g}\n`;
      const r = await fetch(`${rulers[g % 2].url}/prometheus/config/v1/rules/failover`, {
        method: 'POST',
        headers: { ...TENANT, 'content-type': 'application/yaml' },
        body: yaml,
      });
      assert.equal(r.status, 202, await r.text());
    }
    // Both rulers evaluate a share; together every group exactly once.
    const shares = await waitFor(
      'all groups scheduled over both rulers',
      async () => {
        const s = await Promise.all(rulers.map(groupsOf));
        return s[0] + s[1] === GROUPS ? s : undefined;
      },
      30_000,
    );
    assert.ok(shares[0] > 0 && shares[1] > 0, `both rulers own groups: ${shares.join(' + ')}`);
    await waitFor(
      'both rulers evaluating',
      async () => {
        const ev = await Promise.all(rulers.map(async (r) => (await scrape(r.url)).sum('strata_ruler_group_evaluations_total') ?? 0));
        return ev.every((n) => n > 0) ? true : undefined;
      },
      30_000,
    );
    // Let them evaluate side by side a few intervals.
    await new Promise((r) => setTimeout(r, 3 * INTERVAL_MS));

    const [victim, survivor] = rulers;
    const victimShare = shares[0];
    process.kill(victim.pid!, 'SIGKILL');
    const killedAt = Date.now();
    await victim.waitExit();
    const tookOver = await waitFor('the survivor owns every group', async () => ((await groupsOf(survivor)) === GROUPS ? Date.now() : undefined), 60_000);
    const takeoverMs = tookOver - killedAt;
    assert.ok(
      takeoverMs <= HEARTBEAT_TIMEOUT_MS + HEARTBEAT_PERIOD_MS + 2000,
      `groups moved after ${takeoverMs}ms (heartbeat timeout ${HEARTBEAT_TIMEOUT_MS}ms)`,
    );

    // Within one more interval the survivor has evaluated every group; run a few more.
    await new Promise((r) => setTimeout(r, 4 * INTERVAL_MS));
    const end = Date.now();

    // Every group's recorded series: its raw samples since the upload.
    const q = await api<{ resultType: string; result: MatrixSeries[] }>(
      cluster.querierUrl,
      '/prometheus/api/v1/query',
      { query: `failover:rec[${Math.ceil((end - t0) / 1000) + 5}s]`, time: String(end / 1000) },
      { headers: { ...TENANT, 'X-Read-Consistency': 'strong' } },
    );
    assert.equal(q.status, 'success', q.error);
    const byGroup = new Map(q.data.result.map((s) => [s.metric.group, s.values.map(([t]) => Math.round(t * 1000))]));
    assert.equal(byGroup.size, GROUPS, `recorded series of ${[...byGroup.keys()].sort().join(',')}`);
    // The longest gap a moved group may show: the victim's last evaluation before the kill to the survivor's first after the takeover.
    const maxGap = takeoverMs + 2 * INTERVAL_MS + 1000;
    t.diagnostic(`shares ${shares.join(' + ')}; groups moved after ${takeoverMs}ms; max gap allowed ${maxGap}ms`);
    let moved = 0;
    for (const [group, ts] of byGroup) {
      assert.ok(ts.length >= 5, `${group}: ${ts.length} samples`);
      for (let i = 1; i < ts.length; i++) {
        const gap = ts[i] - ts[i - 1];
        assert.ok(gap > 0 && gap % INTERVAL_MS === 0, `${group}: samples on the group's schedule (${ts[i - 1]} → ${ts[i]})`);
        assert.ok(gap <= maxGap, `${group}: a gap of ${gap}ms around the failover (at most ${maxGap}ms)`);
        if (gap > INTERVAL_MS) moved++;
      }
      assert.ok(ts[ts.length - 1] > tookOver, `${group}: evaluated after the takeover (last at ${new Date(ts[ts.length - 1]).toISOString()})`);
    }
    assert.ok(moved <= victimShare, `${moved} series with a gap; the victim owned ${victimShare}`);
    // No evaluation written twice for a timestamp: the ingester saw no repeated sample.
    assert.equal((await duplicates()) - dupBefore, 0, 'samples repeated at a timestamp reached the ingester');
    const values = await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
      cluster.querierUrl,
      '/prometheus/api/v1/query',
      { query: 'failover:rec', time: String(end / 1000) },
      { headers: TENANT },
    );
    for (const s of values.data.result) assert.equal(Number(s.value[1]), 10 + Number(s.metric.group.slice(1)), `${s.metric.group}'s value`);
  });
});
