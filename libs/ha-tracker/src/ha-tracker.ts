// Deduplicates HA Prometheus pairs (Mimir's HA tracker): per (tenant, cluster)
// one replica is elected in the KV store; its samples are accepted, the other
// replicas' are dropped, and when the elected one has been silent for the
// failover timeout the next replica to push takes over. The KV is written at
// most once per update timeout per cluster; between writes this distributor
// decides from what it last read or wrote, which is safe because a failover
// needs the stored timestamp to be older than the failover timeout, longer
// than anything the local copy can lag. It never accepts a replica it could
// not check: an unreachable KV is an error (5xx), not an acceptance.

import { Counter, type Registry } from 'prom-client';
import { KvUnavailableError, RingError, type KvClient } from '@strata/ring';
import type { Logger } from '@strata/service';
import { HaTrackerError, haErrors } from './errors.ts';

/** What the KV holds per (tenant, cluster). Timestamps are ms since epoch. */
export interface ReplicaDesc {
  replica: string;
  /** When the elected replica's samples were last recorded in the KV. */
  receivedAt: number;
  electedAt: number;
  /** How many times another replica took over. */
  electedChanges: number;
}

export type HaDecision = { accepted: true; elected: string } | { accepted: false; elected: string };

/** The one call the distributor makes. `maxClusters` is the tenant's ha_max_clusters (0: no limit). */
export interface HaReplicaChecker {
  checkReplica(tenant: string, cluster: string, replica: string, maxClusters?: number): Promise<HaDecision>;
}

/** What the KV holds per tenant: its clusters and when each last pushed (ms), for ha_max_clusters. */
export interface TenantClusters {
  clusters: Record<string, number>;
}

export interface HaTrackerOptions {
  kv: KvClient;
  /** -distributor.ha-tracker.update-timeout (15s): write the elected replica's timestamp at most this often. */
  updateTimeoutMs: number;
  /** -distributor.ha-tracker.update-timeout-jitter-max (5s): spreads the writes of many clusters. */
  updateTimeoutJitterMaxMs: number;
  /** -distributor.ha-tracker.failover-timeout (30s): silence of the elected replica before another takes over. */
  failoverTimeoutMs: number;
  logger: Logger;
  registry?: Registry;
  now?: () => number;
  /** KV key prefix (Mimir's default "ha-tracker/"). */
  keyPrefix?: string;
  /** KV key prefix of the per-tenant cluster lists; default "ha-tracker-clusters/" (apart, so no cluster name can collide). */
  clustersKeyPrefix?: string;
  /** Idle (tenant, cluster) entries expire from the KV after this long; default 30m, as Mimir's cleanup. */
  entryTtlMs?: number;
}

export class HaTracker implements HaReplicaChecker {
  private readonly cache = new Map<string, ReplicaDesc>();
  private readonly updateTimeoutMs: number;
  private readonly now: () => number;
  private readonly electedChanges?: Counter<'tenant' | 'cluster'>;
  private readonly kvCas?: Counter<'result'>;

  private readonly opts: HaTrackerOptions;

