// HA tracker errors: a stable code, an HTTP status, whether to retry.

export class HaTrackerError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly retriable = status >= 500,
  ) {
    super(message);
  }
}

export const haErrors = {
  /** Mimir's answer: 400 (not retried), because retrying cannot succeed until the limit or the clusters change. */
  tooManyClusters: (tenant: string, cluster: string, limit: number) =>
    new HaTrackerError(
      'err-strata-too-many-ha-clusters',
      400,
      `the write request has been rejected because tenant ${JSON.stringify(tenant)} already has the maximum of ${limit} HA clusters and ` +
        `${JSON.stringify(cluster)} would be one more (err-strata-too-many-ha-clusters); nothing was written: raise ha_max_clusters for the ` +
        `tenant (-distributor.ha-tracker.max-clusters), or stop sending from clusters no longer used (they are forgotten 30m after their last push)`,
    ),
  kvUnavailable: (tenant: string, cluster: string, cause: string) =>
    new HaTrackerError(
      'err-strata-ha-tracker-unavailable',
      503,
      `the HA tracker cannot check the elected replica of cluster "${cluster}" (tenant ${tenant}): ${cause}; ` +
        'nothing was written, retry with backoff',
    ),
};
