// A quiet kafkajs client for probing and administering the local cluster.
// It fails fast (no retries): callers loop until their own deadline.
import { Kafka, logLevel } from 'kafkajs';

export function probeClient(brokers: string[], requestTimeoutMs = 5000): Kafka {
  return new Kafka({
    clientId: 'strata-local-kafka',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: requestTimeoutMs,
    retry: { retries: 0 },
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
