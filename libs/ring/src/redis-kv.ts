// The Redis KV (ioredis): compare-and-swap is one Lua script, so it is atomic
// on the server and needs no WATCH connection per writer; watching is polling
// (cheap GETs), which is plenty for a ring that changes every few seconds.
// Every failure to reach Redis surfaces as KvUnavailableError, never as an
// empty value, so callers can tell "no data" from "no answer".

import { Redis } from 'ioredis';
import { casJson, parseJson, type CasUpdate, type KvClient, type RawKv } from './kv.ts';
import { KvUnavailableError } from './errors.ts';

// KEYS[1]; ARGV: expected-present ('1'|'0'), expected, new-present ('1'|'0'), new, ttl ms.
const CAS_SCRIPT = `
local cur = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if cur ~= ARGV[2] then return 0 end
else
  if cur then return 0 end
end
if ARGV[3] == '0' then
  redis.call('DEL', KEYS[1])
elseif tonumber(ARGV[5]) > 0 then
  redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
else
  redis.call('SET', KEYS[1], ARGV[4])
end
return 1
`;

export interface RedisKvOptions {
  /** host:port */
  endpoint: string;
  /** Per-command and connect timeout. */
  timeoutMs?: number;
  /** How often watch() polls. */
  pollIntervalMs?: number;
}

export class RedisKv implements KvClient, RawKv {
  readonly description: string;
  private readonly client: Redis;
  private readonly pollIntervalMs: number;
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(opts: RedisKvOptions) {
    const [host, port] = splitHostPort(opts.endpoint);
    const timeout = opts.timeoutMs ?? 1000;
    this.description = `redis ${opts.endpoint}`;
    this.pollIntervalMs = opts.pollIntervalMs ?? 1000;
    this.client = new Redis({
      host,
      port,
      lazyConnect: true,
      connectTimeout: timeout,
      commandTimeout: timeout,
      // Fail fast while disconnected: a caller that cannot reach Redis must know now (5xx), not after a queue drains.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (times) => Math.min(100 * times, 1000),
    });
    // Failures surface per command as KvUnavailableError; ioredis reconnects by itself.
    this.client.on('error', () => undefined);
  }

  /** Connects; resolves even when Redis is down (commands then fail until it is back). */
  async start(): Promise<void> {
    await this.client.connect().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.client.disconnect();
  }

  async getRaw(key: string): Promise<string | undefined> {
    const v = await this.call(() => this.client.get(key));
    return v ?? undefined;
  }

  async compareAndSwapRaw(key: string, expected: string | undefined, value: string | undefined, ttlMs: number): Promise<boolean> {
    const args = [expected === undefined ? '0' : '1', expected ?? '', value === undefined ? '0' : '1', value ?? '', String(Math.max(0, Math.round(ttlMs)))];
    const r = await this.call(() => this.client.eval(CAS_SCRIPT, 1, key, ...args));
    return r === 1;
  }

  async get<T>(key: string): Promise<T | undefined> {
    return parseJson<T>(await this.getRaw(key));
  }

  cas<T>(key: string, update: (current: T | undefined) => CasUpdate<T>): Promise<T | undefined> {
    return casJson(this, key, update);
  }

  async delete(key: string): Promise<void> {
    await this.call(() => this.client.del(key));
  }

  watch<T>(key: string, onChange: (value: T | undefined) => void, onError?: (err: Error) => void): () => void {
    let last: string | undefined | null = null;
    let timer: NodeJS.Timeout | undefined;
    let active = true;
    const poll = async () => {
      try {
        const raw = await this.getRaw(key);
        if (active && raw !== last) {
          last = raw;
          onChange(parseJson<T>(raw));
        }
      } catch (err) {
        // After a failed read the next good one is reported even if unchanged: the watcher is stale until then.
        last = null;
        if (active) onError?.(err as Error);
      }
      if (active && !this.stopped) {
        const t: NodeJS.Timeout = setTimeout(() => {
          this.timers.delete(t);
          void poll();
        }, this.pollIntervalMs);
        this.timers.add((timer = t));
      }
    };
    void poll();
    return () => {
      active = false;
      if (timer) {
        clearTimeout(timer);
        this.timers.delete(timer);
      }
    };
  }

  private async call<R>(fn: () => Promise<R>): Promise<R> {
    if (this.stopped) throw new KvUnavailableError(`${this.description}: the client is stopped`);
    try {
      return await fn();
    } catch (err) {
      throw new KvUnavailableError(`${this.description} did not answer: ${(err as Error).message}`);
    }
  }
}

export function splitHostPort(endpoint: string): [string, number] {
  const i = endpoint.lastIndexOf(':');
  if (i <= 0) throw new Error(`invalid Redis endpoint "${endpoint}": expected host:port`);
  const port = Number(endpoint.slice(i + 1));
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`invalid Redis endpoint "${endpoint}": bad port`);
  return [endpoint.slice(0, i), port];
}
