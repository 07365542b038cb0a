// The config API (Mimir's) and the rules/alerts API (Prometheus') over a real
// bucket directory and a Ruler, through fastify's inject.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { labelsFromRecord } from '@strata/model';
import { MemoryQuerier } from '@strata/model/testing';
import { FilesystemBucket } from '@strata/objstore';
import { Engine } from '@strata/promql';
import { createLogger } from '@strata/service';
import { registerRulerConfigApi } from './config-api.ts';
import { registerRulesApi } from './prometheus-api.ts';
import { RuleStore } from './rule-store.ts';
import { Ruler } from './ruler.ts';

const dir = mkdtempSync(join(tmpdir(), 'ruler-api-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const GROUP = `name: g1
interval: 1h
rules:
  - record: job:x:sum
    expr: sum by(job)(x)
  - alert: XHigh
    expr: x > 5
    for: 1m
    labels: { severity: page }
    annotations: { summary: "{{ $labels.instance }} high" }
`;

async function setup() {
  const store = new RuleStore(new FilesystemBucket(dir));
  const mem = new MemoryQuerier();
  const engine = new Engine({ querier: mem });
  const ruler = new Ruler({
    store,
    querier: { query: (p) => engine.instantQuery({ tenant: p.tenant, query: p.expr, time: p.time }) },
    pusher: { push: async () => undefined },
    logger: createLogger('test', 'silent'),
    registry: new Registry(),
    evaluationIntervalMs: 60_000,
    pollIntervalMs: 3_600_000,
    resendDelayMs: 60_000,
    forOutageToleranceMs: 3_600_000,
    forGracePeriodMs: 600_000,
    externalURL: '',
  });
  const app = Fastify();
  const changed: Promise<void>[] = [];
  registerRulerConfigApi(app, { store, multitenancyEnabled: true, logger: createLogger('test', 'silent'), onChange: (t) => changed.push(ruler.sync(t)) });
  registerRulesApi(app, { groups: (t) => ruler.groups(t), multitenancyEnabled: true });
  await app.ready();
  return { app, ruler, mem, changed };
}

test('config API: upload, read back, validate, delete; per tenant', async () => {
  const { app, ruler, changed } = await setup();
  const h = { 'x-scope-orgid': 'team-a', 'content-type': 'application/yaml' };
  assert.equal((await app.inject({ method: 'GET', url: '/prometheus/config/v1/rules', headers: h })).statusCode, 404);
  assert.equal((await app.inject({ method: 'GET', url: '/prometheus/config/v1/rules' })).statusCode, 401);
  const post = await app.inject({ method: 'POST', url: '/prometheus/config/v1/rules/ns%2Fone', headers: h, payload: GROUP });
  assert.equal(post.statusCode, 202, post.body);
  await Promise.all(changed);
  const all = await app.inject({ method: 'GET', url: '/prometheus/config/v1/rules', headers: h });
  assert.equal(all.statusCode, 200);
  assert.match(all.headers['content-type'] as string, /yaml/);
  assert.match(all.body, /^ns\/one:\n {2}- name: g1\n {4}interval: 1h\n/);
  const one = await app.inject({ method: 'GET', url: '/prometheus/config/v1/rules/ns%2Fone/g1', headers: h });
  assert.match(one.body, /record: job:x:sum/);
  // Another tenant sees nothing.
  assert.equal((await app.inject({ method: 'GET', url: '/prometheus/config/v1/rules', headers: { 'x-scope-orgid': 'team-b' } })).statusCode, 404);
  const bad = await app.inject({
    method: 'POST',
    url: '/prometheus/config/v1/rules/ns',
    headers: h,
    payload: 'name: g\nrules:\n  - record: r\n    expr: sum(x\n',
  });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /could not parse expression/);
  const dup = await app.inject({
    method: 'POST',
    url: '/prometheus/config/v1/rules/ns',
    headers: h,
    payload: 'groups:\n  - name: a\n    rules: []\n  - name: a\n    rules: []\n',
  });
  assert.equal(dup.statusCode, 400);
  assert.match(dup.body, /groupname must be unique/);

  // The ruler loaded the group; the rules API shows it in Prometheus' shape.
  assert.equal(ruler.groups('team-a').length, 1);
  const rules = (await app.inject({ method: 'GET', url: '/prometheus/api/v1/rules', headers: h })).json<{
    status: string;
    data: { groups: Record<string, unknown>[] };
  }>();
  assert.equal(rules.status, 'success');
  const g = rules.data.groups[0];
  assert.equal(g.name, 'g1');
  assert.equal(g.file, 'ns/one');
  assert.equal(g.interval, 3600);
  assert.equal(g.lastEvaluation, '0001-01-01T00:00:00Z');
  const [rec, alert] = g.rules as Record<string, unknown>[];
  assert.deepEqual(rec, {
    name: 'job:x:sum',
    query: 'sum by (job) (x)',
    health: 'unknown',
    evaluationTime: 0,
    lastEvaluation: '0001-01-01T00:00:00Z',
    type: 'recording',
  });
  assert.deepEqual(Object.keys(alert), [
    'state',
    'name',
    'query',
    'duration',
    'keepFiringFor',
    'labels',
    'annotations',
    'alerts',
    'health',
    'evaluationTime',
    'lastEvaluation',
    'type',
  ]);
  assert.equal(alert.duration, 60);
  const filtered = (await app.inject({ method: 'GET', url: '/prometheus/api/v1/rules?type=alert', headers: h })).json<{
    data: { groups: { rules: unknown[] }[] };
  }>();
  assert.equal(filtered.data.groups[0].rules.length, 1);
  const none = (await app.inject({ method: 'GET', url: '/prometheus/api/v1/rules?rule_group[]=nope', headers: h })).json<{ data: { groups: unknown[] } }>();
  assert.deepEqual(none.data.groups, []);
  assert.equal((await app.inject({ method: 'GET', url: '/prometheus/api/v1/rules?type=x', headers: h })).statusCode, 400);
  assert.deepEqual((await app.inject({ method: 'GET', url: '/api/v1/alerts', headers: h })).json(), { status: 'success', data: { alerts: [] } });
  assert.deepEqual((await app.inject({ method: 'GET', url: '/api/v1/rules', headers: { 'x-scope-orgid': 'team-b' } })).json(), {
    status: 'success',
    data: { groups: [] },
  });

  const del = await app.inject({ method: 'DELETE', url: '/prometheus/config/v1/rules/ns%2Fone/g1', headers: h });
  assert.equal(del.statusCode, 202);
  await Promise.all(changed);
  assert.equal(ruler.groups('team-a').length, 0);
  assert.equal((await app.inject({ method: 'DELETE', url: '/prometheus/config/v1/rules/ns%2Fone', headers: h })).statusCode, 404);
  await ruler.stop();
});

test('/api/v1/alerts lists pending and firing alerts with Prometheus fields', async () => {
  const { app, ruler, mem, changed } = await setup();
  const h = { 'x-scope-orgid': 'team-c' };
  await app.inject({ method: 'POST', url: '/prometheus/config/v1/rules/ns', headers: h, payload: GROUP });
  await Promise.all(changed);
  const now = Date.now();
  mem.append('team-c', labelsFromRecord({ __name__: 'x', instance: 'h1', job: 'j' }), [now - 1000], [10]);
  const [{ group }] = ruler.groups('team-c');
  await group.evaluate(now);
  const body = (await app.inject({ method: 'GET', url: '/prometheus/api/v1/alerts', headers: h })).json<{ data: { alerts: Record<string, unknown>[] } }>();
  assert.equal(body.data.alerts.length, 1);
  const a = body.data.alerts[0];
  assert.deepEqual(a.labels, { alertname: 'XHigh', instance: 'h1', job: 'j', severity: 'page' });
  assert.deepEqual(a.annotations, { summary: 'h1 high' });
  assert.equal(a.state, 'pending');
  assert.equal(a.value, '1e+01');
  assert.equal(
    a.activeAt,
    new Date(now)
      .toISOString()
      .replace(/\.?0*Z$/, 'Z')
      .replace(/\.Z$/, 'Z'),
  );
  await ruler.stop();
});
