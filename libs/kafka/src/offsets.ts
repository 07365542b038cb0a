// Partition offsets read through the admin API: a reader's end offset and the last produced
// offsets a querier waits for (read-after-write). Read-only: never commits or resets anything.
import { ListOffsetTimestamps, type Admin } from '@platformatic/kafka';
import { withDeadline } from './deadline.ts';
import { unavailable } from './errors.ts';
import { createAdmin } from './kafka-client.ts';

export interface PartitionOffsets {
  /** First offset still stored (log start). */
  low: bigint;
  /** High watermark: the offset the next acknowledged record will get. */
  high: bigint;
}

/** Every partition's log start and high watermark (ListOffsets at each partition's leader). */
export async function fetchPartitionOffsets(admin: Admin, topic: string): Promise<Map<number, PartitionOffsets>> {
  const md = await admin.metadata({ topics: [topic], forceUpdate: true });
  const count = md.topics.get(topic)?.partitionsCount ?? 0;
  if (count === 0) return new Map();
  const at = (timestamp: bigint) =>
    admin.listOffsets({ topics: [{ name: topic, partitions: Array.from({ length: count }, (_, partitionIndex) => ({ partitionIndex, timestamp })) }] });
  const [earliest, latest] = await Promise.all([at(ListOffsetTimestamps.EARLIEST), at(ListOffsetTimestamps.LATEST)]);
  const low = new Map<number, bigint>();
  for (const t of earliest) if (t.name === topic) for (const p of t.partitions) low.set(p.partitionIndex, p.offset);
  const out = new Map<number, PartitionOffsets>();
  for (const t of latest) {
    if (t.name !== topic) continue;
    for (const p of t.partitions) out.set(p.partitionIndex, { low: low.get(p.partitionIndex) ?? 0n, high: p.offset });
  }
  return new Map([...out].sort((a, b) => a[0] - b[0]));
}

/**
 * For each partition of `topic`, the offset of the last record acknowledged by Kafka
 * (high watermark - 1; -1n for an empty partition). An ingester that has consumed up to and
 * including this offset has seen every write acknowledged before the call.
 */
export async function fetchLastProducedOffsets(brokers: string[], topic: string, timeoutMs = 10_000): Promise<Map<number, bigint>> {
  const admin = createAdmin({ brokers, clientId: 'strata-offsets', requestTimeoutMs: timeoutMs, retries: 2 });
  try {
    const offsets = await withDeadline(fetchPartitionOffsets(admin, topic), timeoutMs, 'fetching partition offsets');
    return new Map([...offsets].map(([p, o]) => [p, o.high - 1n]));
  } catch (err) {
    throw unavailable(`fetching the last produced offsets of topic ${topic}`, err);
  } finally {
    await admin.close().catch(() => undefined);
  }
}
