// Every error kind has an answer on the operator endpoints; a new kind fails here until it is given one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_KINDS, type ErrorKind } from '@strata/errors';
import { ADMIN_HTTP_STATUS } from './index.ts';

const EXPECTED: Record<ErrorKind, number> = {
  'bad-input': 400,
  unauthorized: 401,
  'too-large': 413,
  'unsupported-media-type': 415,
  limit: 429,
  unprocessable: 422,
  'not-found': 404,
  conflict: 409,
  deduplicated: 202,
  unavailable: 503,
  timeout: 503,
  canceled: 499,
  internal: 500,
};

test('admin endpoints: every kind maps to its HTTP status', () => {
  assert.deepEqual(Object.keys(EXPECTED).sort(), [...ERROR_KINDS].sort(), 'the expectations cover every kind');
  for (const kind of ERROR_KINDS) assert.equal(ADMIN_HTTP_STATUS[kind], EXPECTED[kind], kind);
  assert.deepEqual(Object.keys(ADMIN_HTTP_STATUS).sort(), [...ERROR_KINDS].sort(), 'no stray entries');
});
