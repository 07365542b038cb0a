// HA tracker flags (Mimir's names). The per-tenant switches and label names
// (accept_ha_samples, ha_cluster_label, ha_replica_label) are limits, read per
// request from @strata/limits' Overrides.

import { z } from 'zod';
import { boolFlag, duration } from '@strata/service';
import { RedisKv, type KvClient, type RingKvConfig } from '@strata/ring';

export const haTrackerConfigShape = {
  'distributor.ha-tracker.enable': boolFlag(false)
    .describe('Run the HA tracker: keep one replica of each HA Prometheus pair (tenants with accept_ha_samples).')
    .meta({ yaml: 'distributor.ha_tracker.enable_ha_tracker' }),
  'distributor.ha-tracker.update-timeout': duration('15s')
    .describe("How often the elected replica's timestamp is written to the KV store.")
    .meta({ yaml: 'distributor.ha_tracker.ha_tracker_update_timeout' }),
  'distributor.ha-tracker.update-timeout-jitter-max': duration('5s')
    .describe('Largest jitter added to the update timeout, spreading the writes.')
    .meta({ yaml: 'distributor.ha_tracker.ha_tracker_update_timeout_jitter_max' }),
  'distributor.ha-tracker.failover-timeout': duration('30s')
    .describe('Another replica takes over after the elected one was silent this long.')
    .meta({ yaml: 'distributor.ha_tracker.ha_tracker_failover_timeout' }),
  'distributor.ha-tracker.redis.endpoint': z
    .string()
    .default('')
    .describe("A Redis of the HA tracker's own (host:port); empty: the ring's KV store (-ring.store)."),
};

export type HaTrackerConfig = z.infer<z.ZodObject<typeof haTrackerConfigShape>>;

/** The KV the HA tracker uses: its own Redis if configured, else the ring's (which may be the in-process one). */
export function haTrackerKv(config: HaTrackerConfig & Pick<RingKvConfig, 'ring.redis.timeout'>, ringKv: KvClient): KvClient {
  const endpoint = config['distributor.ha-tracker.redis.endpoint'];
  return endpoint === '' ? ringKv : new RedisKv({ endpoint, timeoutMs: config['ring.redis.timeout'] });
}
