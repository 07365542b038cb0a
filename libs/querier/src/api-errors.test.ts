// The Prometheus API edge: every error kind, thrown below the API, is answered
// with its errorType and HTTP status; a new kind fails here until the table knows it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { ERROR_KINDS, StrataError, type ErrorKind } from '@strata/errors';
import { Engine, PromQLBadDataError, PromQLExecutionError, PromQLParseError, PromQLTimeoutError } from '@strata/promql';
import { createHttpServer, createLogger } from '@strata/service';
import { PROMETHEUS_API_ERRORS, registerPrometheusApi, type ErrorType } from './index.ts';
import { MemoryQuerier } from '@strata/model/testing';

const EXPECTED: Record<ErrorKind, [ErrorType, number]> = {
  'bad-input': ['bad_data', 400],
  unauthorized: ['bad_data', 401],
  'too-large': ['too_large_entry', 413],
  'unsupported-media-type': ['bad_data', 415],
  limit: ['too_many_requests', 429],
  unprocessable: ['execution', 422],
  'not-found': ['not_found', 404],
  conflict: ['bad_data', 409],
  deduplicated: ['internal', 500],
  unavailable: ['unavailable', 503],
  timeout: ['timeout', 503],
  canceled: ['canceled', 499],
  internal: ['internal', 500],
};

/** An API whose storage throws `failure()` on every read. */
function failingApi(failure: () => Error) {
  const querier = new MemoryQuerier();
  querier.select = async () => {
    throw failure();
  };
  const registry = new Registry();
  const logger = createLogger('test', 'silent');
  const app = createHttpServer({ logger, registry, readiness: { notReadyReason: () => undefined } });
  registerPrometheusApi(app, { querier, engine: new Engine({ querier }), multitenancyEnabled: false, logger, registry, prefixes: ['/api/v1'] });
  return app;
}

test('the table covers every kind', () => {
  assert.deepEqual(Object.keys(EXPECTED).sort(), [...ERROR_KINDS].sort(), 'the expectations cover every kind');
  assert.deepEqual(Object.keys(PROMETHEUS_API_ERRORS).sort(), [...ERROR_KINDS].sort());
});

test('every kind thrown by storage: its errorType and status, the message as the error', async () => {
  let kind: ErrorKind = 'internal';
  const app = failingApi(() => new StrataError('test', kind, `storage says ${kind}; do something about it`));
  for (kind of ERROR_KINDS) {
    const [errorType, status] = EXPECTED[kind];
    assert.deepEqual(PROMETHEUS_API_ERRORS[kind], { errorType, status }, kind);
    // Through the series endpoint (the querier directly) and through PromQL (the engine passes storage errors on).
    for (const url of ['/api/v1/series?match[]=up', '/api/v1/query?query=up&time=60']) {
      const r = await app.inject({ url });
      assert.equal(r.statusCode, status, `${kind} ${url}: ${r.body}`);
      assert.deepEqual(r.json(), { status: 'error', errorType, error: `storage says ${kind}; do something about it` }, `${kind} ${url}`);
    }
  }
});

test("PromQL's errors: parse and bad data 400 bad_data, execution 422, timeout 503, canceled 499; anything else 500 internal", async () => {
  const cases: [() => Error, ErrorType, number][] = [
    [() => new PromQLParseError('foo{', { start: 4, end: 4 }, 'unexpected end of input'), 'bad_data', 400],
    [() => new PromQLBadDataError('invalid parameter "step"'), 'bad_data', 400],
    [() => new PromQLExecutionError('vector cannot contain metrics with the same labelset'), 'execution', 422],
    [() => new PromQLTimeoutError('timeout', 'query execution'), 'timeout', 503],
    [() => new PromQLTimeoutError('canceled', 'query execution'), 'canceled', 499],
    [() => new TypeError('x is undefined'), 'internal', 500],
  ];
  for (const [failure, errorType, status] of cases) {
    const r = await failingApi(failure).inject({ url: '/api/v1/series?match[]=up' });
    assert.equal(r.statusCode, status, r.body);
    assert.deepEqual(r.json(), { status: 'error', errorType, error: failure().message });
  }
});
