// What a failure drill scenario is: a fault injected into a running, loaded cluster and healed.
// The drill runner owns load, probes, timing and verification; a scenario only breaks and mends.

import type { DrillCluster } from '../support/drill-cluster.ts';

export interface FaultContext {
  cluster: DrillCluster;
  /** How long to keep the fault in place, where the scenario has a duration. */
  faultSeconds: number;
  /** A line for the report's timeline (and the console). */
  event(what: string): void;
  /** Healing starts now: catch-up is timed from here. Defaults to when run() returns. */
  markHeal(): void;
  sleep(ms: number): Promise<void>;
}

interface StandaloneContext {
  dataDir: string;
  event(what: string): void;
}

export interface Scenario {
  name: string;
  /** One line for --help and the report. */
  description: string;
  /** Query availability the fault window must reach; undefined where the fault takes the only replica away. */
  availabilityTarget?: number;
  /** Why this build cannot run the scenario (the part it breaks does not exist yet), or undefined. */
  notApplicable?(): string | undefined;
  /** When not applicable: exercise whatever real part exists without a cluster (e.g. the Redis server itself). */
  standalone?(ctx: StandaloneContext): Promise<void>;
  /** Injects the fault, holds it, heals it. Returns once healing has been initiated. */
  run(ctx: FaultContext): Promise<void>;
}

/** Thrown by run() when the scenario turns out not to apply to the running build. */
export class NotApplicableError extends Error {}
