// Builds @platformatic/kafka clients the way this lib wants them: loopback-fast connects, request
// timeouts bounded by the caller's, the library's own retries as given (the writer retries itself).
// The library never prints (it logs through `debug`, off unless DEBUG names it).
import { Admin, Consumer, Producer, type BaseOptions } from '@platformatic/kafka';
import type { ProducerCompression } from './config.ts';
import type { KafkaSecurity } from './kafka-security.ts';

export interface ClientOptions {
  /** Bootstrap brokers, host:port, in the order a new client tries them. */
  brokers: string[];
  clientId: string;
  requestTimeoutMs: number;
  /** Default min(3s, requestTimeoutMs). */
  connectionTimeoutMs?: number;
  /** The library's own retries of one operation; default 5. */
  retries?: number;
  /** SASL, TLS and rack (-ingest-storage.kafka.sasl-*, tls-*, client-rack); default plaintext. */
  security?: KafkaSecurity;
  /** A producer's batch codec; default none. */
  compression?: ProducerCompression;
}

function baseOptions(opts: ClientOptions): BaseOptions {
  if (opts.brokers.length === 0) throw new Error('no Kafka brokers configured; set -ingest-storage.kafka.address');
  return {
    ...opts.security,
    clientId: opts.clientId,
    bootstrapBrokers: opts.brokers,
    connectTimeout: Math.min(opts.connectionTimeoutMs ?? 3000, opts.requestTimeoutMs),
    requestTimeout: opts.requestTimeoutMs,
    timeout: opts.requestTimeoutMs,
    retries: opts.retries ?? 5,
    retryDelay: 100,
    autocreateTopics: false,
  };
}

export function createAdmin(opts: ClientOptions): Admin {
  return new Admin(baseOptions(opts));
}

/**
 * A producer, not idempotent (as before: a retried write may land twice, the
 * ingester's head drops the duplicate samples), records to the partition each names.
 * `timeout` is also the broker's acks timeout of one produce request. Its `acks` option is ignored
 * by send() (2.12.1 defaults every send to acks=1 unless idempotent): each send must say acks=all.
 */
export function createProducer(opts: ClientOptions): Producer {
  return new Producer({
    ...baseOptions(opts),
    ...(opts.compression !== undefined && opts.compression !== 'none' ? { compression: opts.compression } : {}),
    idempotent: false,
    // The writer refreshes metadata and re-sends itself, per partition, within its deadline.
    repeatOnStaleMetadata: false,
  });
}

/** A consumer used only for its Fetch API: it never joins its group (the reader assigns its partition itself). */
export function createFetcher(opts: ClientOptions & { groupId: string }): Consumer {
  return new Consumer({ ...baseOptions(opts), groupId: opts.groupId });
}
