// Every error the distributor answers with: a stable code, an HTTP status,
// and whether the sender should retry.

export class DistributorError extends Error {
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
  kafkaUnavailable: (cause: string) =>
    new DistributorError(
      'err-strata-kafka-unavailable',
      503,
      `the write was not acknowledged by Kafka (${cause}); nothing is lost on retry, retry with backoff`,
    ),
};
