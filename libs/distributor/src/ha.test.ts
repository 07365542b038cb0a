// HA dedup through the push route (fastify inject, a fake Kafka writer, the
// in-process KV and a fake clock): the elected replica's series are written
// without the replica label, the other replica gets 202 and writes nothing,
// failover after the timeout, tenants without accept_ha_samples untouched,
// and a KV that cannot answer → 503 with nothing written.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PartitionRecord } from '@strata/kafka';
import { Registry } from 'prom-client';
import { compressBody, decodeRecordValue, encodeWriteRequest, encodeWriteRequestV2 } from '@strata/remote-write';
import { HaTracker } from '@strata/ha-tracker';
import { DEFAULT_LIMITS, Overrides } from '@strata/limits';
import { KvUnavailableError, MemoryKv } from '@strata/ring';
import { createHttpServer, createLogger } from '@strata/service';
import { Distributor, registerPushRoutes, type RecordWriter } from './index.ts';

const logger = createLogger('test', 'silent');
const T = 1_700_000_000_000;

class FakeWriter implements RecordWriter {
  records: (PartitionRecord & { tenant: string })[] = [];
  async write(tenant: string, records: PartitionRecord[]): Promise<void> {
    for (const r of records) this.records.push({ tenant, ...r });
  }
  async partitionCount(): Promise<number> {
    return 2;
  }
  series() {
    return this.records.flatMap((r) => decodeRecordValue(r.value, r.format).timeseries);
  }
}

async function setup(opts: { acceptHa?: boolean; kv?: MemoryKv; maxClusters?: number } = {}) {
  const clock = { t: T };
  const writer = new FakeWriter();
  const registry = new Registry();
  const kv = opts.kv ?? new MemoryKv();
  const haTracker = new HaTracker({ kv, updateTimeoutMs: 15_000, updateTimeoutJitterMaxMs: 0, failoverTimeoutMs: 30_000, logger, now: () => clock.t });
  const limits = new Overrides({
    defaults: { ...DEFAULT_LIMITS, acceptHaSamples: false, ingestionRate: 1e9, ingestionBurstSize: 1e9 },
    runtimeConfig: () => ({ overrides: { 'team-ha': { accept_ha_samples: opts.acceptHa ?? true, ha_max_clusters: opts.maxClusters } } }),
  });
  const distributor = new Distributor({ writer, maxRecvMsgSize: 1 << 20, logger, registry, limits, haTracker, now: () => clock.t });
  const app = createHttpServer({ logger, registry, readiness: { notReadyReason: () => undefined } });
  registerPushRoutes(app, { distributor, multitenancyEnabled: true, logger, registry, maxBodyBytes: 1 << 20 });
  await app.ready();
  const push = async (replica: string, value: number, tenant = 'team-ha', v2 = false, cluster = 'prod') => {
    const timeseries = [0, 1, 2].map((i) => ({
      labels: [
        { name: '__name__', value: 'up' },
        { name: '__replica__', value: replica },
        { name: 'cluster', value: cluster },
        { name: 'instance', value: `host-${i}` },
      ],
      samples: [{ value, timestamp: clock.t }],
    }));
    const body = v2 ? compressBody(encodeWriteRequestV2({ timeseries })) : compressBody(encodeWriteRequest({ timeseries }));
    return app.inject({
      method: 'POST',
      url: '/api/v1/push',
      payload: body,
      headers: {
        'content-type': v2 ? 'application/x-protobuf;proto=io.prometheus.write.v2.Request' : 'application/x-protobuf',
        'content-encoding': 'snappy',
        'x-scope-orgid': tenant,
      },
    });
  };
  return { clock, writer, push, registry, kv };
}

