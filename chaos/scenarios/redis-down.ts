// Redis dies (kill -9) and comes back empty: the ring KV (partition ring, ingester heartbeats, HA
// tracker) and the querier's results cache. Ingest must carry on from the ring each process last
// saw, queries must still answer exactly (a cache failure is a miss), and the ring must rebuild.

import { LocalRedis } from '@strata/local-cluster';
import { features } from '../support/product-features.ts';
import { NotApplicableError, type Scenario } from './scenario.ts';

export const redisDown: Scenario = {
  name: 'redis-down',
  description: 'kill -9 every Redis (ring KV, results cache) for --fault-seconds, restart them empty',
  availabilityTarget: 0.999,
  notApplicable() {
    const users = features.redisClients();
    if (users.length === 0) {
      return 'no Strata component uses Redis yet (no ioredis client in apps/ or libs/), so there is nothing a Redis outage could break';
    }
    if (features.resultsCacheRedisFlag().length === 0 && features.redisRing().length === 0) {
      return `components use Redis (${users.join(', ')}) but through no flag the drill knows how to wire; teach chaos/support/drill-cluster.ts`;
    }
    return undefined;
  },
  async standalone(ctx) {
    // The drill's half of the scenario is real even when nothing uses Redis: a Debian redis-server, killed and restarted by pid.
    const redis = await LocalRedis.start(`${ctx.dataDir}/redis`);
    try {
      ctx.event(`redis-server up on ${redis.endpoint} (pid ${redis.pid}), answers PING`);
      const pid = redis.pid;
      await redis.kill('SIGKILL');
      ctx.event(`kill -9 redis-server (pid ${pid}); PING answered: ${await redis.ping()}`);
      await redis.restart();
      ctx.event(`redis-server restarted (pid ${redis.pid}), answers PING: ${await redis.ping()}`);
    } finally {
      await redis.kill('SIGTERM');
    }
  },
  async run(ctx) {
    const servers = ctx.cluster.redisServers();
    if (servers.length === 0) throw new NotApplicableError('the drill cluster runs no Redis: no component it starts is wired to one');
    for (const { role, server } of servers) {
      const pid = server.pid;
      await server.kill('SIGKILL');
      ctx.event(`kill -9 redis-server ${server.endpoint} (pid ${pid}): the ${role}`);
    }
    await ctx.sleep(ctx.faultSeconds * 1000);
    ctx.markHeal();
    for (const { role, server } of servers) {
      await server.restart();
      ctx.event(`redis-server ${server.endpoint} restarted empty (pid ${server.pid}): the ${role}`);
    }
  },
};
