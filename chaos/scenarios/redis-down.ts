// Redis dies (kill -9) and comes back empty. Today Redis backs only the querier's results cache,
// so every query must still answer exactly (a cache failure is a miss, never a wrong or failed
// answer); once the ring and HA tracker use Redis, ingest must carry on too.

import { LocalRedis } from '@strata/local-cluster';
import { features } from '../support/product-features.ts';
import { NotApplicableError, type Scenario } from './scenario.ts';

export const redisDown: Scenario = {
  name: 'redis-down',
  description: 'kill -9 Redis for --fault-seconds, restart it empty',
  availabilityTarget: 0.999,
  notApplicable() {
    const users = features.redisClients();
    if (users.length === 0) {
      return 'no Strata component uses Redis yet (no ioredis client in apps/ or libs/), so there is nothing a Redis outage could break';
    }
    if (features.resultsCacheRedisFlag().length === 0) {
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
    const redis = ctx.cluster.redis;
    if (redis === undefined) throw new NotApplicableError('the drill cluster started no Redis');
    const pid = redis.pid;
    await redis.kill('SIGKILL');
    ctx.event(`kill -9 redis-server ${redis.endpoint} (pid ${pid}); the querier's results cache loses its backend`);
    await ctx.sleep(ctx.faultSeconds * 1000);
    ctx.markHeal();
    await redis.restart();
    ctx.event(`redis-server restarted empty on ${redis.endpoint} (pid ${redis.pid})`);
  },
};