test('two replicas: the elected one is written without __replica__, the other answered 202 and dropped; failover after the timeout', async () => {
  const { clock, writer, push, registry } = await setup();
  assert.equal((await push('r1', 1)).statusCode, 200);
  const rejected = await push('r2', 2);
  assert.equal(rejected.statusCode, 202);
  assert.match(rejected.body, /replica "r2".*"r1" is the elected one/);
  let series = writer.series();
  assert.equal(series.length, 3);
  for (const s of series) {
    assert.deepEqual(
      s.labels.map((l) => l.name),
      ['__name__', 'cluster', 'instance'],
      'replica label removed, cluster kept',
    );
    assert.deepEqual([...s.values], [1]);
  }
  // r1 goes silent; r2 keeps pushing and takes over once r1's timestamp is 30s old.
  clock.t += 29_000;
  assert.equal((await push('r2', 3)).statusCode, 202);
  clock.t += 1_000;
  assert.equal((await push('r2', 4)).statusCode, 200);
  clock.t += 1_000;
  assert.equal((await push('r1', 5)).statusCode, 202, 'r1 is now the follower');
  series = writer.series();
  assert.deepEqual(series.map((s) => s.values[0]).sort(), [1, 1, 1, 4, 4, 4]);
  assert.ok(series.every((s) => !s.labels.some((l) => l.name === '__replica__')));
  const metrics = await registry.getSingleMetricAsString('strata_distributor_deduped_samples_total');
  assert.match(metrics, /tenant="team-ha",cluster="prod"} 9/);
});

test('remote write 2.0 of the non-elected replica: 202 with zero Written headers', async () => {
  const { push } = await setup();
  assert.equal((await push('r1', 1, 'team-ha', true)).statusCode, 204);
  const res = await push('r2', 1, 'team-ha', true);
  assert.equal(res.statusCode, 202);
  assert.equal(res.headers['x-prometheus-remote-write-samples-written'], '0');
});

test('a tenant without accept_ha_samples: both replicas written, labels as sent', async () => {
  const { writer, push } = await setup({ acceptHa: false });
  assert.equal((await push('r1', 1)).statusCode, 200);
  assert.equal((await push('r2', 2)).statusCode, 200);
  const series = writer.series();
  assert.equal(series.length, 6);
  assert.ok(series.every((s) => s.labels.some((l) => l.name === '__replica__')));
});

test('the HA KV unreachable: 503 and nothing written (the sender retries), never both replicas accepted', async () => {
  const kv = new MemoryKv();
  kv.failWith = new KvUnavailableError('redis 127.0.0.1:6379 did not answer: connect ECONNREFUSED');
  const { writer, push } = await setup({ kv });
  for (const replica of ['r1', 'r2']) {
    const res = await push(replica, 1);
    assert.equal(res.statusCode, 503);
    assert.match(res.body, /HA tracker cannot check the elected replica of cluster "prod".*retry/);
  }
  assert.equal(writer.records.length, 0);
});

test("ha_max_clusters: a tenant's next cluster over the limit gets 400 with the reason and writes nothing; known clusters keep working", async () => {
  const { clock, writer, push } = await setup({ maxClusters: 2 });
  assert.equal((await push('r1', 1, 'team-ha', false, 'eu')).statusCode, 200);
  assert.equal((await push('r1', 1, 'team-ha', false, 'us')).statusCode, 200);
  const written = writer.records.length;
  const refused = await push('r1', 1, 'team-ha', false, 'ap');
  assert.equal(refused.statusCode, 400);
  assert.match(
    refused.body,
    /^the write request has been rejected because tenant "team-ha" already has the maximum of 2 HA clusters and "ap" would be one more \(err-strata-too-many-ha-clusters\).*ha_max_clusters/,
  );
  assert.equal(refused.body.trim().split('\n').length, 1);
  assert.equal(refused.headers['retry-after'], undefined, 'not a retriable answer');
  assert.equal(writer.records.length, written, 'nothing of the refused cluster written');
  // Both known clusters, and their other replicas' dedup, still work past the update timeout (KV consulted again).
  clock.t += 20_000;
  assert.equal((await push('r1', 2, 'team-ha', false, 'eu')).statusCode, 200);
  assert.equal((await push('r2', 2, 'team-ha', false, 'us')).statusCode, 202);
  // A tenant without the HA switch is not counted at all.
  assert.equal((await push('r1', 1, 'team-other', false, 'ap')).statusCode, 200);
});
