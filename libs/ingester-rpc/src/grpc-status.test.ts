// Every error kind crosses the querier–ingester gRPC edge: the server answers it
// with its gRPC code, the client throws it back with a kind. A new kind fails here until both tables know it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { ERROR_KINDS, StrataError, isRetriable, type ErrorKind } from '@strata/errors';
import type { Querier } from '@strata/model';
import { GRPC_STATUS, IngesterClient, IngesterServer, KIND_OF_GRPC_STATUS } from './index.ts';

/** The gRPC code each kind is answered with, and the kind the client reads back (lossy where gRPC has one code for two kinds). */
const EXPECTED: Record<ErrorKind, { code: grpc.status; back: ErrorKind }> = {
  'bad-input': { code: grpc.status.INVALID_ARGUMENT, back: 'bad-input' },
  unauthorized: { code: grpc.status.UNAUTHENTICATED, back: 'unauthorized' },
  'too-large': { code: grpc.status.RESOURCE_EXHAUSTED, back: 'limit' },
  'unsupported-media-type': { code: grpc.status.INVALID_ARGUMENT, back: 'bad-input' },
  limit: { code: grpc.status.RESOURCE_EXHAUSTED, back: 'limit' },
  unprocessable: { code: grpc.status.FAILED_PRECONDITION, back: 'unprocessable' },
  'not-found': { code: grpc.status.NOT_FOUND, back: 'not-found' },
  conflict: { code: grpc.status.ABORTED, back: 'conflict' },
  deduplicated: { code: grpc.status.ALREADY_EXISTS, back: 'deduplicated' },
  unavailable: { code: grpc.status.UNAVAILABLE, back: 'unavailable' },
  timeout: { code: grpc.status.DEADLINE_EXCEEDED, back: 'timeout' },
  canceled: { code: grpc.status.CANCELLED, back: 'canceled' },
  internal: { code: grpc.status.INTERNAL, back: 'internal' },
};

test('the tables cover every kind and every gRPC code', () => {
  assert.deepEqual(Object.keys(EXPECTED).sort(), [...ERROR_KINDS].sort(), 'the expectations cover every kind');
  assert.deepEqual(Object.keys(GRPC_STATUS).sort(), [...ERROR_KINDS].sort());
  const codes = Object.values(grpc.status).filter((v): v is number => typeof v === 'number');
  assert.deepEqual(
    Object.keys(KIND_OF_GRPC_STATUS)
      .map(Number)
      .sort((a, b) => a - b),
    codes.sort((a, b) => a - b),
  );
  for (const kind of Object.values(KIND_OF_GRPC_STATUS)) assert.ok(ERROR_KINDS.includes(kind), kind);
});

test('every kind, thrown by the served querier, reaches the client as its gRPC code and back as a kind', async () => {
  let kind: ErrorKind = 'internal';
  const failing: Querier = {
    select: async () => {
      throw new StrataError('test', kind, `a ${kind} error; the message crosses too`);
    },
    labelNames: async () => {
      throw new StrataError('test', kind, `a ${kind} error; the message crosses too`);
    },
    labelValues: async () => [],
  };
  const server = new IngesterServer({ querier: failing, address: '127.0.0.1:0' });
  await server.start();
  const client = new IngesterClient({ id: 'ingester-zone-a-0', address: `127.0.0.1:${server.port}`, timeoutMs: 5000 });
  try {
    for (kind of ERROR_KINDS) {
      const want = EXPECTED[kind];
      for (const call of [
        () => client.select({ tenant: 't', matchers: [], mint: 0, maxt: 1 }),
        () => client.labelNames({ tenant: 't', matchers: [], mint: 0, maxt: 1 }),
      ]) {
        await assert.rejects(call(), (err: unknown) => {
          assert.ok(err instanceof StrataError, String(err));
          assert.equal((err.cause as { code?: number }).code, want.code, `${kind}: gRPC code`);
          assert.equal(err.kind, want.back, `${kind}: kind read back`);
          // A verdict on the query (not retriable) reads as the ingester wrote it; a failure names the ingester.
          const own = !isRetriable(want.back) && want.back !== 'internal';
          assert.match(
            err.message,
            own
              ? new RegExp(`^a ${kind} error; the message crosses too$`)
              : new RegExp(`^ingester-zone-a-0 \\(127\\.0\\.0\\.1:\\d+\\): .*a ${kind} error; the message crosses too`),
          );
          return true;
        });
      }
    }
  } finally {
    client.close();
    await server.stop();
  }
});

test('an error that is not a StrataError is INTERNAL; a dead ingester is unavailable', async () => {
  const server = new IngesterServer({
    querier: { select: async () => Promise.reject(new TypeError('bug')), labelNames: async () => [], labelValues: async () => [] },
    address: '127.0.0.1:0',
  });
  await server.start();
  const client = new IngesterClient({ id: 'i', address: `127.0.0.1:${server.port}`, timeoutMs: 5000 });
  const dead = new IngesterClient({ id: 'dead', address: '127.0.0.1:1', timeoutMs: 1000 });
  try {
    await assert.rejects(
      client.select({ tenant: 't', matchers: [], mint: 0, maxt: 1 }),
      (err: unknown) => err instanceof StrataError && err.kind === 'internal' && /bug/.test(err.message),
    );
    await assert.rejects(
      dead.labelNames({ tenant: 't', matchers: [], mint: 0, maxt: 1 }),
      (err: unknown) => err instanceof StrataError && err.kind === 'unavailable',
    );
  } finally {
    client.close();
    dead.close();
    await server.stop();
  }
});
