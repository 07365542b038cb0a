// The ingester's side of ingest storage: consumes exactly one partition, in offset order, one
// batch at a time (the next is not fetched until onRecords resolved). Commits only when told to:
// the ingester commits what it persisted. Kafka is the write-ahead log.
import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { ClientSlot } from './client-slot.ts';
import { withDeadline } from './deadline.ts';
import { KafkaUnavailableError, PartitionReaderFailedError, unavailable } from './errors.ts';
import { createKafka } from './kafka-client.ts';
import { silentLogger, type Logger } from './logger.ts';
import { fetchPartitionOffsets, type PartitionOffsets } from './offsets.ts';
import { DEFAULT_TOPIC, fromMessage, type ConsumedRecord } from './record.ts';
import { singlePartitionAssigner } from './single-partition-assigner.ts';

export type StartFrom = 'earliest' | 'committed';

export interface PartitionReaderOptions {
  brokers: string[];
  /** Default 'ingest'. */
  topic?: string;
  partition: number;
  /** The instance id, e.g. ingester-zone-a-0; also where committed offsets live. */
  consumerGroup: string;
  /** Default: the consumer group. */
  clientId?: string;
  logger?: Logger;
  /**
   * Receives records in offset order. Must not throw for a bad record (count and skip it): a
   * throw stops the reader for good (PartitionReaderFailedError, onError).
   */
  onRecords: (batch: ConsumedRecord[]) => Promise<void> | void;
  /** 'earliest' replays the whole partition ignoring commits; 'committed' resumes (earliest when none). */
  startFrom: StartFrom;
  /** Called once if the reader fails for good; default logs. */
  onError?: (err: PartitionReaderFailedError) => void;
  /** Group session timeout (the broker's group.min.session.timeout.ms must allow it). Default 6000. */
  sessionTimeoutMs?: number;
  /** Default 1000; kafkajs heartbeats between batches, this reader also during onRecords. */
  heartbeatIntervalMs?: number;
  /**
   * How long a join waits for the group's previous members to rejoin: the successor of a
   * kill -9'd reader gets the partition after about this long. Default 3000.
   */
  rebalanceTimeoutMs?: number;
  /** Bound of start() (joining the group included). Default 60000. */
  startTimeoutMs?: number;
  /** Bound of admin requests and commits. Default 10000. */
  requestTimeoutMs?: number;
}

const MAX_BYTES_PER_PARTITION = 16 << 20;
const CAUGHT_UP_POLL_MS = 1000;

/** A deleted topic is believed only after this many checks this far apart (a restarted broker may not know it yet). */
const TOPIC_GONE_CHECKS = 3;
const TOPIC_GONE_CHECK_INTERVAL_MS = 3000;

export class PartitionReader {
  private readonly topic: string;
  private readonly logger: Logger;
  private readonly kafka: Kafka;
  private readonly admins: ClientSlot<Admin>;
  /** Group joins so far: each one after the first regained a lost membership. */
  private joins = 0;
  private checkingTopic = false;
  private respawning = false;
  private readonly requestTimeoutMs: number;
  private consumer: Consumer | undefined;
  private state: 'new' | 'starting' | 'running' | 'stopped' | 'failed' = 'new';
  private failure: PartitionReaderFailedError | undefined;
  /** Next offset to hand to onRecords. */
  private next = 0n;
  private readonly listeners = new Set<() => void>();
  private joinWaiter: { resolve: () => void; reject: (err: Error) => void } | undefined;

  private readonly opts: PartitionReaderOptions;

  constructor(opts: PartitionReaderOptions) {
    this.opts = opts;
    this.topic = opts.topic ?? DEFAULT_TOPIC;
    this.logger = opts.logger ?? silentLogger;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 10_000;
    this.kafka = createKafka({
      brokers: opts.brokers,
      clientId: opts.clientId ?? opts.consumerGroup,
      logger: this.logger,
      requestTimeoutMs: this.requestTimeoutMs,
    });
    this.admins = new ClientSlot(() => this.kafka.admin(), 'admin client');
  }