  constructor(opts: HaTrackerOptions) {
    this.opts = opts;
    validateTimeouts(opts.updateTimeoutMs, opts.updateTimeoutJitterMaxMs, opts.failoverTimeoutMs);
    // One jitter per process, in [-max, +max), as Mimir does.
    const jitter = opts.updateTimeoutJitterMaxMs > 0 ? Math.floor(Math.random() * 2 * opts.updateTimeoutJitterMaxMs) - opts.updateTimeoutJitterMaxMs : 0;
    this.updateTimeoutMs = opts.updateTimeoutMs + jitter;
    this.now = opts.now ?? Date.now;
    if (opts.registry) {
      const registers = [opts.registry];
      this.electedChanges = new Counter({
        name: 'strata_ha_tracker_elected_replica_changes_total',
        help: "Changes of the elected replica of a tenant's HA cluster seen by this distributor (the first election included).",
        labelNames: ['tenant', 'cluster'],
        registers,
      });
      this.kvCas = new Counter({
        name: 'strata_ha_tracker_kv_store_cas_total',
        help: "Compare-and-swap calls to the HA tracker's KV store, by result.",
        labelNames: ['result'],
        registers,
      });
    }
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  /**
   * Accepted when `replica` is (or now becomes) the elected replica of the
   * tenant's cluster. Throws HaTrackerError (unavailable) when the KV cannot be read or
   * written, and (bad-input) when the cluster would be one more than `maxClusters`.
   */
  async checkReplica(tenant: string, cluster: string, replica: string, maxClusters = 0): Promise<HaDecision> {
    const key = `${this.opts.keyPrefix ?? 'ha-tracker/'}${tenant}/${cluster}`;
    const now = this.now();
    const known = this.cache.get(key);
    if (known) {
      const age = now - known.receivedAt;
      if (known.replica === replica && age < this.updateTimeoutMs) return { accepted: true, elected: replica };
      if (known.replica !== replica && age < this.opts.failoverTimeoutMs) return { accepted: false, elected: known.replica };
    }
    let decision: HaDecision = { accepted: true, elected: replica };
    let stored: ReplicaDesc | undefined;
    try {
      await this.admitCluster(tenant, cluster, maxClusters, now);
      stored = await this.opts.kv.cas<ReplicaDesc>(key, (cur) => {
        if (cur && cur.replica === replica && now - cur.receivedAt < this.updateTimeoutMs) {
          decision = { accepted: true, elected: replica };
          return undefined;
        }
        if (cur && cur.replica !== replica && now - cur.receivedAt < this.opts.failoverTimeoutMs) {
          decision = { accepted: false, elected: cur.replica };
          return undefined;
        }
        decision = { accepted: true, elected: replica };
        const takeover = cur === undefined || cur.replica !== replica;
        const value: ReplicaDesc = {
          replica,
          receivedAt: now,
          electedAt: takeover ? now : cur.electedAt,
          electedChanges: (cur?.electedChanges ?? 0) + (takeover && cur ? 1 : 0),
        };
        return { value, ttlMs: this.opts.entryTtlMs ?? 30 * 60_000 };
      });
      this.kvCas?.inc({ result: 'success' });
    } catch (err) {
      if (err instanceof HaTrackerError) throw err;
      this.kvCas?.inc({ result: 'failure' });
      if (err instanceof KvUnavailableError || err instanceof RingError) throw haErrors.kvUnavailable(tenant, cluster, err.message);
      throw err;
    }
    if (stored) {
      if (!known || known.replica !== stored.replica) {
        this.electedChanges?.inc({ tenant, cluster });
        if (stored.replica === replica && stored.receivedAt === now) {
          this.opts.logger.info({ tenant, cluster, replica, previous: known?.replica }, 'HA tracker elected a replica');
        }
      }
      this.cache.set(key, stored);
    }
    return decision;
  }

  /**
   * Records `cluster` in the tenant's cluster list (Mimir's ha_max_clusters): a
   * known cluster passes (its last-push time refreshed at most once per update
   * timeout), a new one is added unless the tenant already has `maxClusters`;
   * then HaTrackerError (bad-input). Clusters silent for the entry TTL drop out, as their
   * election entries do. The list is kept even without a limit, so one set later applies at once.
   */
  private async admitCluster(tenant: string, cluster: string, maxClusters: number, now: number): Promise<void> {
    const ttlMs = this.opts.entryTtlMs ?? 30 * 60_000;
    let refused = false;
    await this.opts.kv.cas<TenantClusters>(`${this.opts.clustersKeyPrefix ?? 'ha-tracker-clusters/'}${tenant}`, (cur) => {
      refused = false;
      const clusters: Record<string, number> = {};
      let expired = false;
      for (const [name, at] of Object.entries(cur?.clusters ?? {})) {
        if (now - at < ttlMs) clusters[name] = at;
        else expired = true;
      }
      const seen = clusters[cluster];
      if (seen !== undefined) {
        if (now - seen < this.updateTimeoutMs && !expired) return undefined;
      } else if (maxClusters > 0 && Object.keys(clusters).length >= maxClusters) {
        refused = true;
        return expired ? { value: { clusters }, ttlMs } : undefined;
      }
      clusters[cluster] = Math.max(now, seen ?? 0);
      return { value: { clusters }, ttlMs };
    });
    this.kvCas?.inc({ result: 'success' });
    if (refused) throw haErrors.tooManyClusters(tenant, cluster, maxClusters);
  }

  /** Every (tenant, cluster) election this distributor has seen, by tenant and cluster (the status page). */
  elections(): ({ tenant: string; cluster: string } & ReplicaDesc)[] {
    const prefix = this.opts.keyPrefix ?? 'ha-tracker/';
    const out: ({ tenant: string; cluster: string } & ReplicaDesc)[] = [];
    for (const [key, desc] of this.cache) {
      // Tenant ids have no "/" (validateTenantId); cluster names may.
      const rest = key.slice(prefix.length);
      const slash = rest.indexOf('/');
      out.push({ tenant: rest.slice(0, slash), cluster: rest.slice(slash + 1), ...desc });
    }
    return out.sort((a, b) => a.tenant.localeCompare(b.tenant) || a.cluster.localeCompare(b.cluster));
  }

  /** The replica this distributor last saw elected, if any (for status and tests). */
  elected(tenant: string, cluster: string): ReplicaDesc | undefined {
    return this.cache.get(`${this.opts.keyPrefix ?? 'ha-tracker/'}${tenant}/${cluster}`);
  }
}

/** Mimir's rule: the failover timeout must exceed the update timeout plus its jitter by at least 1s. */
export function validateTimeouts(updateMs: number, jitterMaxMs: number, failoverMs: number): void {
  if (jitterMaxMs < 0) throw new HaTrackerError('ha-config', 'internal', 'HA tracker max update timeout jitter must not be negative');
  const min = updateMs + jitterMaxMs + 1000;
  if (failoverMs < min) {
    throw new HaTrackerError(
      'ha-config',
      'internal',
      `HA tracker failover timeout (${failoverMs}ms) must be at least 1s greater than update timeout + max jitter (${min}ms); ` +
        'raise -distributor.ha-tracker.failover-timeout or lower -distributor.ha-tracker.update-timeout',
    );
  }
}
