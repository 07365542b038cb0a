// Finds the ingesters to read from in the partition ring (each registers its
// gRPC address), with the static -querier.ingester-addresses list as the
// fallback: a static entry is used unless the ring knows that instance or, once
// the ring lists partitions, names a partition the ring does not have. The
// ring's owners of ACTIVE and INACTIVE partitions are read (PENDING ones hold
// no data yet, as in Mimir); an owner whose heartbeat timed out is used only
// when its partition has no healthy owner. A ring never seen (KV down since
// startup) leaves the static list in place; a ring that goes stale is kept.

import { isHealthy, type PartitionRing } from '@strata/ring';
import type { Logger } from '@strata/service';
import type { IngesterReplica, PartitionQuerier } from './partition-querier.ts';

export interface KnownIngester {
  id: string;
  zone: string;
  partition: number;
  address: string;
}

/** A client to one ingester; closed when it leaves the ring. */
export type IngesterConnection = Pick<IngesterReplica, 'querier' | 'waiter'> & { close(): void };

export interface RingIngesterDiscoveryOptions {
  /** The ring source (a PartitionRingWatcher). */
  ring: { onChange(listener: (ring: PartitionRing) => void): () => void; ring(): PartitionRing | undefined };
  /** From -querier.ingester-addresses. */
  staticIngesters: readonly KnownIngester[];
  connect(id: string, address: string): IngesterConnection;
  querier: PartitionQuerier;
  heartbeatTimeoutMs: number;
  logger: Logger;
  /** How often owners' health is re-checked without a ring change. */
  recheckIntervalMs?: number;
  now?: () => number;
}

export class RingIngesterDiscovery {
  private readonly connections = new Map<string, IngesterConnection>();
  private unsubscribe: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastSummary = '';

  private readonly opts: RingIngesterDiscoveryOptions;

  constructor(opts: RingIngesterDiscoveryOptions) {
    this.opts = opts;
  }

  /** Applies the static list (or the ring, if already read) and follows the ring from now on. */
  start(): void {
    this.apply(this.opts.ring.ring());
    this.unsubscribe = this.opts.ring.onChange((ring) => this.apply(ring));
    this.timer = setInterval(() => this.apply(this.opts.ring.ring()), this.opts.recheckIntervalMs ?? 5000);
    this.timer.unref();
  }

  stop(): void {
    this.unsubscribe?.();
    clearInterval(this.timer);
    for (const c of this.connections.values()) c.close();
    this.connections.clear();
  }

  /** The ingesters read now. */
  current(ring: PartitionRing | undefined): KnownIngester[] {
    const now = (this.opts.now ?? Date.now)();
    const fromRing: KnownIngester[] = [];
    const known = new Set<string>();
    for (const p of ring?.partitions() ?? []) {
      const owners = ring!.owners(p.id);
      for (const o of owners) known.add(o.id);
      if (p.state === 'PENDING') continue;
      const healthy = owners.filter((o) => isHealthy(o, now, this.opts.heartbeatTimeoutMs));
      for (const o of healthy.length > 0 ? healthy : owners) fromRing.push({ id: o.id, zone: o.zone, partition: o.partition, address: o.addr });
    }
    for (const o of ring?.allOwners() ?? []) known.add(o.id);
    // A ring that lists partitions says which exist: a static entry for any other partition would be a
    // partition no distributor writes to, and reading it would fail every query (no ingester answers).
    const partitions = new Set((ring?.partitions() ?? []).map((p) => p.id));
    const fallback = this.opts.staticIngesters.filter((s) => !known.has(s.id) && (partitions.size === 0 || partitions.has(s.partition)));
    return [...fromRing, ...fallback];
  }

  private apply(ring: PartitionRing | undefined): void {
    const ingesters = this.current(ring);
    const replicas: IngesterReplica[] = [];
    const used = new Set<string>();
    for (const i of ingesters) {
      const key = `${i.id}@${i.address}`;
      used.add(key);
      let c = this.connections.get(key);
      if (!c) this.connections.set(key, (c = this.opts.connect(i.id, i.address)));
      replicas.push({ id: i.id, zone: i.zone, partition: i.partition, querier: c.querier, waiter: c.waiter });
    }
    this.opts.querier.setReplicas(replicas);
    for (const [key, c] of this.connections) {
      if (!used.has(key)) {
        c.close();
        this.connections.delete(key);
      }
    }
    const summary = ingesters
      .map((i) => `${i.id}=${i.address}`)
      .sort()
      .join(',');
    if (summary !== this.lastSummary) {
      this.lastSummary = summary;
      this.opts.logger.info({ ingesters: summary, ring: ring ? ring.describeStates() : 'none' }, 'ingesters to query changed');
    }
  }
}
