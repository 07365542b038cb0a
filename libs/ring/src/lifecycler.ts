// An ingester's life in the partition ring (dskit's PartitionInstanceLifecycler
// plus the ingester ring's heartbeat): register as owner of its partition
// (creating it PENDING), heartbeat, switch the partition to ACTIVE once it has
// enough owners for long enough, serve downscale/shutdown preparation, and
// leave the ring on shutdown only when asked to. A KV outage never stops the
// ingester: it keeps consuming Kafka and re-registers when the KV is back.

import { Counter, type Registry } from 'prom-client';
import type { Logger } from '@strata/service';
import type { KvClient } from './kv.ts';
import { ringErrors } from './errors.ts';
import {
  PARTITION_RING_KEY,
  addPartition,
  eligibleOwnersCount,
  heartbeat,
  normalizeRingDesc,
  ownersOf,
  removeOwner,
  removePartition,
  setOwnerOverLimit,
  setPartitionState,
  upsertOwner,
  type PartitionRingDesc,
  type PartitionState,
} from './partition-ring-desc.ts';

export interface PartitionLifecyclerOptions {
  kv: KvClient;
  key?: string;
  instanceId: string;
  zone: string;
  partition: number;
  /** The gRPC address queriers read from; asked at each reconcile (the port is known once the server listens). */
  address: () => string;
  /** -ingester.ring.heartbeat-period; 0 disables heartbeats. */
  heartbeatPeriodMs: number;
  /** -ingester.ring.heartbeat-timeout; an owner silent for longer is unhealthy; 0 = never. */
  heartbeatTimeoutMs: number;
  /** -ingester.partition-ring.min-partition-owners-count */
  minOwnersCount: number;
  /** -ingester.partition-ring.min-partition-owners-duration */
  minOwnersDurationMs: number;
  /** -ingester.partition-ring.delete-inactive-partition-after; 0 = never. */
  deleteInactivePartitionAfterMs: number;
  /** How often the ring is reconciled (reads are cheap; writes happen only on change or heartbeat). */
  pollIntervalMs?: number;
  logger: Logger;
  registry?: Registry;
  now?: () => number;
}

export interface PartitionStateInfo {
  state: PartitionState;
  /** ms since epoch of the last state change. */
  timestamp: number;
}

export class PartitionInstanceLifecycler {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private loop: Promise<void> = Promise.resolve();
  /** The partition's state last seen: a partition lost from the KV is re-created in it, not as PENDING. */
  private lastKnownState: PartitionState | undefined;
  private removeOwnerOnShutdown = false;
  private failing = false;
  /** Why this ingester takes no more writes (an instance limit), published in its owner entry. */
  private overLimit: string | undefined;
  private readonly now: () => number;
  private readonly key: string;
  private readonly reconciles?: Counter<'result'>;

  private readonly opts: PartitionLifecyclerOptions;

  constructor(opts: PartitionLifecyclerOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
    this.key = opts.key ?? PARTITION_RING_KEY;
    if (opts.registry) {
      this.reconciles = new Counter({
        name: 'strata_partition_ring_lifecycler_reconciles_total',
        help: 'Partition ring reconciliations (register, heartbeat, PENDING → ACTIVE), by result.',
        labelNames: ['result'],
        registers: [opts.registry],
      });
    }
  }

  get partition(): number {
    return this.opts.partition;
  }

  get instanceId(): string {
    return this.opts.instanceId;
  }

  /** Registers (retrying in the background if the KV is unreachable) and starts the reconcile loop. */
  async start(): Promise<void> {
    this.running = true;
    await this.reconcileLogged();
    this.schedule();
  }

  /** Stops the loop; leaves the ring only if prepare-shutdown asked for it. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.loop;
    if (!this.removeOwnerOnShutdown) {
      this.opts.logger.info(
        `${this.opts.instanceId} stays registered as owner of partition ${this.opts.partition} (no prepare-shutdown); its heartbeat will age`,
      );
      return;
    }
    try {
      await this.opts.kv.cas<PartitionRingDesc>(this.key, (cur) => {
        const d = normalizeRingDesc(cur);
        return removeOwner(d, this.opts.instanceId) ? { value: d } : undefined;
      });
      this.opts.logger.info(`${this.opts.instanceId} removed from the owners of partition ${this.opts.partition} (prepare-shutdown)`);
    } catch (err) {
      this.opts.logger.error({ err: (err as Error).message }, `${this.opts.instanceId} could not leave the partition ring on shutdown`);
    }
  }

  /** One reconciliation: register, heartbeat, PENDING → ACTIVE, delete long-INACTIVE partitions without owners. */
  async reconcile(): Promise<void> {
    const { instanceId, partition, zone } = this.opts;
    const after = await this.opts.kv.cas<PartitionRingDesc>(this.key, (cur) => {
      const d = normalizeRingDesc(cur);
      const now = this.now();
      let changed = false;
      if (!d.partitions[partition]) {
        const state = this.lastKnownState ?? 'PENDING';
        if (this.lastKnownState) this.opts.logger.warn(`partition ${partition} is missing from the ring (KV store lost its data?); re-creating it ${state}`);
        changed = addPartition(d, partition, state, now) || changed;
      }
      if (upsertOwner(d, { id: instanceId, partition, zone, addr: this.opts.address() }, now)) changed = true;
      else if (this.opts.heartbeatPeriodMs > 0 && now - d.owners[instanceId].heartbeatTimestamp >= this.opts.heartbeatPeriodMs) {
        changed = heartbeat(d, instanceId, now) || changed;
      }
      changed = setOwnerOverLimit(d, instanceId, this.overLimit) || changed;
      const p = d.partitions[partition];
      if (
        p.state === 'PENDING' &&
        eligibleOwnersCount(d, partition, now, this.opts.minOwnersDurationMs, this.opts.heartbeatTimeoutMs) >= this.opts.minOwnersCount
      ) {
        this.opts.logger.info(
          `partition ${partition} has ${this.opts.minOwnersCount}+ owners registered for ${this.opts.minOwnersDurationMs}ms+; switching PENDING → ACTIVE`,
        );
        changed = setPartitionState(d, partition, 'ACTIVE', now) || changed;
      }
      changed = this.deleteAbandonedPartitions(d, now) || changed;
      return changed ? { value: d } : undefined;
    });
    this.lastKnownState = normalizeRingDesc(after).partitions[partition]?.state ?? this.lastKnownState;
  }

