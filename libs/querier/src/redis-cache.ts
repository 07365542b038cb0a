// The results cache's Redis backend (ioredis): one client, short timeouts, and
// failures that read as misses rather than failed queries.

import { Redis } from 'ioredis';
import type { CacheBackend } from './results-cache.ts';

export interface RedisCacheOptions {
  /** host:port */
  endpoint: string;
  timeoutMs?: number;
}

export class RedisCacheBackend implements CacheBackend {
  private readonly client: Redis;

  constructor(opts: RedisCacheOptions) {
    const [host, port] = splitHostPort(opts.endpoint);
    const timeout = opts.timeoutMs ?? 500;
    this.client = new Redis({
      host,
      port,
      lazyConnect: true,
      connectTimeout: timeout,
      commandTimeout: timeout,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: true,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    // Errors surface per command; the client reconnects by itself.
    this.client.on('error', () => undefined);
  }

  async start(): Promise<void> {
    await this.client.connect().catch(() => undefined);
  }

  // While Redis is unreachable the client reconnects in the background; a query
  // must not wait out a command timeout meanwhile, so it skips the cache at once.
  async get(key: string): Promise<string | null> {
    if (this.client.status !== 'ready') return null;
    return this.client.get(key);
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    if (this.client.status !== 'ready') return;
    await this.client.set(key, value, 'PX', ttlMs);
  }

  async stop(): Promise<void> {
    this.client.disconnect();
  }
}

function splitHostPort(endpoint: string): [string, number] {
  const i = endpoint.lastIndexOf(':');
  if (i <= 0) throw new Error(`invalid Redis endpoint "${endpoint}": expected host:port`);
  const port = Number(endpoint.slice(i + 1));
  if (!Number.isInteger(port) || port <= 0) throw new Error(`invalid Redis endpoint "${endpoint}": bad port`);
  return [endpoint.slice(0, i), port];
}
