import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { boolFlag, duration, flagsToConfig, parseDuration, parseFlags } from './index.ts';

const shape = {
  'ingest-storage.kafka.address': z.string().default('127.0.0.1:9092'),
  'ingest-storage.kafka.write-timeout': duration('10s'),
  'auth.multitenancy-enabled': boolFlag(true),
  'server.http-listen-port': z.coerce.number().int().default(8080),
};

test('flags, env fallback and defaults', () => {
  const v = parseFlags(['-ingest-storage.kafka.address=k:1', '--server.http-listen-port', '9000'], {
    STRATA_AUTH_MULTITENANCY_ENABLED: 'false',
  });
  assert.deepEqual(flagsToConfig(shape, v), {
    'ingest-storage.kafka.address': 'k:1',
    'ingest-storage.kafka.write-timeout': 10_000,
    'auth.multitenancy-enabled': false,
    'server.http-listen-port': 9000,
  });
});

test('unknown and invalid flags are errors that name the flag', () => {
  assert.throws(() => flagsToConfig(shape, parseFlags(['-ingest-storage.kafka.adress=x'], {})), /unknown flag -ingest-storage.kafka.adress/);
  assert.throws(() => flagsToConfig(shape, parseFlags(['-ingest-storage.kafka.write-timeout=ten'], {})), /invalid flag -ingest-storage.kafka.write-timeout: invalid duration/);
});

test('durations', () => {
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('2'), 2000);
  assert.throws(() => parseDuration('5x'));
});
