// The push edge: every error kind, raised below the distributor's HTTP layer
// (by Kafka's writer, by the instance limits), is answered with the status of
// its row in REMOTE_WRITE_STATUS and OTLP_STATUS. A new kind fails here until both tables know it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { Registry } from 'prom-client';
import { ERROR_KINDS, StrataError, type ErrorKind } from '@strata/errors';
import { encodeExportRequest } from '@strata/otlp';
import { compressBody, encodeWriteRequest, encodeWriteRequestV2 } from '@strata/remote-write';
import { createHttpServer, createLogger } from '@strata/service';
import { Distributor, OTLP_STATUS, REMOTE_WRITE_STATUS, registerPushRoutes, type RecordWriter } from './index.ts';

/** Remote write HTTP status; OTLP HTTP status and the gRPC code in its google.rpc.Status. */
const EXPECTED: Record<ErrorKind, { rw: number; otlp: number; grpc: number }> = {
  'bad-input': { rw: 400, otlp: 400, grpc: 3 },
  unauthorized: { rw: 401, otlp: 401, grpc: 16 },
  'too-large': { rw: 413, otlp: 413, grpc: 8 },
  'unsupported-media-type': { rw: 415, otlp: 415, grpc: 3 },
  limit: { rw: 429, otlp: 429, grpc: 8 },
  unprocessable: { rw: 422, otlp: 422, grpc: 9 },
  'not-found': { rw: 404, otlp: 404, grpc: 5 },
  conflict: { rw: 409, otlp: 409, grpc: 10 },
  deduplicated: { rw: 202, otlp: 202, grpc: 2 },
  unavailable: { rw: 503, otlp: 503, grpc: 14 },
  timeout: { rw: 503, otlp: 503, grpc: 14 },
  canceled: { rw: 499, otlp: 499, grpc: 1 },
  internal: { rw: 500, otlp: 503, grpc: 14 },
};

const Status = protobuf.parse('syntax = "proto3"; message Status { int32 code = 1; string message = 2; }').root.lookupType('Status');
const status = (payload: Buffer) => Status.toObject(Status.decode(payload)) as { code: number; message: string };
const V2 = 'application/x-protobuf;proto=io.prometheus.write.v2.Request';
const WRITTEN = ['x-prometheus-remote-write-samples-written', 'x-prometheus-remote-write-histograms-written', 'x-prometheus-remote-write-exemplars-written'];

/** A distributor whose Kafka writer, or whose instance limits, fail with an error of `kind`. */
async function failingServer() {
  const state: { kind: ErrorKind; where: 'writer' | 'instance-limits'; error?: () => Error } = { kind: 'internal', where: 'writer' };
  const fail = () => state.error?.() ?? new StrataError('test', state.kind, `a ${state.kind} failure; do what it says`);
  const writer: RecordWriter = {
    write: async () => {
      if (state.where === 'writer') throw fail();
    },
    partitionCount: async () => 1,
  };
  const logger = createLogger('test', 'silent');
  const registry = new Registry();
  const distributor = new Distributor({ writer, maxRecvMsgSize: 1 << 20, logger, registry });
  const check = distributor.checkInstanceLimits.bind(distributor);
  distributor.checkInstanceLimits = (bytes: number) => {
    if (state.where === 'instance-limits') throw fail();
    check(bytes);
  };
  const app = createHttpServer({ logger, registry, readiness: { notReadyReason: () => undefined } });
  registerPushRoutes(app, { distributor, multitenancyEnabled: false, logger, registry, maxBodyBytes: 1 << 20 });
  await app.ready();
  return { app, state };
}

const now = Date.now();
const series = { labels: [{ name: '__name__', value: 'up' }], samples: [{ value: 1, timestamp: now }] };
const v1Body = compressBody(encodeWriteRequest({ timeseries: [series] }));
const v2Body = compressBody(encodeWriteRequestV2({ timeseries: [series] }));
const otlpBody = encodeExportRequest({
  resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: 'up', gauge: { dataPoints: [{ timeUnixNano: BigInt(now) * 1_000_000n, value: 1 }] } }] }] }],
});

test('the tables cover every kind', () => {
  assert.deepEqual(Object.keys(EXPECTED).sort(), [...ERROR_KINDS].sort(), 'the expectations cover every kind');
  assert.deepEqual(Object.keys(REMOTE_WRITE_STATUS).sort(), [...ERROR_KINDS].sort());
  assert.deepEqual(Object.keys(OTLP_STATUS).sort(), [...ERROR_KINDS].sort());
});

test('every kind: remote write 1.0 and 2.0 and OTLP answer its status, the message, Retry-After on 429 and 503', async () => {
  const { app, state } = await failingServer();
  for (const where of ['writer', 'instance-limits'] as const) {
    state.where = where;
    for (const kind of ERROR_KINDS) {
      state.kind = kind;
      const want = EXPECTED[kind];
      const what = `${kind} from the ${where}`;
      assert.equal(REMOTE_WRITE_STATUS[kind], want.rw, what);
      assert.deepEqual(OTLP_STATUS[kind], { http: want.otlp, grpc: want.grpc }, what);

      for (const [contentType, payload] of [
        ['application/x-protobuf', v1Body],
        [V2, v2Body],
      ] as const) {
        const rw = await app.inject({ method: 'POST', url: '/api/v1/push', headers: { 'content-type': contentType }, payload });
        assert.equal(rw.statusCode, want.rw, `${what}, ${contentType}: ${rw.body}`);
        assert.equal(rw.body, `a ${kind} failure; do what it says\n`, what);
        assert.equal(rw.headers['retry-after'], want.rw === 429 || want.rw === 503 ? '1' : undefined, `${what}: Retry-After`);
        // 2.0 says nothing was written, also on failure; only a shed request, refused before it is read, does not.
        const written = contentType === V2 && where === 'writer' ? ['0', '0', '0'] : [undefined, undefined, undefined];
        assert.deepEqual(
          WRITTEN.map((h) => rw.headers[h]),
          written,
          `${what}, ${contentType}: Written headers`,
        );
      }

      const otlp = await app.inject({ method: 'POST', url: '/otlp/v1/metrics', headers: { 'content-type': 'application/x-protobuf' }, payload: otlpBody });
      assert.equal(otlp.statusCode, want.otlp, `${what}, OTLP: ${otlp.body}`);
      assert.deepEqual(status(otlp.rawPayload), { code: want.grpc, message: `a ${kind} failure; do what it says` }, what);
      assert.equal(otlp.headers['retry-after'], want.otlp === 429 || want.otlp === 503 ? '1' : undefined, `${what}, OTLP: Retry-After`);
    }
  }
});

test('an error that is not a StrataError is an internal error, said as one', async () => {
  const { app, state } = await failingServer();
  state.where = 'writer';
  state.error = () => new TypeError('x is undefined');
  const rw = await app.inject({ method: 'POST', url: '/api/v1/push', headers: { 'content-type': 'application/x-protobuf' }, payload: v1Body });
  assert.equal(rw.statusCode, 500);
  assert.equal(rw.body, 'internal error: x is undefined\n');
  const otlp = await app.inject({ method: 'POST', url: '/otlp/v1/metrics', headers: { 'content-type': 'application/x-protobuf' }, payload: otlpBody });
  assert.equal(otlp.statusCode, 503);
  assert.deepEqual(status(otlp.rawPayload), { code: 14, message: 'internal error: x is undefined' });
});
