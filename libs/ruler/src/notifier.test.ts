import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { createLogger } from '@strata/service';
import { AlertmanagerNotifier } from './notifier.ts';

async function alertmanager(): Promise<{ url: string; got: { tenant: string; alertname: string }[]; server: Server }> {
  const got: { tenant: string; alertname: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      assert.equal(req.url, '/api/v2/alerts');
      for (const a of JSON.parse(body) as { labels: Record<string, string> }[])
        got.push({ tenant: String(req.headers['x-scope-orgid']), alertname: a.labels.alertname });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got, server };
}

test("a tenant's own Alertmanager URLs (ruler_alertmanager_url override) gets its alerts instead of -ruler.alertmanager-url; other tenants keep the flag's", async () => {
  const [global, own] = [await alertmanager(), await alertmanager()];
  // What apps/ruler passes: the tenant's ruler_alertmanager_url from the runtime overrides, split on commas.
  const perTenant: Record<string, string> = { 'team-a': ` ${own.url} ` };
  const split = (s: string) =>
    s
      .split(',')
      .map((u) => u.trim())
      .filter((u) => u !== '');
  const notifier = new AlertmanagerNotifier({
    urls: [global.url],
    urlsFor: (tenant) => {
      const u = perTenant[tenant] ?? '';
      return u !== '' ? split(u) : undefined;
    },
    timeoutMs: 5000,
    queueCapacity: 100,
    logger: createLogger('notifier-test', 'silent'),
    registry: new Registry(),
  });
  const alert = (name: string) => ({ labels: { alertname: name }, annotations: {}, startsAt: 0, endsAt: 1, generatorURL: '' });
  notifier.send('team-a', [alert('A1')]);
  notifier.send('team-b', [alert('B1')]);
  await notifier.flush();
  assert.deepEqual(own.got, [{ tenant: 'team-a', alertname: 'A1' }]);
  assert.deepEqual(global.got, [{ tenant: 'team-b', alertname: 'B1' }]);
  for (const s of [global.server, own.server]) s.close();
});
