// The KV seam the ring and the HA tracker stand on (dskit's kv.Client, reduced):
// get, compare-and-swap, delete and watch one key, values as JSON. A backend
// only has to read a raw value and swap it if nobody changed it meanwhile; the
// CAS retry loop lives here so both backends behave the same under contention.

import { KvConflictError, KvUnavailableError } from './errors.ts';

/** What a CAS update returns: a new value (optionally expiring), a deletion, or undefined for no change. */
export type CasUpdate<T> = { value: T; ttlMs?: number } | { delete: true } | undefined;

export interface KvClient {
  /** The value at key, undefined if absent. Throws KvUnavailableError when the store cannot answer. */
  get<T>(key: string): Promise<T | undefined>;
  /**
   * Reads key, hands the value to `update` and writes what it returns only if
   * the key still holds what was read; retries from the read on conflict.
   * `update` may be called several times and may throw to abort. Resolves
   * with the value the key holds afterwards.
   */
  cas<T>(key: string, update: (current: T | undefined) => CasUpdate<T>): Promise<T | undefined>;
  delete(key: string): Promise<void>;
  /**
   * Calls onChange with the value whenever it changes (and once with the
   * current value), and onError when the store cannot be read. Returns a
   * function that stops watching.
   */
  watch<T>(key: string, onChange: (value: T | undefined) => void, onError?: (err: Error) => void): () => void;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** "redis 127.0.0.1:6379" or "memory", for logs and status pages. */
  readonly description: string;
}

/** The raw operations a backend provides. `expected` undefined means "only if absent". */
export interface RawKv {
  getRaw(key: string): Promise<string | undefined>;
  /** Writes (or deletes, value undefined) only if the key holds `expected`; false on conflict. */
  compareAndSwapRaw(key: string, expected: string | undefined, value: string | undefined, ttlMs: number): Promise<boolean>;
}

const MAX_CAS_ATTEMPTS = 16;

/** The CAS loop over raw operations, shared by both backends. */
export async function casJson<T>(kv: RawKv, key: string, update: (current: T | undefined) => CasUpdate<T>): Promise<T | undefined> {
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    const raw = await kv.getRaw(key);
    const current = raw === undefined ? undefined : (JSON.parse(raw) as T);
    const next = update(current);
    if (next === undefined) return current;
    const value = 'delete' in next ? undefined : JSON.stringify(next.value);
    if (value === raw) return current;
    const ttlMs = 'delete' in next ? 0 : (next.ttlMs ?? 0);
    if (await kv.compareAndSwapRaw(key, raw, value, ttlMs)) return 'delete' in next ? undefined : (JSON.parse(value!) as T);
    // Someone else wrote in between: back off a little (jittered) and start again from a fresh read.
    await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 ** attempt)));
  }
  throw new KvConflictError(`gave up on key ${key} after ${MAX_CAS_ATTEMPTS} conflicting compare-and-swap attempts`);
}

export function parseJson<T>(raw: string | undefined): T | undefined {
  return raw === undefined ? undefined : (JSON.parse(raw) as T);
}
