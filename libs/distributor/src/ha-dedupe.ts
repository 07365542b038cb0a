// The distributor's HA step, before validation and rate limiting (Mimir's
// order): a request whose first series carries both HA labels is checked
// against the HA tracker; a non-elected replica's request is answered 202 and
// nothing of it is written; an accepted one loses the replica label on every
// series. A tracker that cannot decide fails the request (503), never accepts it.

import { Counter, type Registry } from 'prom-client';
import type { Label } from '@strata/model';
import { findHaLabels, type HaReplicaChecker } from '@strata/ha-tracker';
import type { TenantLimits } from '@strata/limits';
import { errors } from './errors.ts';

interface Counted {
  labels: Label[];
  samples: number;
  histograms: number;
}

export class HaDedupe {
  private readonly deduped: Counter<'tenant' | 'cluster'>;

  private readonly tracker: HaReplicaChecker;

  constructor(tracker: HaReplicaChecker, registry: Registry) {
    this.tracker = tracker;
    this.deduped = new Counter({
      name: 'strata_distributor_deduped_samples_total',
      help: 'Samples of non-elected HA replicas, answered 202 and dropped.',
      labelNames: ['tenant', 'cluster'],
      registers: [registry],
    });
  }

  /**
   * The label to remove from the request's series (undefined: keep them as
   * sent). Throws a `deduplicated` StrataError for a non-elected replica (answered 202), the
   * tracker's bad-input for a cluster over ha_max_clusters, unavailable when it cannot reach its KV store.
   */
  async check(tenant: string, limits: Readonly<TenantLimits>, series: readonly Counted[]): Promise<string | undefined> {
    if (!limits.acceptHaSamples || series.length === 0) return undefined;
    const { cluster, replica } = findHaLabels(series[0].labels, limits.haClusterLabel, limits.haReplicaLabel);
    if (cluster === '' || replica === '') return undefined;
    const decision = await this.tracker.checkReplica(tenant, cluster, replica, limits.haMaxClusters);
    if (!decision.accepted) {
      let samples = 0;
      for (const s of series) samples += s.samples + s.histograms;
      this.deduped.inc({ tenant, cluster }, samples);
      throw errors.haReplicaNotElected(cluster, replica, decision.elected);
    }
    return limits.haReplicaLabel;
  }
}
