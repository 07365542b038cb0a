import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { expandEnvVars, flagYamlPath, parseConfigYaml, serverConfigShape } from './index.ts';

const yamlPaths = {
  'server.http-listen-port': 'server.http_listen_port',
  'distributor.ingestion-rate-limit': 'limits.ingestion_rate',
  'blocks-storage.tsdb.block-ranges-period': 'blocks_storage.tsdb.block_ranges_period',
  'auth.multitenancy-enabled': 'multitenancy_enabled',
};

test("Mimir's YAML layout becomes flag values; lists join with commas", () => {
  const text =
    'server:\n  http_listen_port: 9009\nlimits:\n  ingestion_rate: 5e4\nblocks_storage:\n  tsdb:\n    block_ranges_period: [2h]\nmultitenancy_enabled: false\n';
  assert.deepEqual(parseConfigYaml(text, 'c.yaml', { yamlPaths, expandEnv: false }), {
    'server.http-listen-port': '9009',
    'distributor.ingestion-rate-limit': '50000',
    'blocks-storage.tsdb.block-ranges-period': '2h',
    'auth.multitenancy-enabled': 'false',
  });
  assert.deepEqual(parseConfigYaml('', 'c.yaml', { yamlPaths, expandEnv: false }), {});
  assert.deepEqual(parseConfigYaml('server:\n', 'c.yaml', { yamlPaths, expandEnv: false }), {});
});

test('an unknown key, a section given a value and a value given a section are one-line errors naming the key', () => {
  const parse = (text: string) => () => parseConfigYaml(text, 'c.yaml', { yamlPaths, expandEnv: false });
  assert.throws(
    parse('limits:\n  ingestion_rat: 1\n'),
    /^StrataError: -config.file=c.yaml: unknown key "limits.ingestion_rat"; did you mean limits.ingestion_rate\?$/,
  );
  assert.throws(parse('nonsense: 1\n'), /unknown key "nonsense"/);
  assert.throws(parse('server: 1\n'), /key "server" is a section/);
  assert.throws(parse('server:\n  http_listen_port: { a: 1 }\n'), /key "server.http_listen_port" takes a value/);
  assert.throws(parse('server: [\n'), /^StrataError: -config.file=c.yaml: not valid YAML: [^\n]*$/);
  assert.throws(parse('- a\n'), /expected a mapping at the top/);
});

test('-config.expand-env: ${VAR} and ${VAR:default}', () => {
  const env = { PORT: '9100', EMPTY: '' };
  assert.equal(expandEnvVars('a ${PORT} b ${MISSING:7} c ${MISSING} d ${EMPTY:x} e $PORT', env), 'a 9100 b 7 c  d x e $PORT');
  const text = 'server:\n  http_listen_port: ${PORT:8080}\nlimits:\n  ingestion_rate: ${RATE:123}\n';
  assert.deepEqual(parseConfigYaml(text, 'c.yaml', { yamlPaths, expandEnv: true, env }), {
    'server.http-listen-port': '9100',
    'distributor.ingestion-rate-limit': '123',
  });
  // Without the flag the text is taken literally.
  assert.deepEqual(parseConfigYaml(text, 'c.yaml', { yamlPaths, expandEnv: false, env })['server.http-listen-port'], '${PORT:8080}');
});

test("a flag's YAML path: the one declared beside it where Mimir's differs, else its parts with '-' → '_'", () => {
  assert.equal(flagYamlPath('server.http-listen-port', serverConfigShape['server.http-listen-port']), 'server.http_listen_port');
  const declared = z.coerce.number().default(1).describe('Per-tenant samples/s.').meta({ yaml: 'limits.ingestion_rate' });
  assert.equal(flagYamlPath('distributor.ingestion-rate-limit', declared), 'limits.ingestion_rate');
  assert.equal(declared.description, 'Per-tenant samples/s.');
});
