// Ring and KV flags (Mimir's names where Mimir has the setting) and the KV
// built from them.

import { networkInterfaces } from 'node:os';
import { z } from 'zod';
import { duration } from '@strata/service';
import type { KvClient } from './kv.ts';
import { MemoryKv } from './memory-kv.ts';
import { RedisKv } from './redis-kv.ts';

/** The KV store every ring user (ingester, distributor, querier) and the HA tracker share. */
export const ringKvConfigShape = {
  'ring.store': z
    .enum(['memory', 'redis'])
    .default('memory')
    .describe('KV store of the partition ring and HA tracker; memory is private to the process, redis is shared.'),
  'ring.redis.endpoint': z.string().default('').describe('Redis host:port; required with -ring.store=redis.'),
  'ring.redis.timeout': duration('1s').describe('Redis connect and command timeout.'),
  'ring.redis.poll-interval': duration('1s').describe('How often ring readers (distributors, queriers) re-read the ring key.'),
};

/** What ring readers need besides the KV: when an owner counts as unhealthy. */
export const ringClientConfigShape = {
  ...ringKvConfigShape,
  'ingester.ring.heartbeat-timeout': duration('1m').describe('An ingester whose heartbeat is older than this counts as unhealthy.'),
};

export const ingesterRingConfigShape = {
  ...ringClientConfigShape,
  'ingester.ring.heartbeat-period': duration('15s').describe('How often an ingester heartbeats its ring entry.'),
  'ingester.ring.instance-addr': z
    .string()
    .default('')
    .describe('Host registered for queriers; empty: the gRPC listen address (its first external IPv4 if 0.0.0.0).'),
  'ingester.partition-ring.min-partition-owners-count': z.coerce
    .number()
    .int()
    .min(0)
    .default(1)
    .describe('A PENDING partition becomes ACTIVE once this many owners are registered...'),
  'ingester.partition-ring.min-partition-owners-duration': duration('10s').describe('...for this long.'),
  'ingester.partition-ring.delete-inactive-partition-after': duration('13h').describe(
    'INACTIVE partitions without owners are removed after this long; 0s keeps them.',
  ),
  'ingester.partition-ring.polling-interval': duration('1s').describe("How often an ingester reconciles its partition's state with the ring."),
};

export type RingKvConfig = z.infer<z.ZodObject<typeof ringKvConfigShape>>;
export type RingClientConfig = z.infer<z.ZodObject<typeof ringClientConfigShape>>;
export type IngesterRingConfig = z.infer<z.ZodObject<typeof ingesterRingConfigShape>>;

/** The KV the flags describe. A memory KV is private to this process. */
export function createKv(config: RingKvConfig): KvClient {
  if (config['ring.store'] === 'redis') {
    if (config['ring.redis.endpoint'] === '') throw new Error('-ring.store=redis needs -ring.redis.endpoint=<host:port>');
    return new RedisKv({
      endpoint: config['ring.redis.endpoint'],
      timeoutMs: config['ring.redis.timeout'],
      pollIntervalMs: config['ring.redis.poll-interval'],
    });
  }
  return new MemoryKv();
}

/** The host an ingester registers: the configured one, else the listen address, else (0.0.0.0) this host's first external IPv4. */
export function instanceHost(configured: string, listenAddress: string): string {
  if (configured !== '') return configured;
  if (listenAddress !== '0.0.0.0' && listenAddress !== '::' && listenAddress !== '') return listenAddress;
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}
