import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { registerUserStatsApi, type UserStats } from './user-stats.ts';

const stats = (numSeries: number, rate: number): UserStats => ({ numSeries, ingestionRate: rate, apiIngestionRate: rate, ruleIngestionRate: 0 });

test("user_stats sums the partitions for the tenant in the header, as Mimir's bare JSON", async () => {
  const app = Fastify();
  const asked: string[] = [];
  registerUserStatsApi(app, {
    multitenancyEnabled: true,
    sources: () => [{ userStats: (t) => (asked.push(t), stats(10, 1.5)) }, { userStats: async (t) => (asked.push(t), stats(5, 0.5)) }],
  });
  for (const url of ['/api/v1/user_stats', '/prometheus/api/v1/user_stats']) {
    const res = await app.inject({ url, headers: { 'x-scope-orgid': 'team-a' } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { numSeries: 15, ingestionRate: 2, apiIngestionRate: 2, ruleIngestionRate: 0 });
  }
  assert.deepEqual(asked, ['team-a', 'team-a', 'team-a', 'team-a']);
  const missing = await app.inject({ url: '/api/v1/user_stats' });
  assert.equal(missing.statusCode, 401, 'no tenant with multi-tenancy on');
});

test('user_stats without an ingester to ask is unavailable (503), saying why', async () => {
  const app = Fastify();
  registerUserStatsApi(app, { multitenancyEnabled: false, sources: () => [] });
  const res = await app.inject({ url: '/api/v1/user_stats' });
  assert.equal(res.statusCode, 503);
  assert.match(res.json<{ error: string }>().error, /no ingester in this process/);
});
