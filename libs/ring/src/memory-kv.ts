// The in-process KV for single-process mode and unit tests: one Map, the same
// JSON and CAS semantics as Redis, watchers told on every change. It is never
// shared between processes, so a multi-process cluster needs Redis.

import { casJson, parseJson, type CasUpdate, type KvClient, type RawKv } from './kv.ts';

interface Entry {
  raw: string;
  /** ms since epoch, 0 = never */
  expiresAt: number;
}

export interface MemoryKvOptions {
  /** Clock for TTLs (tests pass a fake one). */
  now?: () => number;
}

export class MemoryKv implements KvClient, RawKv {
  readonly description = 'memory';
  private readonly entries = new Map<string, Entry>();
  private readonly watchers = new Map<string, Set<(raw: string | undefined) => void>>();
  private readonly now: () => number;
  /** Test hook: when set, every call fails with this error (a store that is "down"). */
  failWith: Error | undefined;

  constructor(opts: MemoryKvOptions = {}) {
    this.now = opts.now ?? Date.now;
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {
    this.watchers.clear();
  }

  async getRaw(key: string): Promise<string | undefined> {
    this.check();
    const e = this.entries.get(key);
    if (e && e.expiresAt > 0 && e.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e?.raw;
  }

  async compareAndSwapRaw(key: string, expected: string | undefined, value: string | undefined, ttlMs: number): Promise<boolean> {
    // getRaw and the swap run in one turn of the event loop: nothing can interleave.
    if ((await this.getRaw(key)) !== expected) return false;
    this.check();
    if (value === undefined) this.entries.delete(key);
    else this.entries.set(key, { raw: value, expiresAt: ttlMs > 0 ? this.now() + ttlMs : 0 });
    for (const w of this.watchers.get(key) ?? []) queueMicrotask(() => w(value));
    return true;
  }

  async get<T>(key: string): Promise<T | undefined> {
    return parseJson<T>(await this.getRaw(key));
  }

  cas<T>(key: string, update: (current: T | undefined) => CasUpdate<T>): Promise<T | undefined> {
    return casJson(this, key, update);
  }

  async delete(key: string): Promise<void> {
    const raw = await this.getRaw(key);
    if (raw !== undefined) await this.compareAndSwapRaw(key, raw, undefined, 0);
  }

  watch<T>(key: string, onChange: (value: T | undefined) => void, onError?: (err: Error) => void): () => void {
    let last: string | undefined | null = null;
    const notify = (raw: string | undefined) => {
      if (raw === last) return;
      last = raw;
      onChange(parseJson<T>(raw));
    };
    let set = this.watchers.get(key);
    if (!set) this.watchers.set(key, (set = new Set()));
    set.add(notify);
    this.getRaw(key).then(notify, (err: Error) => onError?.(err));
    return () => set.delete(notify);
  }

  private check(): void {
    if (this.failWith) throw this.failWith;
  }
}
