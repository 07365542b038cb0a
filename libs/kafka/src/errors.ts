// Error registry of @strata/kafka: each error has a stable code, the HTTP status the API layer
// answers with and whether the client should retry. Messages say what failed and what to do.

export abstract class KafkaError extends Error {
  abstract readonly code: string;
  abstract readonly httpStatus: number;
  abstract readonly retriable: boolean;
}

/** Kafka is down, slow or refused the write; retriable, becomes a 5xx so agents retry. */
export class KafkaUnavailableError extends KafkaError {
  readonly code = 'err-strata-kafka-unavailable';
  readonly httpStatus = 503;
  readonly retriable = true;
  /** kafkajs's error type when the broker answered with an error (e.g. NOT_ENOUGH_REPLICAS). */
  readonly kafkaType: string | undefined;

  constructor(message: string, options?: { cause?: unknown; kafkaType?: string }) {
    super(message, { cause: options?.cause });
    this.name = 'KafkaUnavailableError';
    this.kafkaType = options?.kafkaType;
  }
}

/** The partition reader stopped for good (its record handler threw, or kafkajs gave up). */
export class PartitionReaderFailedError extends KafkaError {
  readonly code = 'err-strata-kafka-reader-failed';
  readonly httpStatus = 500;
  readonly retriable = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PartitionReaderFailedError';
  }
}

/** The broker's error type (e.g. NOT_ENOUGH_REPLICAS) of a kafkajs error or of what caused it. */
export function kafkaErrorType(err: unknown): string | undefined {
  for (let e = err as { type?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    if (typeof e.type === 'string') return e.type;
    e = e.cause as typeof e;
  }
  return undefined;
}

/** Wraps any kafkajs/network failure as KafkaUnavailableError, keeping the broker's error type. */
export function unavailable(what: string, err: unknown): KafkaUnavailableError {
  if (err instanceof KafkaUnavailableError) return err;
  const type = kafkaErrorType(err);
  const detail = (err as { message?: string } | undefined)?.message ?? String(err);
  return new KafkaUnavailableError(`${what}: ${detail}${type ? ` (${type})` : ''}; Kafka is down or overloaded, retry later`, {
    cause: err,
    kafkaType: type,
  });
}
