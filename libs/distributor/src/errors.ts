// Every error the distributor answers with: a stable code, an HTTP status,
// and whether the sender should retry.

import type { WrittenCounts } from './distributor.ts';

export class DistributorError extends Error {
  /** Set for remote write 2.0 requests: the Written headers go out on failures too. */
  written?: WrittenCounts;

  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly retriable = status >= 500 || status === 429,
  ) {
    super(message);
  }
}

export const errors = {
  /** Not an error for the sender: Mimir answers a deduplicated HA replica with 202 so it does not retry. */
  haReplicaNotElected: (cluster: string, replica: string, elected: string) =>
    new DistributorError(
      'err-strata-ha-replica-not-elected',
      202,
      `samples from replica "${replica}" of HA cluster "${cluster}" were dropped: replica "${elected}" is the elected one ` +
        `(err-strata-ha-replica-not-elected); nothing to do, this replica takes over if "${elected}" stops pushing for the failover timeout`,
      false,
    ),
  kafkaUnavailable: (cause: string) =>
    new DistributorError(
      'err-strata-kafka-unavailable',
      503,
      `the write was not acknowledged by Kafka (${cause}); nothing is lost on retry, retry with backoff`,
    ),
  rateLimited: (tenant: string, items: number, rate: number, burst: number) =>
    new DistributorError(
      'err-strata-ingestion-rate-limited',
      429,
      `the request has been rejected because tenant ${JSON.stringify(tenant)} exceeded its ingestion rate limit of ${rate} samples/s ` +
        `with a burst of ${burst} (this request: ${items} samples, exemplars and metadata; the limit applies per distributor) ` +
        `(err-strata-ingestion-rate-limited); nothing was written: retry later, send less, or raise ingestion_rate / ingestion_burst_size ` +
        `for the tenant in the runtime config (-distributor.ingestion-rate-limit, -distributor.ingestion-burst-size)`,
    ),
  burstExceeded: (tenant: string, items: number, burst: number) =>
    new DistributorError(
      'err-strata-ingestion-rate-limited',
      429,
      `the request has been rejected because its ${items} samples, exemplars and metadata exceed tenant ${JSON.stringify(tenant)}'s ` +
        `ingestion burst size of ${burst}, so it can never be accepted (err-strata-ingestion-rate-limited); nothing was written: send smaller ` +
        `requests (remote_write queue_config.max_samples_per_send) or raise ingestion_burst_size for the tenant (-distributor.ingestion-burst-size)`,
    ),
};
