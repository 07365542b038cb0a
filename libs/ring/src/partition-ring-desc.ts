// The partition ring as stored in the KV (one JSON value under one key, as
// dskit keeps it under "ingester-partitions"): partitions with a state and
// owners (ingester instances) with their gRPC address and heartbeat. Pure
// functions that edit a desc in place and say whether they changed it; they
// never talk to the KV, so CAS callbacks can use them as they are.

import { ringErrors } from './errors.ts';

export type PartitionState = 'PENDING' | 'ACTIVE' | 'INACTIVE';

export const PARTITION_RING_KEY = 'collectors/ingester-partitions';

export interface PartitionDesc {
  id: number;
  state: PartitionState;
  /** ms since epoch of the last state change */
  stateTimestamp: number;
}

export interface OwnerDesc {
  /** Instance id, ingester-zone-<zone>-<n>. */
  id: string;
  partition: number;
  zone: string;
  /** gRPC host:port the querier reads from. */
  addr: string;
  /** ms since epoch when this owner was added (the min-owners-duration clock). */
  registeredTimestamp: number;
  /** ms since epoch of the last heartbeat. */
  heartbeatTimestamp: number;
  /** Set while the ingester is over an instance limit: distributors refuse writes to its partition (503) until it is cleared. */
  overLimit?: string;
}

export interface PartitionRingDesc {
  /** Keyed by partition id (JSON object keys are strings). */
  partitions: Record<string, PartitionDesc>;
  owners: Record<string, OwnerDesc>;
}

const ALLOWED: Record<PartitionState, PartitionState[]> = {
  PENDING: ['ACTIVE', 'INACTIVE'],
  ACTIVE: ['INACTIVE'],
  INACTIVE: ['ACTIVE'],
};

export function emptyRingDesc(): PartitionRingDesc {
  return { partitions: {}, owners: {} };
}

/** A desc read from the KV, with missing maps filled in. */
export function normalizeRingDesc(d: Partial<PartitionRingDesc> | undefined): PartitionRingDesc {
  return { partitions: d?.partitions ?? {}, owners: d?.owners ?? {} };
}

export function isEmptyRingDesc(d: PartitionRingDesc): boolean {
  return Object.keys(d.partitions).length === 0 && Object.keys(d.owners).length === 0;
}

export function addPartition(d: PartitionRingDesc, id: number, state: PartitionState, now: number): boolean {
  if (d.partitions[id]) return false;
  d.partitions[id] = { id, state, stateTimestamp: now };
  return true;
}

export function removePartition(d: PartitionRingDesc, id: number): boolean {
  if (!d.partitions[id]) return false;
  delete d.partitions[id];
  return true;
}

/** Changes a partition's state; throws (a conflict) for a change dskit does not allow, e.g. INACTIVE → PENDING. */
export function setPartitionState(d: PartitionRingDesc, id: number, to: PartitionState, now: number): boolean {
  const p = d.partitions[id];
  if (!p) throw ringErrors.partitionMissing(id);
  if (p.state === to) return false;
  if (!ALLOWED[p.state].includes(to)) throw ringErrors.stateChangeNotAllowed(id, p.state, to);
  d.partitions[id] = { ...p, state: to, stateTimestamp: now };
  return true;
}

/** Adds the owner or updates its partition/zone/address; a new owner (or one moved to another partition) restarts its registration clock. */
export function upsertOwner(d: PartitionRingDesc, o: Pick<OwnerDesc, 'id' | 'partition' | 'zone' | 'addr'>, now: number): boolean {
  const prev = d.owners[o.id];
  if (prev && prev.partition === o.partition && prev.zone === o.zone && prev.addr === o.addr) return false;
  d.owners[o.id] = {
    ...o,
    registeredTimestamp: prev && prev.partition === o.partition ? prev.registeredTimestamp : now,
    heartbeatTimestamp: now,
  };
  return true;
}

export function heartbeat(d: PartitionRingDesc, id: string, now: number): boolean {
  const o = d.owners[id];
  if (!o) return false;
  d.owners[id] = { ...o, heartbeatTimestamp: now };
  return true;
}

/** Sets (or with undefined clears) why the owner takes no more writes. */
export function setOwnerOverLimit(d: PartitionRingDesc, id: string, reason: string | undefined): boolean {
  const o = d.owners[id];
  if (!o || o.overLimit === reason) return false;
  const next = { ...o, overLimit: reason };
  if (reason === undefined) delete next.overLimit;
  d.owners[id] = next;
  return true;
}

export function removeOwner(d: PartitionRingDesc, id: string): boolean {
  if (!d.owners[id]) return false;
  delete d.owners[id];
  return true;
}

export function isHealthy(o: OwnerDesc, now: number, heartbeatTimeoutMs: number): boolean {
  return heartbeatTimeoutMs <= 0 || now - o.heartbeatTimestamp <= heartbeatTimeoutMs;
}

/** Owners of a partition, sorted by id. */
export function ownersOf(d: PartitionRingDesc, partition: number): OwnerDesc[] {
  return Object.values(d.owners)
    .filter((o) => o.partition === partition)
    .sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * Owners that count towards switching a PENDING partition to ACTIVE: healthy
 * (heartbeat within the timeout) and registered at least minDurationMs ago.
 */
export function eligibleOwnersCount(d: PartitionRingDesc, partition: number, now: number, minDurationMs: number, heartbeatTimeoutMs: number): number {
  return ownersOf(d, partition).filter((o) => now - o.registeredTimestamp >= minDurationMs && isHealthy(o, now, heartbeatTimeoutMs)).length;
}