  /** Resolves once this reader owns the partition and consumption is running. */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`PartitionReader cannot start from state ${this.state}; create a new one`);
    this.state = 'starting';
    const timeoutMs = this.opts.startTimeoutMs ?? 60_000;
    const started = Date.now();
    try {
      this.next = await this.initialPosition();
      const joined = new Promise<void>((resolve, reject) => {
        this.joinWaiter = { resolve, reject };
      });
      // Awaited only after run(); a failure before that must not count as an unhandled rejection.
      joined.catch(() => undefined);
      const consumer = this.createConsumer();
      this.consumer = consumer;
      await withDeadline(
        (async () => {
          await this.runConsumer(consumer);
          await joined;
        })(),
        timeoutMs - (Date.now() - started),
        `joining consumer group ${this.opts.consumerGroup}`,
      );
    } catch (err) {
      this.joinWaiter = undefined;
      await this.stop();
      if (err instanceof PartitionReaderFailedError) throw err;
      throw unavailable(`starting the reader of ${this.topic}/${this.opts.partition}`, err);
    }
    if (this.failure !== undefined) throw this.failure;
    this.state = 'running';
    this.logger.info(
      { topic: this.topic, partition: this.opts.partition, group: this.opts.consumerGroup, from: this.next.toString(), ms: Date.now() - started },
      'kafka partition reader started',
    );
  }

  /** Leaves the group (so a successor gets the partition at once) and disconnects. */
  async stop(): Promise<void> {
    if (this.state !== 'failed') this.state = 'stopped';
    this.notify();
    const consumer = this.consumer;
    this.consumer = undefined;
    if (consumer !== undefined) {
      await withDeadline(consumer.disconnect(), this.requestTimeoutMs, 'disconnecting the consumer').catch((err: unknown) =>
        this.logger.warn({ err }, 'kafka consumer did not disconnect cleanly'),
      );
    }
    await this.admins.close();
  }

  /** The next offset to consume (one past the last record handed to onRecords). */
  position(): bigint {
    return this.next;
  }

  /** The partition's high watermark (the offset the next acknowledged record will get). */
  async endOffset(): Promise<bigint> {
    return (await this.partitionOffsets()).high;
  }

  /** Records acknowledged by Kafka but not yet handed to onRecords. */
  async lag(): Promise<bigint> {
    const lag = (await this.endOffset()) - this.next;
    return lag > 0n ? lag : 0n;
  }

  /**
   * Commits `nextOffset` for this group: the offset to resume from, i.e. the last persisted
   * record's offset + 1. Fails (retriably) while the group rebalances; the next commit covers it.
   */
  async commit(nextOffset: bigint): Promise<void> {
    const consumer = this.consumer;
    if (consumer === undefined || this.state !== 'running') throw new KafkaUnavailableError('the partition reader is not running');
    try {
      await withDeadline(
        consumer.commitOffsets([{ topic: this.topic, partition: this.opts.partition, offset: nextOffset.toString() }]),
        this.requestTimeoutMs,
        'committing the offset',
      );
    } catch (err) {
      throw unavailable(`committing offset ${nextOffset} of ${this.topic}/${this.opts.partition}`, err);
    }
  }

  /**
   * Resolves once the consumed position is within `maxLag` records of the partition's end offset,
   * fetched now and again each time it is reached (or every second), so writes that arrive during
   * replay are caught up too. Resolves at once for an empty partition.
   */
  async waitCaughtUp(maxLag: number, onProgress?: (consumed: bigint, end: bigint) => void): Promise<void> {
    const allowed = BigInt(Math.max(0, Math.floor(maxLag)));
    for (;;) {
      this.throwIfDone();
      const end = await this.endOffset();
      const consumed = this.next;
      onProgress?.(consumed, end);
      if (end - consumed <= allowed) return;
      await this.waitForPosition(end - allowed, CAUGHT_UP_POLL_MS);
    }
  }

  private async runConsumer(consumer: Consumer): Promise<void> {
    await consumer.connect();
    await consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: true,
      partitionsConsumedConcurrently: 1,
      eachBatch: (payload) => this.handleBatch(payload),
    });
  }

  /**
   * kafkajs gives a consumer up on errors that only mean Kafka was away too long
   * (no group coordinator, retries exhausted); the ingester still serves its
   * heads meanwhile, so a new consumer is started, with backoff, until one runs.
   * It resumes at this reader's own position (handleJoin seeks there).
   */
  private async respawn(cause: Error): Promise<void> {
    if (this.respawning) return;
    this.respawning = true;
    this.logger.warn({ err: cause, partition: this.opts.partition }, 'kafka consumer gave up; starting a new one');
    let delayMs = 1000;
    try {
      while (this.state === 'running' && this.failure === undefined) {
        const consumer = this.createConsumer();
        this.consumer = consumer;
        try {
          await withDeadline(this.runConsumer(consumer), this.requestTimeoutMs, 'restarting the consumer');
          this.logger.info({ partition: this.opts.partition }, 'kafka consumer restarted');
          return;
        } catch (err) {
          this.logger.warn({ err, partition: this.opts.partition, retryInMs: delayMs }, 'restarting the kafka consumer failed');
          await consumer.disconnect().catch(() => undefined);
          await new Promise((r) => setTimeout(r, delayMs));
          delayMs = Math.min(delayMs * 2, 10_000);
        }
      }
    } finally {
      this.respawning = false;
    }
  }

  private createConsumer(): Consumer {
    const sessionTimeout = this.opts.sessionTimeoutMs ?? 6000;
    const consumer = this.kafka.consumer({
      groupId: this.opts.consumerGroup,
      partitionAssigners: [singlePartitionAssigner(this.topic, this.opts.partition)],
      sessionTimeout,
      heartbeatInterval: this.opts.heartbeatIntervalMs ?? 1000,
      rebalanceTimeout: this.opts.rebalanceTimeoutMs ?? 3000,
      maxWaitTimeInMs: 1000,
      maxBytesPerPartition: MAX_BYTES_PER_PARTITION,
      allowAutoTopicCreation: false,
      retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 2000 },
    });
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => this.handleJoin(payload.memberAssignment));
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (payload.restart) {
        this.logger.warn({ err: payload.error, partition: this.opts.partition }, 'kafka consumer crashed; kafkajs restarts it');
        if (isUnknownTopic(payload.error)) void this.failIfTopicGone();
      } else if (this.state === 'running') {
        if (isUnknownTopic(payload.error)) void this.failIfTopicGone();
        void this.respawn(payload.error);
      } else {
        this.fail(new PartitionReaderFailedError(`kafka consumer gave up: ${payload.error.message}`, { cause: payload.error }));
      }
    });
    return consumer;
  }

  // Every (re)join resets kafkajs's fetch position to the committed offset; seeking to our own
  // position keeps consumption gapless and duplicate-free across rebalances and reconnects.
  private handleJoin(assignment: Record<string, number[]>): void {
    const owned = assignment[this.topic]?.includes(this.opts.partition) ?? false;
    if (!owned) {
      this.logger.warn(
        { group: this.opts.consumerGroup, partition: this.opts.partition },
        'partition not assigned to this reader; is another process running with the same instance id?',
      );
      return;
    }
    this.joins++;
    const where = { group: this.opts.consumerGroup, partition: this.opts.partition, joins: this.joins };
    // A second join means the group membership was lost (a session timeout, a broker failover) and regained.
    if (this.joins === 1) this.logger.info(where, `joined consumer group ${this.opts.consumerGroup}`);
    else this.logger.warn(where, `rejoined consumer group ${this.opts.consumerGroup}: its membership was lost (join ${this.joins})`);
    this.consumer?.seek({ topic: this.topic, partition: this.opts.partition, offset: this.next.toString() });
    this.joinWaiter?.resolve();
    this.joinWaiter = undefined;
  }

  private async handleBatch({ batch, heartbeat }: EachBatchPayload): Promise<void> {
    if (this.failure !== undefined || this.state === 'stopped') return;
    if (batch.topic !== this.topic || batch.partition !== this.opts.partition) return;
    const records: ConsumedRecord[] = [];
    for (const m of batch.messages) {
      const record = fromMessage(m);
      if (record.offset >= this.next) records.push(record);
    }
    if (records.length === 0) return;
    // kafkajs heartbeats only between batches; a long onRecords must not cost the partition.
    const beat = setInterval(() => heartbeat().catch(() => undefined), this.opts.heartbeatIntervalMs ?? 1000);
    try {
      await this.opts.onRecords(records);
    } catch (err) {
      this.fail(new PartitionReaderFailedError(`onRecords failed at offset ${records[0].offset}: ${(err as Error).message}`, { cause: err }));
      return;
    } finally {
      clearInterval(beat);
    }
    this.next = records[records.length - 1].offset + 1n;
    this.notify();
  }

  private fail(err: PartitionReaderFailedError): void {
    if (this.failure !== undefined || this.state === 'stopped') return;
    this.failure = err;
    this.state = 'failed';
    this.logger.error({ err, topic: this.topic, partition: this.opts.partition }, 'kafka partition reader failed');
    this.joinWaiter?.reject(err);
    this.joinWaiter = undefined;
    this.notify();
    // Not awaited here: disconnect waits for the batch handler we may be running in.
    setImmediate(() => void this.consumer?.disconnect().catch(() => undefined));
    this.opts.onError?.(err);
  }

  /**
   * kafkajs restarts a consumer whose topic was deleted forever, while nothing
   * can ever be read again: when the brokers confirm the topic is gone, fail.
   * A broker that just restarted may answer before it knows every topic, so the
   * absence must hold over several checks, each from a broker that does know
   * the consumer-offsets topic (its metadata is loaded).
   */
  private async failIfTopicGone(): Promise<void> {
    if (this.checkingTopic) return;
    this.checkingTopic = true;
    try {
      for (let check = 0; check < TOPIC_GONE_CHECKS; check++) {
        if (check > 0) await new Promise((r) => setTimeout(r, TOPIC_GONE_CHECK_INTERVAL_MS));
        if (this.state === 'stopped' || this.failure !== undefined) return;
        let topics: string[];
        try {
          topics = await this.withAdmin('listing topics', (admin) => admin.listTopics());
        } catch {
          return; // Brokers unreachable: a transient outage, which kafkajs' restarts ride out.
        }
        if (topics.includes(this.topic) || !topics.includes('__consumer_offsets')) return;
      }
      this.fail(new PartitionReaderFailedError(`topic "${this.topic}" no longer exists on the brokers; nothing more can be consumed from partition ${this.opts.partition}`));
    } finally {
      this.checkingTopic = false;
    }
  }

  private async initialPosition(): Promise<bigint> {
    const { low, high } = await this.partitionOffsets();
    if (this.opts.startFrom === 'earliest') return low;
    const committed = await this.committedOffset();
    if (committed === undefined) return low;
    if (committed < low || committed > high) {
      this.logger.warn(
        { committed: committed.toString(), low: low.toString(), high: high.toString() },
        'committed offset is outside the partition; replaying from the earliest offset',
      );
      return low;
    }
    return committed;
  }

  private async committedOffset(): Promise<bigint | undefined> {
    // A broker that just started answers "coordinator loading / not available" for a while: wait it out (bounded).
    let rows: Awaited<ReturnType<Admin['fetchOffsets']>> | undefined;
    for (let attempt = 0; rows === undefined; attempt++) {
      try {
        rows = await this.withAdmin('fetching the committed offset', (admin) =>
          admin.fetchOffsets({ groupId: this.opts.consumerGroup, topics: [this.topic] }),
        );
      } catch (err) {
        const type = (err as KafkaUnavailableError).kafkaType;
        if (attempt >= 40 || !['GROUP_LOAD_IN_PROGRESS', 'GROUP_COORDINATOR_NOT_AVAILABLE', 'NOT_COORDINATOR_FOR_GROUP'].includes(type ?? '')) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    const row = rows.find((t) => t.topic === this.topic)?.partitions.find((p) => p.partition === this.opts.partition);
    const offset = row === undefined ? -1n : BigInt(row.offset);
    return offset >= 0n ? offset : undefined;
  }

  private async partitionOffsets(): Promise<PartitionOffsets> {
    const offsets = await this.withAdmin('fetching partition offsets', (admin) => fetchPartitionOffsets(admin, this.topic));
    const mine = offsets.get(this.opts.partition);
    if (mine === undefined) {
      throw new KafkaUnavailableError(
        `topic ${this.topic} has no partition ${this.opts.partition} (it has ${offsets.size}); create more partitions or fix the instance id`,
      );
    }
    return mine;
  }

  private async withAdmin<T>(what: string, fn: (admin: Admin) => Promise<T>): Promise<T> {
    let admin: Admin | undefined;
    try {
      admin = await this.admins.get(this.requestTimeoutMs);
      return await withDeadline(fn(admin), this.requestTimeoutMs, what);
    } catch (err) {
      if (admin !== undefined) this.admins.discard(admin);
      throw unavailable(`${what} of ${this.topic}/${this.opts.partition}`, err);
    }
  }

  private throwIfDone(): void {
    if (this.state === 'new') throw new Error('PartitionReader.start() has not been called');
    if (this.failure !== undefined) throw this.failure;
    if (this.state === 'stopped') throw new KafkaUnavailableError('the partition reader was stopped');
  }

  /** Waits until position >= target, the reader stops or fails, or `pollMs` passes. */
  private waitForPosition(target: bigint, pollMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        if (this.next < target && this.failure === undefined && this.state !== 'stopped') return;
        cleanup();
      };
      const timer = setTimeout(() => cleanup(), pollMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.listeners.delete(done);
        resolve();
      };
      this.listeners.add(done);
      done();
    });
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

/** UNKNOWN_TOPIC_OR_PARTITION anywhere in a kafkajs error's cause chain. */
function isUnknownTopic(err: unknown): boolean {
  for (let e = err as { type?: string; cause?: unknown } | undefined; e !== undefined && e !== null; e = e.cause as typeof e) {
    if (e.type === 'UNKNOWN_TOPIC_OR_PARTITION') return true;
  }
  return false;
}
