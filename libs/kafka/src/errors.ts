// Error registry of @strata/kafka: each error is a StrataError with a stable code
// and a kind (the edges decide what status that is). Messages say what failed and what to do.

import { StrataError } from '@strata/errors';

export abstract class KafkaError extends StrataError {}

/** Kafka is down, slow or refused the write; `unavailable`, so the edges answer with a retriable status. */
export class KafkaUnavailableError extends KafkaError {
  /** kafkajs's error type when the broker answered with an error (e.g. NOT_ENOUGH_REPLICAS). */
  readonly kafkaType: string | undefined;
  /** What happened to a write, where the writer knows: leader-lost, broker-unreachable, ack-timeout, ... */
  readonly reason: string | undefined;

  constructor(message: string, options?: { cause?: unknown; kafkaType?: string; reason?: string }) {
    super('kafka-unavailable', 'unavailable', message, { cause: options?.cause });
    this.name = 'KafkaUnavailableError';
    this.kafkaType = options?.kafkaType;
    this.reason = options?.reason;
  }
}

/** The partition reader stopped for good (its record handler threw, or kafkajs gave up). */
export class PartitionReaderFailedError extends KafkaError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('kafka-reader-failed', 'internal', message, options);
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
