// Sends pre-encoded remote-write bodies the way Prometheus' queue manager does:
// one loop per shard, one request in flight per shard (so a series' samples
// arrive in order), paced by each request's due time, retrying 5xx/429 and
// network errors with exponential backoff. Never re-orders within a shard.

import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Protocol } from './encode.ts';
import type { RequestLog } from './latency.ts';

export interface PushTarget {
  /** Full URL of the remote-write endpoint. */
  url: string;
  headers?: Record<string, string>;
  protocol: Protocol;
}

export interface RetryPolicy {
  /** Attempts after the first before a request counts as failed. Default 10. */
  maxRetries: number;
  minBackoffMs: number;
  maxBackoffMs: number;
  /** Per-attempt timeout. */
  timeoutMs: number;
}

export const PROMETHEUS_RETRY: RetryPolicy = { maxRetries: 10, minBackoffMs: 30, maxBackoffMs: 5000, timeoutMs: 30_000 };

export interface QueuedRequest {
  body: Uint8Array;
  samples: number;
  /** performance.now() time at which it may be sent. */
  due: number;
}

/** One shard's FIFO; the producer appends windows, the shard loop drains it. */
export class ShardQueue {
  private items: QueuedRequest[] = [];
  private head = 0;
  private closed = false;
  private wake: (() => void) | undefined;

  push(r: QueuedRequest): void {
    this.items.push(r);
    this.signal();
  }

  close(): void {
    this.closed = true;
    this.signal();
  }

  /** Drops what was not sent; returns the samples dropped. */
  drain(): number {
    let n = 0;
    for (let i = this.head; i < this.items.length; i++) n += this.items[i].samples;
    this.items = [];
    this.head = 0;
    return n;
  }

  async next(): Promise<QueuedRequest | undefined> {
    for (;;) {
      if (this.head < this.items.length) {
        const r = this.items[this.head];
        this.items[this.head++] = undefined as unknown as QueuedRequest;
        if (this.head > 4096 && this.head * 2 > this.items.length) {
          this.items = this.items.slice(this.head);
          this.head = 0;
        }
        return r;
      }
      if (this.closed) return undefined;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private signal(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}

export interface ShardCounters {
  retries: number;
  /** Status code (or 'network') → attempts. */
  statuses: Map<string, number>;
  firstError: string | undefined;
  /** Largest delay between a request's due time and its send, ms. */
  maxBehindMs: number;
  sentSamples: number;
  /** performance.now() when the shard's last request was sent (0: none). */
  lastSendAt: number;
}

export function newCounters(): ShardCounters {
  return { retries: 0, statuses: new Map(), firstError: undefined, maxBehindMs: 0, sentSamples: 0, lastSendAt: 0 };
}

export class Pusher {
  private readonly agent: http.Agent;
  private readonly url: URL;
  private readonly headers: Record<string, string>;
  private stopAt = Number.POSITIVE_INFINITY;

  private readonly retry: RetryPolicy;

  constructor(target: PushTarget, shards: number, retry: RetryPolicy) {
    this.retry = retry;
    this.url = new URL(target.url);
    this.agent = new http.Agent({ keepAlive: true, maxSockets: shards, maxFreeSockets: shards });
    this.headers =
      target.protocol === 'v1'
        ? { 'content-type': 'application/x-protobuf', 'x-prometheus-remote-write-version': '0.1.0' }
        : { 'content-type': 'application/x-protobuf;proto=io.prometheus.write.v2.Request', 'x-prometheus-remote-write-version': '2.0.0' };
    this.headers['content-encoding'] = 'snappy';
    this.headers['user-agent'] = 'strata-bench-loadgen';
    Object.assign(this.headers, target.headers ?? {});
  }

  /** Requests not yet started when this performance.now() time passes are left unsent. */
  setDeadline(at: number): void {
    this.stopAt = at;
  }

  /** Drains one shard's queue in order; resolves when the queue is closed and empty (or the deadline passed). */
  async runShard(queue: ShardQueue, log: RequestLog, c: ShardCounters): Promise<number> {
    let unsent = 0;
    for (;;) {
      const r = await queue.next();
      if (!r) return unsent;
      const wait = r.due - performance.now();
      if (wait > 1) await sleep(wait);
      const now = performance.now();
      if (now > this.stopAt) {
        unsent += r.samples + queue.drain();
        continue;
      }
      c.maxBehindMs = Math.max(c.maxBehindMs, now - r.due);
      c.sentSamples += r.samples;
      c.lastSendAt = now;
      const ok = await this.sendWithRetries(r.body, c);
      const end = performance.now();
      log.record(Date.now(), end - now, r.samples, ok);
    }
  }

  private async sendWithRetries(body: Uint8Array, c: ShardCounters): Promise<boolean> {
    let backoff = this.retry.minBackoffMs;
    for (let attempt = 0; ; attempt++) {
      const { status, error } = await this.post(body);
      const key = status === 0 ? 'network' : String(status);
      c.statuses.set(key, (c.statuses.get(key) ?? 0) + 1);
      if (status >= 200 && status < 300) return true;
      c.firstError ??= `${key}: ${error.slice(0, 300)}`;
      const retriable = status === 0 || status === 429 || status >= 500;
      if (!retriable || attempt >= this.retry.maxRetries || performance.now() > this.stopAt) return false;
      c.retries++;
      await sleep(backoff);
      backoff = Math.min(this.retry.maxBackoffMs, backoff * 2);
    }
  }

  private post(body: Uint8Array): Promise<{ status: number; error: string }> {
    return new Promise((resolve) => {
      const req = http.request(
        {
          agent: this.agent,
          hostname: this.url.hostname,
          port: this.url.port,
          path: this.url.pathname + this.url.search,
          method: 'POST',
          headers: { ...this.headers, 'content-length': String(body.length) },
          timeout: this.retry.timeoutMs,
        },
        (res) => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            res.resume();
            res.on('end', () => resolve({ status, error: '' }));
            res.on('error', (e) => resolve({ status: 0, error: e.message }));
            return;
          }
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => resolve({ status, error: Buffer.concat(chunks).toString('utf8').trim() }));
          res.on('error', (e) => resolve({ status: 0, error: e.message }));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`timed out after ${this.retry.timeoutMs}ms`)));
      req.on('error', (e) => resolve({ status: 0, error: e.message }));
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
