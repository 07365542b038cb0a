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
  kvUnavailable: (tenant: string, cluster: string, cause: string) =>
    new HaTrackerError(
      'err-strata-ha-tracker-unavailable',
      503,
      `the HA tracker cannot check the elected replica of cluster "${cluster}" (tenant ${tenant}): ${cause}; ` +
        'nothing was written, retry with backoff',
    ),
};
