// Partition offsets read through the admin API: a reader's end offset and the last produced
// offsets a querier waits for (read-after-write). Read-only: never commits or resets anything.
import type { Admin } from 'kafkajs';
import { withDeadline } from './deadline.ts';
import { unavailable } from './errors.ts';
import { createKafka } from './kafka-client.ts';
import { silentLogger } from './logger.ts';

export interface PartitionOffsets {
  /** First offset still stored (log start). */
  low: bigint;
  /** High watermark: the offset the next acknowledged record will get. */
  high: bigint;
}

export async function fetchPartitionOffsets(admin: Admin, topic: string): Promise<Map<number, PartitionOffsets>> {
  const rows = await admin.fetchTopicOffsets(topic);
  return new Map(rows.map((r) => [r.partition, { low: BigInt(r.low), high: BigInt(r.high) }]));
}

/**
 * For each partition of `topic`, the offset of the last record acknowledged by Kafka
 * (high watermark - 1; -1n for an empty partition). An ingester that has consumed up to and
 * including this offset has seen every write acknowledged before the call.
 */
export async function fetchLastProducedOffsets(
  brokers: string[],
  topic: string,
  timeoutMs = 10_000,
): Promise<Map<number, bigint>> {
  const kafka = createKafka({ brokers, clientId: 'strata-offsets', logger: silentLogger, requestTimeoutMs: timeoutMs, retries: 2 });
  const admin = kafka.admin();
  try {
    const offsets = await withDeadline(
      admin.connect().then(() => fetchPartitionOffsets(admin, topic)),
      timeoutMs,
      'fetching partition offsets',
    );
    return new Map([...offsets].map(([p, o]) => [p, o.high - 1n]));
  } catch (err) {
    throw unavailable(`fetching the last produced offsets of topic ${topic}`, err);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
