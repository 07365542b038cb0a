// The distributor's side of ingest storage: produces one call's records (one per partition) with
// acks=all and resolves only once Kafka acknowledged all of them. Never waits longer than
// timeoutMs: a slow or absent Kafka is a KafkaUnavailableError, and the client is rebuilt.
import { Partitioners, type Admin, type Kafka, type Producer } from 'kafkajs';
import { ClientSlot } from './client-slot.ts';
import { withDeadline } from './deadline.ts';
import { KafkaUnavailableError, kafkaErrorType, unavailable } from './errors.ts';
import { createKafka } from './kafka-client.ts';
import { silentLogger, type Logger } from './logger.ts';
import { DEFAULT_TOPIC, toMessage, type PartitionRecord } from './record.ts';

export interface IngestWriterOptions {
  brokers: string[];
  /** Default 'ingest'. */
  topic?: string;
  clientId: string;
  /** Upper bound of one write (connect + produce + acks), and of start(). */
  timeoutMs: number;
  logger?: Logger;
  /** How long a fetched partition count is trusted before it is refreshed (in the background); default 10s. */
  partitionCountMaxAgeMs?: number;
}

// Errors about the request itself: the producer is healthy, rebuilding it would not help.
const REQUEST_ERRORS = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'CORRUPT_MESSAGE']);

export class IngestWriter {
  private readonly topic: string;
  private readonly logger: Logger;
  private readonly kafka: Kafka;
  private readonly producers: ClientSlot<Producer>;
  private readonly admins: ClientSlot<Admin>;
  private state: 'new' | 'running' | 'stopped' = 'new';
  private partitions: { count: number; fetchedAt: number } | undefined;
  private refreshing: Promise<number> | undefined;

  constructor(private readonly opts: IngestWriterOptions) {
    this.topic = opts.topic ?? DEFAULT_TOPIC;
    this.logger = opts.logger ?? silentLogger;
    this.kafka = createKafka({
      brokers: opts.brokers,
      clientId: opts.clientId,
      logger: this.logger,
      requestTimeoutMs: opts.timeoutMs,
    });
    this.producers = new ClientSlot(
      () =>
        this.kafka.producer({
          allowAutoTopicCreation: false,
          idempotent: false,
          createPartitioner: Partitioners.DefaultPartitioner,
        }),
      'producer',
    );
    this.admins = new ClientSlot(() => this.kafka.admin(), 'admin client');
  }

  /** Connects and checks the topic exists; rejects with KafkaUnavailableError if Kafka cannot be reached in time. */
  async start(): Promise<void> {
    if (this.state === 'stopped') throw new Error('IngestWriter cannot be restarted; create a new one');
    this.state = 'running';
    try {
      await this.producers.get(this.opts.timeoutMs);
    } catch (err) {
      throw unavailable(`connecting to Kafka at ${this.opts.brokers.join(',')}`, err);
    }
    const count = await this.partitionCount();
    this.logger.info({ topic: this.topic, partitions: count }, 'kafka writer started');
  }

  async stop(): Promise<void> {
    this.state = 'stopped';
    await Promise.all([this.producers.close(), this.admins.close()]);
  }

  /**
   * Produces `records` for `tenant` in one send with acks=all. Resolves once every record is
   * acknowledged; rejects with KafkaUnavailableError on any failure or after timeoutMs.
   */
  async write(tenant: string, records: PartitionRecord[]): Promise<void> {
    if (this.state !== 'running') throw new KafkaUnavailableError('the Kafka writer is not running');
    if (records.length === 0) return;
    const started = Date.now();
    const left = (): number => Math.max(1, this.opts.timeoutMs - (Date.now() - started));
    let producer: Producer;
    try {
      producer = await this.producers.get(left());
    } catch (err) {
      throw unavailable('connecting to Kafka', err);
    }
    try {
      // One send's records for a partition form one batch, which the broker bounds by
      // message.max.bytes: a partition's next record (split for size) goes in the next send.
      for (const wave of waves(records)) {
        const send = producer.send({
          topic: this.topic,
          acks: -1,
          timeout: left(),
          messages: wave.map((r) => toMessage(tenant, r)),
        });
        const acked = await withDeadline(send, left(), 'producing to Kafka');
        this.checkAllAcked(wave, acked);
      }
    } catch (err) {
      const type = kafkaErrorType(err);
      if (type === undefined || !REQUEST_ERRORS.has(type)) this.producers.discard(producer);
      throw unavailable(`writing ${records.length} record(s) for tenant ${tenant} to topic ${this.topic}`, err);
    }
  }

