// Quiet @platformatic/kafka clients for probing and administering the local cluster.
// They fail fast (no retries): callers loop until their own deadline.
import { Admin, Producer, type BaseOptions } from '@platformatic/kafka';

/** How a client reaches a cluster that authenticates or encrypts (SASL, TLS); default plaintext. */
export type ConnectionSecurity = Pick<BaseOptions, 'sasl' | 'tls' | 'tlsServerName'>;

function options(brokers: string[], requestTimeoutMs: number, security?: ConnectionSecurity) {
  return {
    ...security,
    clientId: 'strata-local-kafka',
    bootstrapBrokers: brokers,
    connectTimeout: 1000,
    requestTimeout: requestTimeoutMs,
    timeout: requestTimeoutMs,
    retries: 0,
    autocreateTopics: false,
  };
}

export function probeAdmin(brokers: string[], requestTimeoutMs = 5000, security?: ConnectionSecurity): Admin {
  return new Admin(options(brokers, requestTimeoutMs, security));
}

export function probeProducer(brokers: string[], requestTimeoutMs = 5000): Producer {
  // Each send says its acks: the producer's own `acks` option does not reach send().
  return new Producer({ ...options(brokers, requestTimeoutMs), idempotent: false });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
