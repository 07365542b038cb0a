// Instance limits (-distributor.instance-limits.*) over HTTP with a Kafka writer
// that holds its writes until released: over the inflight request or byte limit a
// push is refused at once with 503, a one-line reason and Retry-After, for remote
// write and OTLP alike; the slots come back when the held pushes finish.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import { compressBody, encodeWriteRequest } from '@strata/remote-write';
import { encodeExportRequest } from '@strata/otlp';
import { createHttpServer, createLogger } from '@strata/service';
import { KafkaUnavailableError } from '@strata/kafka';
import { Distributor, registerPushRoutes, type InstanceLimits, type RecordWriter } from './index.ts';

class HeldWriter implements RecordWriter {
  written = 0;
  fail = false;
  private held: (() => void)[] = [];
  async write(): Promise<void> {
    await new Promise<void>((resolve) => this.held.push(resolve));
    if (this.fail) throw new KafkaUnavailableError('producing to Kafka did not finish within 2000ms');
    this.written++;
  }
  async partitionCount(): Promise<number> {
    return 1;
  }
  get waiting(): number {
    return this.held.length;
  }
  release(): void {
    for (const r of this.held.splice(0)) r();
  }
}

async function server(instanceLimits: InstanceLimits) {
  const writer = new HeldWriter();
  const logger = createLogger('test', 'silent');
  const registry = new Registry();
  const distributor = new Distributor({ writer, maxRecvMsgSize: 1 << 20, logger, registry, instanceLimits });
  const app = createHttpServer({ logger, registry, readiness: { notReadyReason: () => undefined } });
  registerPushRoutes(app, { distributor, multitenancyEnabled: false, logger, registry, maxBodyBytes: 1 << 20 });
  await app.ready();
  const body = (series: number) =>
    compressBody(
      encodeWriteRequest({
        timeseries: Array.from({ length: series }, (_, i) => ({
          labels: [
            { name: '__name__', value: 'm' },
            { name: 'i', value: randomBytes(20).toString('hex') },
          ],
          samples: [{ value: i, timestamp: Date.now() }],
        })),
      }),
    );
  const push = (payload: Buffer) =>
    app.inject({ method: 'POST', url: '/api/v1/push', headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy' }, payload });
  const otlp = () =>
    app.inject({
      method: 'POST',
      url: '/otlp/v1/metrics',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
  const until = async (cond: () => boolean) => {
    for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
    assert.ok(cond(), 'condition not reached');
  };
  return { writer, registry, body, push, otlp, until };
}

test('over max inflight push requests: 503 at once with Retry-After and a reason; the slot frees when a push ends', async () => {
  const { writer, registry, body, push, otlp, until } = await server({ maxInflightPushRequests: 2, maxInflightPushRequestsBytes: 0 });
  const held = [push(body(3)), push(body(3))];
  await until(() => writer.waiting === 2);
  const refused = await push(body(3));
  assert.equal(refused.statusCode, 503);
  assert.equal(refused.headers['retry-after'], '1');
  assert.match(
    refused.body,
    /^the write request has been rejected because the distributor already handles its limit of 2 push requests at once \(err-strata-distributor-max-inflight-push-requests\).*-distributor\.instance-limits\.max-inflight-push-requests\n$/,
  );
  // OTLP pushes share the same slots, and say so in a google.rpc.Status.
  const refusedOtlp = await otlp();
  assert.equal(refusedOtlp.statusCode, 503);
  assert.equal(refusedOtlp.headers['retry-after'], '1');
  assert.match((JSON.parse(refusedOtlp.body) as { message: string }).message, /err-strata-distributor-max-inflight-push-requests/);
  const metric = await registry.getSingleMetric('strata_distributor_instance_rejected_requests_total')!.get();
  assert.equal(metric.values.find((v) => v.labels.reason === 'max_inflight_push_requests')?.value, 2);

  writer.release();
  for (const r of await Promise.all(held)) assert.equal(r.statusCode, 200);
  const again = push(body(3));
  await until(() => writer.waiting === 1);
  writer.release();
  assert.equal((await again).statusCode, 200, 'slots come back once pushes end');
  assert.equal(writer.written, 3);
});

test('over max inflight push request bytes: 503 naming the bytes; a request that fits alone still passes', async () => {
  const { writer, body, push, until } = await server({ maxInflightPushRequests: 0, maxInflightPushRequestsBytes: 1500 });
  const big = body(20);
  assert.ok(big.length > 750 && big.length < 1500, `body of ${big.length} bytes`);
  const first = push(big);
  await until(() => writer.waiting === 1);
  const refused = await push(big);
  assert.equal(refused.statusCode, 503);
  assert.equal(refused.headers['retry-after'], '1');
  assert.match(
    refused.body,
    new RegExp(`its ${big.length} bytes on top of the ${big.length} bytes of push requests in flight exceed the distributor's limit of 1500 bytes`),
  );
  const small = push(body(1));
  await until(() => writer.waiting === 2);
  writer.release();
  assert.equal((await first).statusCode, 200);
  assert.equal((await small).statusCode, 200);
});

test('a produce that is not acknowledged in time is a 503 with Retry-After, never a 2xx, and frees its slot', async () => {
  const { writer, body, push, until } = await server({ maxInflightPushRequests: 1, maxInflightPushRequestsBytes: 0 });
  writer.fail = true;
  const pending = push(body(2));
  await until(() => writer.waiting === 1);
  writer.release();
  const res = await pending;
  assert.equal(res.statusCode, 503);
  assert.equal(res.headers['retry-after'], '1');
  assert.match(res.body, /not acknowledged by Kafka \(producing to Kafka did not finish within 2000ms\)/);
  writer.fail = false;
  const next = push(body(2));
  await until(() => writer.waiting === 1);
  writer.release();
  assert.equal((await next).statusCode, 200);
});

test('a partition whose ingester is over an instance limit: pushes routed to it get 503 naming the ingester and the limit, nothing is written; others go on', async () => {
  const written: number[] = [];
  const writer: RecordWriter = {
    write: async (_tenant, records) => void written.push(...records.map((r) => r.partition)),
    partitionCount: async () => 2,
  };
  let refused: string | undefined = 'ingester-zone-a-1: 131072 series in memory, at the limit of 131072';
  const partitions = {
    lookup: async () => ({ partitions: [0, 1], partitionFor: (token: number) => token % 2, refusal: (p: number) => (p === 1 ? refused : undefined) }),
  };
  const logger = createLogger('test', 'silent');
  const registry = new Registry();
  const distributor = new Distributor({ writer, maxRecvMsgSize: 1 << 20, logger, registry, partitions });
  const app = createHttpServer({ logger, registry, readiness: { notReadyReason: () => undefined } });
  registerPushRoutes(app, { distributor, multitenancyEnabled: false, logger, registry, maxBodyBytes: 1 << 20 });
  await app.ready();
  const body = compressBody(
    encodeWriteRequest({
      timeseries: Array.from({ length: 50 }, (_, i) => ({
        labels: [
          { name: '__name__', value: 'm' },
          { name: 'i', value: String(i) },
        ],
        samples: [{ value: i, timestamp: Date.now() }],
      })),
    }),
  );
  const push = () =>
    app.inject({ method: 'POST', url: '/api/v1/push', headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy' }, payload: body });
  const res = await push();
  assert.equal(res.statusCode, 503, res.body);
  assert.match(
    res.body,
    /partition 1's ingester is over an instance limit \(ingester-zone-a-1: 131072 series in memory.*\(err-strata-ingester-over-limit\); nothing was written: retry/,
  );
  assert.equal(res.body.trim().split('\n').length, 1);
  assert.deepEqual(written, []);
  refused = undefined;
  const ok = await push();
  assert.equal(ok.statusCode, 200, ok.body);
  assert.deepEqual([...new Set(written)].sort(), [0, 1]);
});
