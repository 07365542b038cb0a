// Remote read at /api/v1/read: SAMPLES and STREAMED_XOR_CHUNKS answers decoded
// back, tenant scoping, bad bodies.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { labelsFromRecord } from '@strata/model';
import { MemoryQuerier } from '@strata/model/testing';
import { Engine } from '@strata/promql';
import { createHttpServer, createLogger } from '@strata/service';
import { decodeXorChunk } from '@strata/tsdb';
import { decodeChunkedFrames, decodeReadResponse, encodeReadRequest, registerPrometheusApi, remoteReadRoutes, type ReadRequest } from './index.ts';

function server() {
  const q = new MemoryQuerier();
  const ts = Array.from({ length: 300 }, (_, i) => i * 1000);
  for (const job of ['b', 'a'])
    q.append(
      't1',
      labelsFromRecord({ __name__: 'up', job }),
      ts,
      ts.map((t) => t / 1000 + (job === 'a' ? 0.5 : 0)),
    );
  q.append('t2', labelsFromRecord({ __name__: 'up', job: 'other' }), [20_000], [7]);
  const registry = new Registry();
  const app = createHttpServer({ logger: createLogger('test', 'silent'), registry, readiness: { notReadyReason: () => undefined } });
  registerPrometheusApi(app, {
    querier: q,
    engine: new Engine({ querier: q }),
    multitenancyEnabled: true,
    logger: createLogger('test', 'silent'),
    registry,
    prefixes: ['/api/v1', '/prometheus/api/v1'],
    routes: remoteReadRoutes(),
  });
  return app;
}

const request = (types: ReadRequest['acceptedResponseTypes']): ReadRequest => ({
  queries: [
    { startMs: 10_000, endMs: 250_000, matchers: [{ type: '=', name: '__name__', value: 'up' }] },
    { startMs: 0, endMs: 5_000, matchers: [{ type: '=', name: 'job', value: 'a' }] },
  ],
  acceptedResponseTypes: types,
});

test('remote read answers SAMPLES as a snappy ReadResponse, one result per query, series sorted', async () => {
  const app = server();
  const res = await app.inject({
    method: 'POST',
    url: '/prometheus/api/v1/read',
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-scope-orgid': 't1' },
    payload: encodeReadRequest(request([])),
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], 'application/x-protobuf');
  assert.equal(res.headers['content-encoding'], 'snappy');
  const [first, second] = decodeReadResponse(res.rawPayload);
  assert.deepEqual(
    first.map((s) => s.labels),
    [
      { __name__: 'up', job: 'a' },
      { __name__: 'up', job: 'b' },
    ],
  );
  assert.equal(first[0].samples.length, 241);
  assert.deepEqual(first[0].samples[0], [10_000, 10.5]);
  assert.deepEqual(first[1].samples.at(-1), [250_000, 250]);
  assert.deepEqual(second, [{ labels: { __name__: 'up', job: 'a' }, samples: [0, 1000, 2000, 3000, 4000, 5000].map((t) => [t, t / 1000 + 0.5]) }]);
  await app.close();
});

test('remote read streams XOR chunks in CRC-checked frames when the client accepts STREAMED_XOR_CHUNKS', async () => {
  const app = server();
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/read',
    headers: { 'content-type': 'application/x-protobuf', 'x-scope-orgid': 't1' },
    payload: encodeReadRequest(request(['STREAMED_XOR_CHUNKS', 'SAMPLES'])),
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], 'application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse');
  const frames = decodeChunkedFrames(res.rawPayload);
  assert.deepEqual(
    frames.map((f) => [f.queryIndex, f.labels.job]),
    [
      [0, 'a'],
      [0, 'b'],
      [1, 'a'],
    ],
  );
  // 241 samples: chunks of 120, 120, 1.
  assert.deepEqual(
    frames[0].chunks.map((c) => [c.minTimeMs, c.maxTimeMs, c.type]),
    [
      [10_000, 129_000, 1],
      [130_000, 249_000, 1],
      [250_000, 250_000, 1],
    ],
  );
  const decoded = frames[1].chunks.map((c) => decodeXorChunk(c.data));
  const times = decoded.flatMap((d) => [...d.timestamps]);
  const values = decoded.flatMap((d) => [...d.values]);
  assert.equal(times.length, 241);
  assert.deepEqual([times[0], values[0], times.at(-1), values.at(-1)], [10_000, 10, 250_000, 250]);
  await app.close();
});

test('remote read is tenant-scoped and refuses a body that is not a snappy ReadRequest', async () => {
  const app = server();
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/read',
    headers: { 'content-type': 'application/x-protobuf', 'x-scope-orgid': 't2' },
    payload: encodeReadRequest(request([])),
  });
  assert.deepEqual(
    decodeReadResponse(res.rawPayload)[0].map((s) => s.labels.job),
    ['other'],
  );
  const noTenant = await app.inject({
    method: 'POST',
    url: '/api/v1/read',
    headers: { 'content-type': 'application/x-protobuf' },
    payload: encodeReadRequest(request([])),
  });
  assert.equal(noTenant.statusCode, 401);
  const bad = await app.inject({
    method: 'POST',
    url: '/api/v1/read',
    headers: { 'content-type': 'application/x-protobuf', 'x-scope-orgid': 't1' },
    payload: Buffer.from('not snappy'),
  });
  assert.equal(bad.statusCode, 400);
  await app.close();
});
