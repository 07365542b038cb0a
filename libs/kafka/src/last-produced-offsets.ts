// The querier's side of read-after-write: the offset of the last record Kafka acknowledged on
// each partition, read through one long-lived admin client (a query must not pay for a connect).
import type { Admin } from '@platformatic/kafka';
import { ClientSlot } from './client-slot.ts';
import { withDeadline } from './deadline.ts';
import { unavailable } from './errors.ts';
import { createAdmin } from './kafka-client.ts';
import type { KafkaSecurity } from './kafka-security.ts';
import type { Logger } from './logger.ts';
import { fetchPartitionOffsets } from './offsets.ts';
import { DEFAULT_TOPIC } from './record.ts';

export interface LastProducedOffsetsOptions {
  brokers: string[];
  /** SASL, TLS and rack (kafkaSecurity of the config); default plaintext. */
  security?: KafkaSecurity;
  topic?: string;
  clientId?: string;
  logger?: Logger;
  /** Bound of one fetch, connecting included. Default 10000. */
  requestTimeoutMs?: number;
}

export class LastProducedOffsetsReader {
  private readonly admins: ClientSlot<Admin>;
  private readonly topic: string;
  private readonly timeoutMs: number;

  constructor(opts: LastProducedOffsetsOptions) {
    this.topic = opts.topic ?? DEFAULT_TOPIC;
    this.timeoutMs = opts.requestTimeoutMs ?? 10_000;
    const clientId = opts.clientId ?? 'strata-querier-offsets';
    this.admins = new ClientSlot({
      create: () => createAdmin({ brokers: opts.brokers, clientId, requestTimeoutMs: this.timeoutMs, retries: 2, security: opts.security }),
      ready: (admin) => admin.metadata({ topics: [] }),
      what: 'admin client',
    });
  }

  /**
   * Per partition, the offset of the last record acknowledged before this call (high watermark
   * - 1; -1n for an empty partition). An ingester that consumed it has every acknowledged write.
   */
  async fetch(): Promise<Map<number, bigint>> {
    let admin: Admin | undefined;
    try {
      admin = await this.admins.get(this.timeoutMs);
      const offsets = await withDeadline(fetchPartitionOffsets(admin, this.topic), this.timeoutMs, 'fetching partition offsets');
      return new Map([...offsets].map(([p, o]) => [p, o.high - 1n]));
    } catch (err) {
      if (admin !== undefined) this.admins.discard(admin);
      throw unavailable(`fetching the last produced offsets of topic ${this.topic}`, err);
    }
  }

  async stop(): Promise<void> {
    await this.admins.close();
  }
}
