// Keeps the latest partition ring read from the KV for distributors and
// queriers. It never forgets a ring it has seen: when the KV becomes
// unreachable, or comes back empty or partial (a Redis restarted without data),
// the last known ring (or its missing partitions) stays in use until ingesters
// re-register, so a KV outage neither stops writes, nor reshuffles series, nor
// hides a partition from queriers. Before any ring was seen, ring() is
// undefined and the caller decides the fallback.

import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '@strata/service';
import type { KvClient } from './kv.ts';
import { PartitionRing } from './partition-ring.ts';
import { PARTITION_RING_KEY, isEmptyRingDesc, isHealthy, normalizeRingDesc, type PartitionRingDesc } from './partition-ring-desc.ts';

export interface PartitionRingWatcherOptions {
  kv: KvClient;
  logger: Logger;
  registry?: Registry;
  key?: string;
  /** How long start() waits for the first answer from the KV. */
  startTimeoutMs?: number;
  /** -ingester.ring.heartbeat-timeout, for the healthy/unhealthy owner counts (default 1m; 0: always healthy). */
  heartbeatTimeoutMs?: number;
}

export interface RingWatcherStatus {
  /** kv: the KV's current ring; stale: the last ring seen, the KV being unreachable or empty; none: no ring seen yet. */
  source: 'kv' | 'stale' | 'none';
  kv: string;
  /** Why the ring is stale or absent, if it is. */
  reason?: string;
  /** ms since epoch of the last successful read. */
  lastReadAt?: number;
}

export class PartitionRingWatcher {
  private current: PartitionRing | undefined;
  private st: RingWatcherStatus;
  private unwatch: (() => void) | undefined;
  private readonly listeners = new Set<(ring: PartitionRing) => void>();
  private readonly kvErrors?: Counter;
  private warnedStale = false;
  private lastKept = '';

  private readonly opts: PartitionRingWatcherOptions;

  constructor(opts: PartitionRingWatcherOptions) {
    this.opts = opts;
    this.st = { source: 'none', kv: opts.kv.description, reason: 'not read yet' };
    if (opts.registry) {
      const registers = [opts.registry];
      this.kvErrors = new Counter({
        name: 'strata_partition_ring_kv_read_errors_total',
        help: 'Failed reads of the partition ring from the KV store (the last known ring stays in use).',
        registers,
      });
      const self = this;
      new Gauge({
        name: 'strata_partition_ring_partitions',
        help: 'Partitions in the ring in use, by state.',
        labelNames: ['state'],
        registers,
        collect() {
          for (const state of ['PENDING', 'ACTIVE', 'INACTIVE'] as const) this.set({ state }, self.current?.partitionIds(state).length ?? 0);
        },
      });
      new Gauge({
        name: 'strata_partition_ring_owners',
        help: 'Partition owners (ingesters) in the ring in use, by health (heartbeat within -ingester.ring.heartbeat-timeout).',
        labelNames: ['health'],
        registers,
        collect() {
          const owners = self.current?.allOwners() ?? [];
          const now = Date.now();
          const healthy = owners.filter((o) => isHealthy(o, now, opts.heartbeatTimeoutMs ?? 60_000)).length;
          this.set({ health: 'healthy' }, healthy);
          this.set({ health: 'unhealthy' }, owners.length - healthy);
        },
      });
      new Gauge({
        name: 'strata_partition_ring_stale',
        help: "1 when the ring in use is not the KV store's current one (KV unreachable or empty), else 0.",
        registers,
        collect() {
          this.set(self.st.source === 'kv' ? 0 : 1);
        },
      });
    }
  }

  /** Subscribes to the ring; resolves after the KV's first answer (a ring or an error) or the start timeout. */
  async start(): Promise<void> {
    let answered!: () => void;
    const first = new Promise<void>((r) => (answered = r));
    this.unwatch = this.opts.kv.watch<PartitionRingDesc>(
      this.opts.key ?? PARTITION_RING_KEY,
      (value) => {
        this.update(value);
        answered();
      },
      (err) => {
        this.failed(err);
        answered();
      },
    );
    const timeout = this.opts.startTimeoutMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([first, new Promise<void>((r) => (timer = setTimeout(r, timeout)))]);
    clearTimeout(timer);
  }

  async stop(): Promise<void> {
    this.unwatch?.();
    this.listeners.clear();
  }

  /** The ring in use: the KV's, or the last one seen; undefined if none was ever seen. */
  ring(): PartitionRing | undefined {
    return this.current;
  }

  status(): RingWatcherStatus {
    return { ...this.st };
  }

  onChange(listener: (ring: PartitionRing) => void): () => void {
    this.listeners.add(listener);
    if (this.current) listener(this.current);
    return () => this.listeners.delete(listener);
  }

  private update(value: PartitionRingDesc | undefined): void {
    const desc = normalizeRingDesc(value);
    const now = Date.now();
    if (isEmptyRingDesc(desc)) {
      const reason = `the KV store (${this.opts.kv.description}) holds no partition ring`;
      this.st = { source: this.current ? 'stale' : 'none', kv: this.opts.kv.description, reason, lastReadAt: now };
      if (this.current && !this.warnedStale) {
        this.warnedStale = true;
        this.opts.logger.warn(`${reason}; keeping the last known ring until ingesters re-register`);
      }
      return;
    }
    this.warnedStale = false;
    const kept = this.current ? keepVanished(this.current.desc, desc) : [];
    const ring = PartitionRing.fromDesc(desc);
    const before = this.current?.describeStates();
    this.current = ring;
    this.st =
      kept.length === 0
        ? { source: 'kv', kv: this.opts.kv.description, lastReadAt: now }
        : {
            source: 'stale',
            kv: this.opts.kv.description,
            lastReadAt: now,
            reason: `partition(s) ${kept.join(', ')} missing from the KV store; kept as last seen until their ingesters re-register them`,
          };
    if (kept.join() !== this.lastKept) {
      this.lastKept = kept.join();
      if (kept.length > 0) this.opts.logger.warn(this.st.reason!);
      else this.opts.logger.info('every partition is back in the KV store');
    }
    if (before !== ring.describeStates()) this.opts.logger.info({ partitions: ring.describeStates() }, 'partition ring changed');
    for (const l of this.listeners) l(ring);
  }

  private failed(err: Error): void {
    this.kvErrors?.inc();
    const reason = `cannot read the partition ring: ${err.message}`;
    if (!this.warnedStale) {
      this.warnedStale = true;
      this.opts.logger.warn(this.current ? `${reason}; keeping the last known ring` : reason);
    }
    this.st = { ...this.st, source: this.current ? 'stale' : 'none', reason };
  }
}

/**
 * A KV that lost part of the ring (Redis restarted empty, ingesters
 * re-registering one by one) must not shrink the ring readers use: partitions
 * of `prev` missing from `next` are copied back with their owners, except an
 * INACTIVE partition without owners, which is how a partition is legitimately
 * removed (-ingester.partition-ring.delete-inactive-partition-after).
 * Returns the ids kept.
 */
function keepVanished(prev: PartitionRingDesc, next: PartitionRingDesc): number[] {
  const kept: number[] = [];
  for (const p of Object.values(prev.partitions)) {
    if (next.partitions[p.id]) continue;
    const owners = Object.values(prev.owners).filter((o) => o.partition === p.id);
    if (p.state === 'INACTIVE' && owners.length === 0) continue;
    next.partitions[p.id] = p;
    for (const o of owners) if (!next.owners[o.id]) next.owners[o.id] = o;
    kept.push(p.id);
  }
  return kept.sort((a, b) => a - b);
}
