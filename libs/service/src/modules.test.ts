import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveModules } from './modules.ts';

const specs = {
  server: { internal: true },
  bucket: { internal: true },
  ingester: { deps: ['server', 'bucket'] },
  querier: { deps: ['server', 'bucket'], after: ['ingester'] },
  distributor: { deps: ['server'] },
  all: { deps: ['distributor', 'querier', 'ingester'] },
};

test('a target comes after its dependencies, and after the optional ones it runs with', () => {
  assert.deepEqual(resolveModules(specs, ['querier']), ['server', 'bucket', 'querier']);
  assert.deepEqual(resolveModules(specs, ['querier', 'ingester']), ['server', 'bucket', 'ingester', 'querier']);
  const all = resolveModules(specs, ['all']);
  assert.deepEqual(new Set(all), new Set(['server', 'bucket', 'ingester', 'querier', 'distributor', 'all']));
  assert.ok(all.indexOf('ingester') < all.indexOf('querier'));
  assert.equal(all.at(-1), 'all');
});

test('an unknown or internal target is refused, naming the known ones', () => {
  assert.throws(() => resolveModules(specs, ['querer']), { message: 'unknown -target "querer"; known targets: ingester, querier, distributor, all' });
  assert.throws(() => resolveModules(specs, ['server']), /unknown -target "server"/);
});
