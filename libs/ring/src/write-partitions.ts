// Which partitions a distributor writes to, and how a series token picks one.
// With a ring (current or last known): its ACTIVE partitions that Kafka has.
// Without one (KV empty or unreachable since startup, or the memory KV of a
// multi-process deployment): every Kafka partition, on the same token ring, so
// writes go on and the mapping is the one an all-ACTIVE ring would give.

import type { Logger } from '@strata/service';
import { PartitionRing, type PartitionLookup } from './partition-ring.ts';
import type { RingStatusSnapshot } from './http.ts';
import type { PartitionRingWatcher } from './ring-watcher.ts';

export interface WritePartitionsOptions {
  /** Absent: always the Kafka fallback. */
  watcher?: PartitionRingWatcher;
  /** Kafka's partition count for the topic. */
  partitionCount: () => Promise<number>;
  logger?: Logger;
}

export class WritePartitions {
  private fallback: PartitionRing | undefined;
  private fallbackLogged = false;

  private readonly opts: WritePartitionsOptions;

  constructor(opts: WritePartitionsOptions) {
    this.opts = opts;
  }

  /** The lookup to shard one request with. */
  async lookup(): Promise<PartitionLookup> {
    const count = await this.opts.partitionCount();
    const ring = this.opts.watcher?.ring();
    if (ring && !ring.isEmpty) {
      this.fallbackLogged = false;
      return ring.writer(count);
    }
    if (!this.fallbackLogged && this.opts.watcher) {
      this.fallbackLogged = true;
      const why = this.opts.watcher.status().reason ?? 'no ring yet';
      this.opts.logger?.warn(`no partition ring (${why}); writing to all ${count} Kafka partitions until one appears`);
    }
    return this.fallbackRing(count).writer();
  }

  /** For the ring status page: the ring in use and where it comes from. */
  async snapshot(): Promise<RingStatusSnapshot> {
    const status = this.opts.watcher?.status();
    const kv = status?.kv ?? 'none';
    let count: number | undefined;
    try {
      count = await this.opts.partitionCount();
    } catch {
      // Kafka unreachable: the page still shows the ring.
    }
    const ring = this.opts.watcher?.ring();
    if (ring && !ring.isEmpty) {
      return { ring, source: status!.source, kv, reason: status!.reason, writePartitions: count === undefined ? undefined : ring.writer(count).partitions };
    }
    const reason = `${status?.reason ?? 'no ring configured'}; writing to every Kafka partition${count === undefined ? '' : ` (${count})`}`;
    const fallback = count === undefined ? undefined : this.fallbackRing(count);
    return { ring: fallback, source: 'kafka-fallback', kv, reason, writePartitions: fallback?.writer().partitions };
  }

  private fallbackRing(count: number): PartitionRing {
    if (this.fallback?.partitions().length !== count) this.fallback = PartitionRing.allActive(count);
    return this.fallback;
  }
}
