// HA tracker errors: StrataErrors with a stable code and a kind (the push edge decides the status).

import { StrataError, type ErrorKind } from '@strata/errors';

export class HaTrackerError extends StrataError {
  constructor(name: string, kind: ErrorKind, message: string) {
    super(name, kind, message);
  }
}

export const haErrors = {
  /** bad-input (Mimir answers 400, not retried), because retrying cannot succeed until the limit or the clusters change. */
  tooManyClusters: (tenant: string, cluster: string, limit: number) =>
    new HaTrackerError(
      'too-many-ha-clusters',
      'bad-input',
      `the write request has been rejected because tenant ${JSON.stringify(tenant)} already has the maximum of ${limit} HA clusters and ` +
        `${JSON.stringify(cluster)} would be one more (err-strata-too-many-ha-clusters); nothing was written: raise ha_max_clusters for the ` +
        `tenant (-distributor.ha-tracker.max-clusters), or stop sending from clusters no longer used (they are forgotten 30m after their last push)`,
    ),
  kvUnavailable: (tenant: string, cluster: string, cause: string) =>
    new HaTrackerError(
      'ha-tracker-unavailable',
      'unavailable',
      `the HA tracker cannot check the elected replica of cluster "${cluster}" (tenant ${tenant}): ${cause}; ` + 'nothing was written, retry with backoff',
    ),
};
