import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { test } from 'node:test';
import Fastify from 'fastify';
import { readManifest } from './manifest.ts';
import { registerUi } from './ui.ts';

function app(query?: { apiPrefix: string; multitenancy: boolean }) {
  const a = Fastify();
  const endpoints = ['push $BASE/api/v1/push'];
  registerUi(a, {
    targets: ['querier'],
    modules: ['server', 'ui', 'querier'],
    endpoints: () => endpoints,
    links: () => [{ label: 'Metrics', href: '/metrics' }],
    query: () => query,
    pages: () => [
      { id: 'ok', title: 'OK', module: 'querier', sections: () => [{ title: 'S', fields: { a: 1 }, rows: [{ x: 'y' }] }] },
      {
        id: 'broken',
        title: 'Broken',
        module: 'querier',
        sections: () => {
          throw new Error('kaput');
        },
      },
    ],
  });
  return a;
}

test('the SPA paths answer index.html; hashed assets are immutable and gzip when asked', async () => {
  const a = app();
  for (const url of ['/', '/ui', '/ui/query', '/ui/status/ok']) {
    const res = await a.inject({ url });
    assert.equal(res.statusCode, 200, url);
    assert.match(res.headers['content-type'] as string, /text\/html/);
    assert.match(res.body, /<div|<main/);
  }
  const js = Object.keys(readManifest().files).find((f) => f.endsWith('.js'))!;
  const plain = await a.inject({ url: `/ui/${js}` });
  assert.equal(plain.statusCode, 200);
  assert.match(plain.headers['cache-control'] as string, /immutable/);
  assert.match(plain.headers['content-type'] as string, /javascript/);
  const gz = await a.inject({ url: `/ui/${js}`, headers: { 'accept-encoding': 'gzip, br' } });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.deepEqual(gunzipSync(gz.rawPayload), plain.rawPayload);
  assert.equal((await a.inject({ url: '/ui/assets/nope.js' })).statusCode, 404);
});

test('/ui/api/info says what runs here; the query page only with a querier', async () => {
  const without = (await app().inject({ url: '/ui/api/info' })).json<Record<string, unknown>>();
  assert.deepEqual(without.targets, ['querier']);
  assert.deepEqual(without.pages, [
    { id: 'ok', title: 'OK', module: 'querier' },
    { id: 'broken', title: 'Broken', module: 'querier' },
  ]);
  assert.equal(without.query, undefined);
  const withQuery = (await app({ apiPrefix: '/prometheus/api/v1', multitenancy: true }).inject({ url: '/ui/api/info' })).json<Record<string, unknown>>();
  assert.deepEqual(withQuery.query, { apiPrefix: '/prometheus/api/v1', multitenancy: true });
});

test('a status page answers its sections; an unknown one 404s, a failing one 500s with the reason', async () => {
  const a = app();
  const ok = await a.inject({ url: '/ui/api/status/ok' });
  assert.deepEqual(ok.json(), { id: 'ok', title: 'OK', module: 'querier', sections: [{ title: 'S', fields: { a: 1 }, rows: [{ x: 'y' }] }] });
  assert.equal((await a.inject({ url: '/ui/api/status/none' })).statusCode, 404);
  const broken = await a.inject({ url: '/ui/api/status/broken' });
  assert.equal(broken.statusCode, 500);
  assert.match(broken.json<{ error: string }>().error, /kaput/);
});
