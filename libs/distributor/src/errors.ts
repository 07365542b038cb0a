// Every error the distributor itself raises, as StrataErrors: a stable code, a
// kind (the push edge's tables in push-status.ts turn it into a status) and a
// message that says what was wrong and what to do.

import { StrataError } from '@strata/errors';

/** Whole seconds in [1, 60]: long enough to matter, short enough that a sender keeps up. */
function retryAfter(seconds: number): number {
  return Math.min(60, Math.max(1, Math.ceil(seconds)));
}

export const errors = {
  /** Not an error for the sender: Mimir answers a deduplicated HA replica with 202 so it does not retry. */
  haReplicaNotElected: (cluster: string, replica: string, elected: string) =>
    new StrataError(
      'ha-replica-not-elected',
      'deduplicated',
      `samples from replica "${replica}" of HA cluster "${cluster}" were dropped: replica "${elected}" is the elected one ` +
        `(err-strata-ha-replica-not-elected); nothing to do, this replica takes over if "${elected}" stops pushing for the failover timeout`,
    ),
  /** Kafka did not acknowledge a write; the cause is the Kafka client's error. */
  kafkaUnavailable: (cause: Error) =>
    new StrataError(
      'kafka-unavailable',
      'unavailable',
      `the write was not acknowledged by Kafka (${cause.message}); retry it with backoff, that is safe: ` +
        'nothing of it counts as written, and a sample that reached Kafka anyway is stored once',
      { cause },
    ),
  notAByteBody: (expected: string) => new StrataError('bad-request', 'bad-input', `expected ${expected}`),
  rateLimited: (tenant: string, items: number, rate: number, burst: number) =>
    new StrataError(
      'ingestion-rate-limited',
      'limit',
      `the request has been rejected because tenant ${JSON.stringify(tenant)} exceeded its ingestion rate limit of ${rate} samples/s ` +
        `with a burst of ${burst} (this request: ${items} samples, exemplars and metadata; the limit applies per distributor) ` +
        `(err-strata-ingestion-rate-limited); nothing was written: retry later, send less, or raise ingestion_rate / ingestion_burst_size ` +
        `for the tenant in the runtime config (-distributor.ingestion-rate-limit, -distributor.ingestion-burst-size)`,
      // The bucket refills at `rate`: this request fits again after at most items / rate seconds.
      { retryAfterSeconds: retryAfter(rate > 0 ? items / rate : 60) },
    ),
  burstExceeded: (tenant: string, items: number, burst: number) =>
    new StrataError(
      'ingestion-rate-limited',
      'limit',
      `the request has been rejected because its ${items} samples, exemplars and metadata exceed tenant ${JSON.stringify(tenant)}'s ` +
        `ingestion burst size of ${burst}, so it can never be accepted (err-strata-ingestion-rate-limited); nothing was written: send smaller ` +
        `requests (remote_write queue_config.max_samples_per_send) or raise ingestion_burst_size for the tenant (-distributor.ingestion-burst-size)`,
    ),
  tooManySeries: (series: number, limit: number, what: string) =>
    new StrataError(
      'too-many-series-per-request',
      'too-large',
      `the request holds ${series} ${what}, more than the ${limit} a push may carry (err-strata-too-many-series-per-request); ` +
        `nothing was written: send smaller batches (remote_write queue_config.max_samples_per_send, the OTLP exporter's batch size) ` +
        `or raise -distributor.max-series-per-request`,
    ),
  ingesterOverLimit: (partition: number, reason: string) =>
    new StrataError(
      'ingester-over-limit',
      'unavailable',
      `the write request has been rejected because partition ${partition}'s ingester is over an instance limit (${reason}) ` +
        `(err-strata-ingester-over-limit); nothing was written: retry with backoff (writes resume once blocks are cut or memory is freed), ` +
        `add partitions, or raise -server.memory-limit`,
    ),
  maxInflightPushRequests: (limit: number) =>
    new StrataError(
      'distributor-max-inflight-push-requests',
      'unavailable',
      `the write request has been rejected because the distributor already handles its limit of ${limit} push requests at once ` +
        `(err-strata-distributor-max-inflight-push-requests); nothing was written: retry with backoff, add distributors, or raise ` +
        `-distributor.instance-limits.max-inflight-push-requests`,
    ),
  maxInflightPushRequestsBytes: (limit: number, inflight: number, body: number) =>
    new StrataError(
      'distributor-max-inflight-push-requests-bytes',
      'unavailable',
      `the write request has been rejected because its ${body} bytes on top of the ${inflight} bytes of push requests in flight exceed ` +
        `the distributor's limit of ${limit} bytes (err-strata-distributor-max-inflight-push-requests-bytes); nothing was written: ` +
        `retry with backoff, send smaller requests, add distributors, or raise -distributor.instance-limits.max-inflight-push-requests-bytes`,
    ),
};
