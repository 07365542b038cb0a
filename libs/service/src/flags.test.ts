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
  assert.throws(
    () => flagsToConfig(shape, parseFlags(['-ingest-storage.kafka.adress=x'], {})),
    /^StrataError: unknown flag -ingest-storage.kafka.adress; did you mean -ingest-storage.kafka.address\?/,
  );
  assert.throws(
    () => flagsToConfig(shape, parseFlags(['-ingest-storage.kafka.write-timeout=ten'], {})),
    /invalid value "ten" for -ingest-storage.kafka.write-timeout: invalid duration/,
  );
  assert.throws(
    () => flagsToConfig(shape, parseFlags([], { STRATA_SERVER_HTTP_LISTEN_PORT: 'x' })),
    /invalid value "x" for -server.http-listen-port \(from STRATA_SERVER_HTTP_LISTEN_PORT\)/,
  );
  assert.throws(
    () => flagsToConfig(shape, { args: {}, env: {}, file: { 'auth.multitenancy-enabled': 'maybe' } }),
    /-auth.multitenancy-enabled \(from -config.file\)/,
  );
});

test('the command line beats the environment, which beats the config file', () => {
  const file = { 'ingest-storage.kafka.address': 'file:1', 'server.http-listen-port': '1', 'auth.multitenancy-enabled': 'false' };
  const c = flagsToConfig(shape, { args: { 'ingest-storage.kafka.address': 'arg:1' }, env: { server_http_listen_port: '2' }, file });
  assert.equal(c['ingest-storage.kafka.address'], 'arg:1');
  assert.equal(c['server.http-listen-port'], 2);
  assert.equal(c['auth.multitenancy-enabled'], false);
});

test('durations', () => {
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('2'), 2000);
  assert.throws(() => parseDuration('5x'));
});
