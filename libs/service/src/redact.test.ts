import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REDACTED, redactConfig } from './redact.ts';

test('the S3 secret key and token values are redacted, the tokens file path and plain flags are not', () => {
  const out = redactConfig({
    'blocks-storage.s3.secret-access-key': 'hunter2',
    'blocks-storage.s3.access-key-id': 'AKIA',
    'auth.tokens-file': '/etc/strata/tokens.yaml',
    'auth.tokens-reload-period': 10_000,
    'tracing.token': 'abc',
    'ring.redis.endpoint': 'redis://user:pw@redis:6379',
    'blocks-storage.s3.bucket-name': 'b',
    'compactor.block-ranges': [1, 2],
    'empty.secret': '',
  });
  assert.equal(out['blocks-storage.s3.secret-access-key'], REDACTED);
  assert.equal(out['tracing.token'], REDACTED);
  assert.equal(out['blocks-storage.s3.access-key-id'], 'AKIA');
  assert.equal(out['auth.tokens-file'], '/etc/strata/tokens.yaml');
  assert.equal(out['auth.tokens-reload-period'], 10_000);
  assert.equal(out['ring.redis.endpoint'], `redis://${REDACTED}@redis:6379`);
  assert.equal(out['blocks-storage.s3.bucket-name'], 'b');
  assert.equal(out['compactor.block-ranges'], '[1,2]');
  assert.equal(out['empty.secret'], '', 'an unset secret shows as unset');
  assert.ok(!JSON.stringify(out).includes('hunter2'));
});
