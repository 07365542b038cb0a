import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_KINDS, StrataError, asStrataError, isRetriable } from './index.ts';

test('a StrataError carries its code, kind and message; retriability follows from the kind', () => {
  const e = new StrataError('sample-out-of-order', 'bad-input', 'sample out of order; send samples in time order');
  assert.equal(e.code, 'err-strata-sample-out-of-order');
  assert.equal(e.kind, 'bad-input');
  assert.equal(e.retriable, false);
  assert.equal(e.name, 'StrataError');
  assert.ok(e instanceof Error);
  assert.equal(new StrataError('kafka-unavailable', 'unavailable', 'x').retriable, true);
});

test('subclasses keep their own name for instanceof checks and logs', () => {
  class KvDown extends StrataError {}
  const e = new KvDown('kv-unavailable', 'unavailable', 'x', { cause: new Error('econnrefused'), retryAfterSeconds: 3 });
  assert.equal(e.name, 'KvDown');
  assert.ok(e instanceof StrataError);
  assert.equal((e.cause as Error).message, 'econnrefused');
  assert.equal(e.retryAfterSeconds, 3);
});

test('only limit, unavailable, timeout and canceled are retriable', () => {
  const retriable = ERROR_KINDS.filter(isRetriable);
  assert.deepEqual(retriable, ['limit', 'unavailable', 'timeout', 'canceled']);
  assert.equal(new Set(ERROR_KINDS).size, ERROR_KINDS.length, 'no kind listed twice');
});

test('asStrataError: a StrataError as it is, anything else internal with its message', () => {
  const ours = new StrataError('x', 'limit', 'slow down');
  assert.equal(asStrataError(ours), ours);
  const bug = asStrataError(new TypeError('undefined is not a function'), 'internal error: ');
  assert.deepEqual([bug.code, bug.kind, bug.message], ['err-strata-internal', 'internal', 'internal error: undefined is not a function']);
  assert.equal(asStrataError('boom').message, 'boom');
});