  /** The partition's state in the KV. */
  async partitionState(): Promise<PartitionStateInfo> {
    const d = normalizeRingDesc(await this.opts.kv.get<PartitionRingDesc>(this.key));
    const p = d.partitions[this.opts.partition];
    if (!p) throw ringErrors.partitionMissing(this.opts.partition);
    this.lastKnownState = p.state;
    return { state: p.state, timestamp: p.stateTimestamp };
  }

  /** POST /ingester/prepare-partition-downscale: ACTIVE → INACTIVE (a conflict while PENDING). */
  prepareDownscale(): Promise<PartitionStateInfo> {
    return this.changeState((state) => {
      if (state === 'PENDING') throw ringErrors.downscalePending(this.opts.partition);
      return 'INACTIVE';
    });
  }

  /** DELETE /ingester/prepare-partition-downscale: INACTIVE → ACTIVE; other states are left alone. */
  cancelDownscale(): Promise<PartitionStateInfo> {
    return this.changeState((state) => (state === 'INACTIVE' ? 'ACTIVE' : state));
  }

  /**
   * Publishes (undefined: clears) that this ingester is over an instance limit, at once rather than
   * at the next reconcile: distributors refuse writes to its partition while it is set.
   */
  setOverLimit(reason: string | undefined): void {
    if (reason === this.overLimit) return;
    this.overLimit = reason;
    if (reason === undefined)
      this.opts.logger.info(`${this.opts.instanceId} is back under its instance limits; writes to partition ${this.opts.partition} resume`);
    else
      this.opts.logger.warn(
        `${this.opts.instanceId} is over an instance limit (${reason}); distributors refuse writes to partition ${this.opts.partition} (503) until it is back under`,
      );
    if (this.running) this.loop = this.loop.then(() => this.reconcileLogged());
  }

  /** prepare-shutdown: whether the next shutdown removes this instance from the ring. */
  setRemoveOwnerOnShutdown(remove: boolean): void {
    this.removeOwnerOnShutdown = remove;
    this.opts.logger.info(`${this.opts.instanceId} will ${remove ? '' : 'not '}leave the partition ring on its next shutdown`);
  }

  get removesOwnerOnShutdown(): boolean {
    return this.removeOwnerOnShutdown;
  }

  get isRunning(): boolean {
    return this.running;
  }

  private async changeState(to: (state: PartitionState) => PartitionState): Promise<PartitionStateInfo> {
    if (!this.running) throw ringErrors.notRunning();
    const id = this.opts.partition;
    const after = await this.opts.kv.cas<PartitionRingDesc>(this.key, (cur) => {
      const d = normalizeRingDesc(cur);
      const p = d.partitions[id];
      if (!p) throw ringErrors.partitionMissing(id);
      const target = to(p.state);
      if (target === p.state) return undefined;
      setPartitionState(d, id, target, this.now());
      this.opts.logger.info(`partition ${id}: ${p.state} → ${target}`);
      return { value: d };
    });
    const p = normalizeRingDesc(after).partitions[id];
    this.lastKnownState = p.state;
    return { state: p.state, timestamp: p.stateTimestamp };
  }

  private deleteAbandonedPartitions(d: PartitionRingDesc, now: number): boolean {
    const after = this.opts.deleteInactivePartitionAfterMs;
    if (after <= 0) return false;
    let changed = false;
    for (const p of Object.values(d.partitions)) {
      if (p.id === this.opts.partition || p.state !== 'INACTIVE' || now - p.stateTimestamp < after) continue;
      if (ownersOf(d, p.id).length > 0) continue;
      this.opts.logger.info(`removing partition ${p.id}: INACTIVE for ${Math.round((now - p.stateTimestamp) / 1000)}s with no owners`);
      changed = removePartition(d, p.id) || changed;
    }
    return changed;
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.loop = this.reconcileLogged().finally(() => this.schedule());
    }, this.opts.pollIntervalMs ?? 1000);
  }

  private async reconcileLogged(): Promise<void> {
    try {
      await this.reconcile();
      this.reconciles?.inc({ result: 'success' });
      if (this.failing) this.opts.logger.info(`${this.opts.instanceId} is registered in the partition ring again`);
      this.failing = false;
    } catch (err) {
      this.reconciles?.inc({ result: 'failure' });
      if (!this.failing) {
        this.opts.logger.warn(
          { err: (err as Error).message },
          `${this.opts.instanceId} cannot update the partition ring; still consuming Kafka, retrying every ${this.opts.pollIntervalMs ?? 1000}ms`,
        );
      }
      this.failing = true;
    }
  }
}
