export type { KvClient, CasUpdate } from './kv.ts';
export { MemoryKv } from './memory-kv.ts';
export type { MemoryKvOptions } from './memory-kv.ts';
export { RedisKv, splitHostPort } from './redis-kv.ts';
export type { RedisKvOptions } from './redis-kv.ts';
export { RingError, KvUnavailableError, KvConflictError } from './errors.ts';
export {
  PARTITION_RING_KEY,
  emptyRingDesc,
  normalizeRingDesc,
  addPartition,
  setPartitionState,
  upsertOwner,
  heartbeat,
  removeOwner,
  isHealthy,
  ownersOf,
  eligibleOwnersCount,
} from './partition-ring-desc.ts';
export type { PartitionRingDesc, PartitionDesc, OwnerDesc, PartitionState } from './partition-ring-desc.ts';
export { PartitionRing, NoWritablePartitionError } from './partition-ring.ts';
export type { PartitionLookup } from './partition-ring.ts';
export { TOKENS_PER_PARTITION, partitionTokens, fmix32 } from './tokens.ts';
export { PartitionRingWatcher } from './ring-watcher.ts';
export type { PartitionRingWatcherOptions, RingWatcherStatus } from './ring-watcher.ts';
export { PartitionInstanceLifecycler } from './lifecycler.ts';
export type { PartitionLifecyclerOptions, PartitionStateInfo } from './lifecycler.ts';
export { WritePartitions } from './write-partitions.ts';
export type { WritePartitionsOptions } from './write-partitions.ts';
export { registerRingStatusPage, registerIngesterRingRoutes, ringStatusJson } from './http.ts';
export type { RingStatusSnapshot, RingStatusPageOptions, RingStatusJson, IngesterRingRoutesOptions } from './http.ts';
export { ringPage } from './ring-page.ts';
export { ringKvConfigShape, ringClientConfigShape, ingesterRingConfigShape, createKv, instanceHost } from './config.ts';
export type { RingKvConfig, RingClientConfig, IngesterRingConfig } from './config.ts';
