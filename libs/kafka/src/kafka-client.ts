// Builds kafkajs clients the way this lib wants them: quiet (routed to our logger), loopback-fast
// connects, request timeouts bounded by the caller's.
import { Kafka, logLevel } from 'kafkajs';
import { kafkajsLogCreator, type Logger } from './logger.ts';

export function createKafka(opts: {
  brokers: string[];
  /** Where each new connection to the cluster starts (default `brokers` in order); kafkajs asks on every seed connect. */
  seedBrokers?: () => string[];
  clientId: string;
  logger: Logger;
  requestTimeoutMs: number;
  /** Default min(3s, requestTimeoutMs). */
  connectionTimeoutMs?: number;
  retries?: number;
}): Kafka {
  if (opts.brokers.length === 0) throw new Error('no Kafka brokers configured; set -ingest-storage.kafka.address');
  return new Kafka({
    clientId: opts.clientId,
    brokers: opts.seedBrokers ?? opts.brokers,
    logLevel: logLevel.WARN,
    logCreator: kafkajsLogCreator(opts.logger),
    connectionTimeout: Math.min(opts.connectionTimeoutMs ?? 3000, opts.requestTimeoutMs),
    requestTimeout: opts.requestTimeoutMs,
    enforceRequestTimeout: true,
    retry: { retries: opts.retries ?? 5, initialRetryTime: 100, maxRetryTime: 1000 },
  });
}
