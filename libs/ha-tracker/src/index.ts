export { HaTracker, validateTimeouts } from './ha-tracker.ts';
export type { HaTrackerOptions, HaDecision, HaReplicaChecker, ReplicaDesc, TenantClusters } from './ha-tracker.ts';
export { haTrackerPage } from './ha-tracker-page.ts';
export { HaTrackerError } from './errors.ts';
export { findHaLabels, withoutLabel } from './labels.ts';
export { haTrackerConfigShape, haTrackerKv } from './config.ts';
export type { HaTrackerConfig } from './config.ts';
