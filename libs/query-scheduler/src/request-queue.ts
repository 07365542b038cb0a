// The scheduler's queue (Mimir's RequestQueue): one FIFO per tenant, served round-robin, so
// one tenant's backlog delays another tenant's next query by at most one slot; a tenant may
// have at most `maxOutstandingPerTenant` queries waiting (over it: 429); a tenant's queries go
// only to its shuffle shard of the connected queriers when it has a max-queriers limit.
// Queriers pull: next() waits until there is work this querier may take.

import { StrataError } from '@strata/errors';
import { stringHash } from '@strata/model';

export interface RequestQueueOptions {
  /** Queries a tenant may have waiting (-query-scheduler.max-outstanding-requests-per-tenant); over it 429. */
  maxOutstandingPerTenant: number;
  now?: () => number;
}

export interface Dequeued<T> {
  tenant: string;
  item: T;
  /** How long the item waited in the queue, ms. */
  waitedMs: number;
}

interface Queued<T> {
  item: T;
  enqueuedAt: number;
}

interface TenantQueue<T> {
  items: Queued<T>[];
  /** The queriers this tenant may use: 0 for all (-query-frontend.max-queriers-per-tenant). */
  maxQueriers: number;
  /** The shard for `maxQueriers` over the querier set of `shardEpoch`. */
  shard: ReadonlySet<string> | undefined;
  shardEpoch: number;
}

interface Waiter<T> {
  querierId: string;
  resolve(d: Dequeued<T>): void;
  reject(err: Error): void;
}

export function tooManyOutstandingRequests(tenant: string, limit: number): StrataError {
  return new StrataError(
    'too-many-outstanding-requests',
    'limit',
    `too many outstanding requests for tenant ${tenant} (limit: ${limit}) (err-strata-too-many-outstanding-requests); ` +
      'wait for its queries to finish, or raise -query-scheduler.max-outstanding-requests-per-tenant',
  );
}

export function schedulerStopped(): StrataError {
  return new StrataError('scheduler-stopping', 'unavailable', 'the query-scheduler is shutting down; retry on another one');
}

export class RequestQueue<T> {
  private readonly opts: RequestQueueOptions;
  private readonly now: () => number;
  private readonly tenants = new Map<string, TenantQueue<T>>();
  /** Tenants with queued items, in round-robin order; `cursor` is where the next search starts. */
  private readonly rotation: string[] = [];
  private cursor = 0;
  /** Connected queriers: id -> worker connections. */
  private readonly queriers = new Map<string, number>();
  private querierEpoch = 0;
  private readonly waiters: Waiter<T>[] = [];
  private stopped = false;

  constructor(opts: RequestQueueOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
  }

  /** Queues `item` for `tenant`; throws a 429 StrataError when the tenant already has its limit waiting. */
  enqueue(tenant: string, item: T, maxQueriers = 0): void {
    if (this.stopped) throw schedulerStopped();
    const q = this.tenantQueue(tenant);
    const limit = this.opts.maxOutstandingPerTenant;
    if (limit > 0 && q.items.length >= limit) throw tooManyOutstandingRequests(tenant, limit);
    if (q.maxQueriers !== maxQueriers) {
      q.maxQueriers = maxQueriers;
      q.shard = undefined;
    }
    q.items.push({ item, enqueuedAt: this.now() });
    if (q.items.length === 1) this.rotation.push(tenant);
    this.serveWaiters();
  }

  /** Removes a queued item (its frontend gave up); false when a querier already took it. */
  cancel(tenant: string, matches: (item: T) => boolean): boolean {
    const q = this.tenants.get(tenant);
    const i = q?.items.findIndex((x) => matches(x.item)) ?? -1;
    if (q === undefined || i < 0) return false;
    q.items.splice(i, 1);
    if (q.items.length === 0) this.leaveRotation(tenant);
    return true;
  }

  /** A querier worker connected; a querier with N workers registers N times. */
  registerQuerier(id: string): void {
    this.queriers.set(id, (this.queriers.get(id) ?? 0) + 1);
    if (this.queriers.get(id) === 1) this.querierEpoch++;
  }

  unregisterQuerier(id: string): void {
    const n = (this.queriers.get(id) ?? 0) - 1;
    if (n > 0) {
      this.queriers.set(id, n);
      return;
    }
    this.queriers.delete(id);
    this.querierEpoch++;
    // Tenants sharded onto the querier that left now get another one: a waiting querier may now qualify.
    this.serveWaiters();
  }