  // kafkajs silently drops (and "acks") records for partitions missing from its metadata, e.g.
  // partitions added to the topic since the producer last refreshed. Only the response tells.
  private checkAllAcked(records: PartitionRecord[], acked: { partition: number }[]): void {
    const got = new Set(acked.map((a) => a.partition));
    const missing = [...new Set(records.map((r) => r.partition))].filter((p) => !got.has(p));
    if (missing.length === 0) return;
    const known = this.partitions === undefined ? 'unknown' : String(this.partitions.count);
    throw new KafkaUnavailableError(
      `partition(s) ${missing.join(',')} of topic ${this.topic} are not in the producer's metadata (the topic has ${known} partitions); ` +
        'nothing was written to them. If partitions were just added this clears up on retry; otherwise the partition ring and the topic disagree',
      { kafkaType: 'UNKNOWN_TOPIC_OR_PARTITION' },
    );
  }

  /**
   * The topic's partition count from metadata. A cached value is returned at once and refreshed
   * in the background when older than partitionCountMaxAgeMs; the first call waits for Kafka.
   */
  async partitionCount(): Promise<number> {
    const cached = this.partitions;
    const maxAge = this.opts.partitionCountMaxAgeMs ?? 10_000;
    if (cached !== undefined) {
      if (Date.now() - cached.fetchedAt > maxAge) {
        this.refreshPartitionCount().catch((err: unknown) =>
          this.logger.warn({ err, topic: this.topic }, 'refreshing the partition count failed; using the last one'),
        );
      }
      return cached.count;
    }
    return this.refreshPartitionCount();
  }

  private refreshPartitionCount(): Promise<number> {
    this.refreshing ??= this.fetchPartitionCount().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async fetchPartitionCount(): Promise<number> {
    const timeout = this.opts.timeoutMs;
    let admin: Admin | undefined;
    try {
      admin = await this.admins.get(timeout);
      const { topics } = await withDeadline(admin.fetchTopicMetadata({ topics: [this.topic] }), timeout, 'fetching metadata');
      const count = topics[0]?.partitions.length ?? 0;
      if (count === 0) throw new Error(`topic ${this.topic} has no partitions`);
      this.partitions = { count, fetchedAt: Date.now() };
      return count;
    } catch (err) {
      if (admin !== undefined) this.admins.discard(admin);
      if (kafkaErrorType(err) === 'UNKNOWN_TOPIC_OR_PARTITION') {
        throw new KafkaUnavailableError(`topic ${this.topic} does not exist; create it or fix -ingest-storage.kafka.topic`, {
          cause: err,
          kafkaType: 'UNKNOWN_TOPIC_OR_PARTITION',
        });
      }
      throw unavailable(`fetching the partition count of topic ${this.topic}`, err);
    }
  }
}

/** Splits records so no partition appears twice in one send; order within a partition is kept. */
export function waves(records: PartitionRecord[]): PartitionRecord[][] {
  const out: PartitionRecord[][] = [];
  const seen = new Map<number, number>();
  for (const r of records) {
    const i = seen.get(r.partition) ?? 0;
    seen.set(r.partition, i + 1);
    (out[i] ??= []).push(r);
  }
  return out;
}
