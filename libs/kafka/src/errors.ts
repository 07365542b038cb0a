// Error registry of @strata/kafka: each error is a StrataError with a stable code
// and a kind (the edges decide what status that is). Messages say what failed and what to do.

import { StrataError } from '@strata/errors';

export abstract class KafkaError extends StrataError {}

/** Kafka is down, slow or refused the write; `unavailable`, so the edges answer with a retriable status. */
export class KafkaUnavailableError extends KafkaError {
  /** The broker's error code name when it answered with an error (e.g. NOT_ENOUGH_REPLICAS). */
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

/** The partition reader stopped for good (its record handler threw, or its topic is gone). */
export class PartitionReaderFailedError extends KafkaError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('kafka-reader-failed', 'internal', message, options);
    this.name = 'PartitionReaderFailedError';
  }
}

interface ErrorLike {
  message?: unknown;
  cause?: unknown;
  /** @platformatic/kafka's MultipleErrors (an AggregateError): one per attempt or per broker. */
  errors?: unknown;
}

/**
 * `err` and what it wraps, outermost first: `cause`s and the `errors` of an AggregateError
 * (@platformatic/kafka reports a failed retry loop or a failed multi-broker request as
 * MultipleErrors holding each attempt's error). Bounded, cycle-safe.
 */
export function errorChain(err: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0 && out.length < 32) {
    const e = queue.shift();
    if (e === null || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    out.push(e as Record<string, unknown>);
    const { cause, errors } = e as ErrorLike;
    if (Array.isArray(errors)) queue.push(...(errors as unknown[]));
    if (cause !== undefined) queue.push(cause);
  }
  return out;
}

const UNKNOWN_TOPIC = /^Unknown topic /;

/**
 * The broker's error code name (e.g. NOT_ENOUGH_REPLICAS) of a @platformatic/kafka error or of
 * what it wraps; the last attempt's wins. The client's own "Unknown topic" (a metadata answer
 * without the topic) is UNKNOWN_TOPIC_OR_PARTITION.
 */
export function kafkaErrorType(err: unknown): string | undefined {
  let type: string | undefined;
  for (const e of errorChain(err)) {
    if (typeof e.apiId === 'string' && e.apiId !== '') type = e.apiId;
    else if (typeof e.message === 'string' && UNKNOWN_TOPIC.test(e.message)) type ??= 'UNKNOWN_TOPIC_OR_PARTITION';
  }
  return type;
}

/** The innermost message of an error, where the client says what actually happened. */
export function innermostMessage(err: unknown): string {
  const chain = errorChain(err);
  for (let i = chain.length - 1; i >= 0; i--) {
    const m = chain[i].message;
    if (typeof m === 'string' && m !== '') return m;
  }
  return String(err);
}

/** Wraps any Kafka client or network failure as KafkaUnavailableError, keeping the broker's error type. */
export function unavailable(what: string, err: unknown): KafkaUnavailableError {
  if (err instanceof KafkaUnavailableError) return err;
  const type = kafkaErrorType(err);
  const outer = (err as { message?: string } | undefined)?.message ?? String(err);
  const inner = innermostMessage(err);
  const detail = inner === outer ? outer : `${outer}: ${inner}`;
  return new KafkaUnavailableError(`${what}: ${detail}${type ? ` (${type})` : ''}; ${whatToDo(type, inner)}`, {
    cause: err,
    kafkaType: type,
  });
}

/** The hint at the end of an unavailable error: credentials and certificates do not fix themselves. */
function whatToDo(type: string | undefined, inner: string): string {
  if (type !== undefined && /SASL/.test(type)) return 'check -ingest-storage.kafka.sasl-mechanism, -sasl-username and -sasl-password';
  if (/certificate|self[- ]signed|\bCERT_|\bSSL\b|\bTLS\b|handshake/i.test(inner)) return "check -ingest-storage.kafka.tls-* and the brokers' certificates";
  return 'Kafka is down or overloaded, retry later';
}