  /** The next item `querierId` may take, waiting for one; rejects when `signal` aborts or the queue stops. */
  next(querierId: string, signal?: AbortSignal): Promise<Dequeued<T>> {
    if (this.stopped) return Promise.reject(schedulerStopped());
    const now = this.take(querierId);
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const waiter: Waiter<T> = { querierId, resolve, reject };
      this.waiters.push(waiter);
      signal?.addEventListener(
        'abort',
        () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(signal.reason instanceof Error ? signal.reason : new Error('the querier stopped waiting'));
        },
        { once: true },
      );
    });
  }

  /** Refuses new work and fails every waiting querier; queued items are returned for their senders to be told. */
  stop(): Dequeued<T>[] {
    this.stopped = true;
    for (const w of this.waiters.splice(0)) w.reject(schedulerStopped());
    const left: Dequeued<T>[] = [];
    for (const [tenant, q] of this.tenants) for (const x of q.items) left.push({ tenant, item: x.item, waitedMs: this.now() - x.enqueuedAt });
    this.tenants.clear();
    this.rotation.length = 0;
    return left;
  }

  /** Queued items per tenant (tenants with none are absent). */
  lengths(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [tenant, q] of this.tenants) if (q.items.length > 0) out.set(tenant, q.items.length);
    return out;
  }

  /** Connected queriers and their worker connections. */
  connectedQueriers(): ReadonlyMap<string, number> {
    return this.queriers;
  }

  /** Workers waiting for a query. */
  waitingWorkers(): number {
    return this.waiters.length;
  }

  /** The shuffle shard of `tenant`'s queriers: undefined when it may use every querier. */
  shardOf(tenant: string): ReadonlySet<string> | undefined {
    const q = this.tenants.get(tenant);
    return q === undefined ? undefined : this.shard(tenant, q);
  }

  private tenantQueue(tenant: string): TenantQueue<T> {
    let q = this.tenants.get(tenant);
    if (q === undefined) {
      q = { items: [], maxQueriers: 0, shard: undefined, shardEpoch: -1 };
      this.tenants.set(tenant, q);
    }
    return q;
  }

  /** Hands queued items to waiting queriers, oldest waiter first, while some waiter can take one. */
  private serveWaiters(): void {
    for (let i = 0; i < this.waiters.length && this.rotation.length > 0;) {
      const d = this.take(this.waiters[i].querierId);
      if (d === undefined) {
        i++;
        continue;
      }
      const [w] = this.waiters.splice(i, 1);
      w.resolve(d);
    }
  }

  /** Round-robin from the cursor: the first tenant whose shard holds `querierId` gives up its oldest item. */
  private take(querierId: string): Dequeued<T> | undefined {
    for (let n = 0; n < this.rotation.length; n++) {
      const at = (this.cursor + n) % this.rotation.length;
      const tenant = this.rotation[at];
      const q = this.tenants.get(tenant);
      if (q === undefined) continue;
      const shard = this.shard(tenant, q);
      if (shard !== undefined && !shard.has(querierId)) continue;
      const x = q.items.shift();
      if (x === undefined) continue;
      if (q.items.length === 0) {
        this.rotation.splice(at, 1);
        this.cursor = this.rotation.length === 0 ? 0 : at % this.rotation.length;
      } else {
        this.cursor = (at + 1) % this.rotation.length;
      }
      return { tenant, item: x.item, waitedMs: this.now() - x.enqueuedAt };
    }
    return undefined;
  }

  private leaveRotation(tenant: string): void {
    const at = this.rotation.indexOf(tenant);
    if (at < 0) return;
    this.rotation.splice(at, 1);
    if (at < this.cursor) this.cursor--;
    if (this.cursor >= this.rotation.length) this.cursor = 0;
  }

  /** Computed once per change of the querier set: a tenant-seeded shuffle of the sorted querier ids, first maxQueriers. */
  private shard(tenant: string, q: TenantQueue<T>): ReadonlySet<string> | undefined {
    if (q.maxQueriers <= 0 || q.maxQueriers >= this.queriers.size) return undefined;
    if (q.shard === undefined || q.shardEpoch !== this.querierEpoch) {
      q.shard = new Set(shuffleShard(tenant, [...this.queriers.keys()], q.maxQueriers));
      q.shardEpoch = this.querierEpoch;
    }
    return q.shard;
  }
}

/**
 * `size` of `ids` picked for `tenant`: the same for the same set of ids whatever order they
 * connected in, different tenants spread over different subsets (a Fisher-Yates shuffle
 * driven by a xorshift generator seeded with the tenant's hash).
 */
export function shuffleShard(tenant: string, ids: readonly string[], size: number): string[] {
  const sorted = [...ids].sort();
  let state = stringHash(tenant) || 1;
  const random = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
  for (let i = sorted.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [sorted[i], sorted[j]] = [sorted[j], sorted[i]];
  }
  return sorted.slice(0, size);
}
