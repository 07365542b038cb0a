// The ingester's side of ingest storage: consumes exactly one partition, in offset order, one
// batch at a time (the next is not fetched until onRecords resolved). Commits only when told to:
// the ingester commits what it persisted. Kafka is the write-ahead log.
//
// As in Mimir, the partition is assigned by the reader itself, not by a group rebalance: it fetches
// from the partition's leader at its own position, and its consumer group (the instance id) only
// holds the committed offset (OffsetCommit outside any generation). So no rebalance ever moves or
// rewinds the position, and a restarted ingester reads at once.
import type { Admin, Consumer } from '@platformatic/kafka';
import { ClientSlot } from './client-slot.ts';
import { withDeadline } from './deadline.ts';
import { KafkaUnavailableError, PartitionReaderFailedError, innermostMessage, kafkaErrorType, unavailable } from './errors.ts';
import { createAdmin, createFetcher } from './kafka-client.ts';
import type { KafkaSecurity } from './kafka-security.ts';
import { silentLogger, type Logger } from './logger.ts';
import { fetchPartitionOffsets, type PartitionOffsets } from './offsets.ts';
import { DEFAULT_TOPIC, fromMessage, type ConsumedRecord } from './record.ts';

export type StartFrom = 'earliest' | 'committed';

export interface PartitionReaderOptions {
  brokers: string[];
  /** SASL, TLS and rack of every connection (kafkaSecurity of the config); default plaintext. */
  security?: KafkaSecurity;
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
  /**
   * Records [from, to) left the partition (retention deleted them) before this reader read them:
   * they are skipped, since they can never be read, and this says so (a metric, an alert).
   */
  onMissedRecords?: (from: bigint, to: bigint) => void;
  /** Called once if the reader fails for good; default logs. */
  onError?: (err: PartitionReaderFailedError) => void;
  /** Bound of start(). Default 60000. */
  startTimeoutMs?: number;
  /** Bound of admin requests and commits. Default 10000. */
  requestTimeoutMs?: number;
}

const MAX_BYTES_PER_PARTITION = 16 << 20;
const MAX_WAIT_MS = 1000;
/**
 * While records keep coming, a fetch waits up to this long for BUSY_MIN_BYTES rather than
 * returning each produced record on its own: one fetch per linger instead of one per push, which
 * is most of the broker's CPU under a steady load. Idle, the fetch long-polls for the first byte.
 */
const BUSY_MAX_WAIT_MS = 50;
const BUSY_MIN_BYTES = 1 << 20;
const CAUGHT_UP_POLL_MS = 1000;
/** Backoff between failed fetches (leader moved, broker down); a new leader is found within the first few. */
const FETCH_BACKOFF_MIN_MS = 50;
/** How long a replica the leader named for this client's rack is fetched from before asking the leader again (Kafka's metadata.max.age.ms). */
const PREFERRED_REPLICA_TTL_MS = 5 * 60_000;
const FETCH_BACKOFF_MAX_MS = 1000;
/** After this many failed fetches in a row the fetch client is rebuilt (fresh connections, seed brokers). */
const REBUILD_AFTER_FAILURES = 5;
const FAILURE_LOG_INTERVAL_MS = 10_000;

/** A deleted topic is believed only after this many checks this far apart (a restarted broker may not know it yet). */
const TOPIC_GONE_CHECKS = 3;
const TOPIC_GONE_CHECK_INTERVAL_MS = 3000;

const COORDINATOR_LOADING = ['COORDINATOR_LOAD_IN_PROGRESS', 'COORDINATOR_NOT_AVAILABLE', 'NOT_COORDINATOR'];
const TOPIC_UNKNOWN = ['UNKNOWN_TOPIC_OR_PARTITION', 'UNKNOWN_TOPIC_ID'];
const IS_CONTROL_BATCH = 0b10_0000;

export class PartitionReader {
  private readonly topic: string;
  private readonly logger: Logger;
  private readonly admins: ClientSlot<Admin>;
  private readonly fetchers: ClientSlot<Consumer>;
  private checkingTopic = false;
  private readonly requestTimeoutMs: number;
  private state: 'new' | 'starting' | 'running' | 'stopped' | 'failed' = 'new';
  private failure: PartitionReaderFailedError | undefined;
  /** The last fetch returned records: the next one lingers (BUSY_MAX_WAIT_MS) for more. */
  private lastFetchHadRecords = false;
  /** KIP-392: the in-rack replica the leader told this client (-ingest-storage.kafka.client-rack) to fetch from. */
  private preferredReplica: { node: number; until: number } | undefined;
  private readonly fetchesByBroker = new Map<number, number>();
  /** Next offset to hand to onRecords (and to fetch). */
  private next = 0n;
  private readonly listeners = new Set<() => void>();
  private loop: Promise<void> | undefined;
  /** Wakes the fetch loop from its backoff (stop, fail). */
  private wake: (() => void) | undefined;

  private readonly opts: PartitionReaderOptions;

  constructor(opts: PartitionReaderOptions) {
    this.opts = opts;
    this.topic = opts.topic ?? DEFAULT_TOPIC;
    this.logger = opts.logger ?? silentLogger;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 10_000;
    if (opts.brokers.length === 0) throw new Error('no Kafka brokers configured; set -ingest-storage.kafka.address');
    const clientId = opts.clientId ?? opts.consumerGroup;
    this.admins = new ClientSlot({
      create: () => createAdmin({ brokers: opts.brokers, clientId, requestTimeoutMs: this.requestTimeoutMs, retries: 2, security: opts.security }),
      ready: (admin) => admin.metadata({ topics: [] }),
      what: 'admin client',
    });
    this.fetchers = new ClientSlot({
      // The fetch loop retries; the request bound must outlast the broker's long poll.
      create: () =>
        createFetcher({
          brokers: shuffled(opts.brokers),
          clientId,
          groupId: opts.consumerGroup,
          security: opts.security,
          requestTimeoutMs: this.requestTimeoutMs + MAX_WAIT_MS,
          retries: 0,
        }),
      ready: (fetcher) => fetcher.metadata({ topics: [this.topic] }),
      what: 'fetch client',
    });
  }

  /** Resolves once this reader knows where to start and its fetch client reaches the cluster; consumption runs from then on. */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`PartitionReader cannot start from state ${this.state}; create a new one`);
    this.state = 'starting';
    const timeoutMs = this.opts.startTimeoutMs ?? 60_000;
    const started = Date.now();
    try {
      await withDeadline(
        (async () => {
          this.next = await this.initialPosition();
          await this.fetchers.get(this.requestTimeoutMs);
        })(),
        timeoutMs,
        `starting the reader of ${this.topic}/${this.opts.partition}`,
      );
    } catch (err) {
      await this.stop();
      if (err instanceof PartitionReaderFailedError) throw err;
      throw unavailable(`starting the reader of ${this.topic}/${this.opts.partition}`, err);
    }
    if (this.failure !== undefined) throw this.failure;
    this.state = 'running';
    this.loop = this.fetchLoop();
    this.logger.info(
      { topic: this.topic, partition: this.opts.partition, group: this.opts.consumerGroup, from: this.next.toString(), ms: Date.now() - started },
      `kafka partition reader started: reading partition ${this.opts.partition} of ${this.topic} for consumer group ${this.opts.consumerGroup} (assigned by itself, no group membership)`,
    );
  }

  /** Stops fetching (after the batch in onRecords, if any) and closes the clients. */
  async stop(): Promise<void> {
    if (this.state !== 'failed') this.state = 'stopped';
    this.notify();
    this.wake?.();
    const loop = this.loop;
    await this.fetchers.close();
    if (loop !== undefined) {
      await withDeadline(loop, this.requestTimeoutMs, 'stopping the fetch loop').catch((err: unknown) =>
        this.logger.warn({ err }, 'kafka partition reader did not stop cleanly'),
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
   * record's offset + 1. Fails (retriably) while Kafka cannot take it; the next commit covers it.
   */
  async commit(nextOffset: bigint): Promise<void> {
    if (this.state !== 'running') throw new KafkaUnavailableError('the partition reader is not running');
    await this.withAdmin(`committing offset ${nextOffset}`, (admin) =>
      admin.alterConsumerGroupOffsets({
        groupId: this.opts.consumerGroup,
        topics: [{ name: this.topic, partitionOffsets: [{ partition: this.opts.partition, offset: nextOffset }] }],
      }),
    );
  }

  /**
   * Resolves once the consumed position is within `maxLag` records of the partition's end offset,
   * fetched now and again each time it is reached (or every second), so writes that arrive during
   * replay are caught up too. Resolves at once for an empty partition. Asking for the end offset
   * may fail for a while (a broker restarting, a machine too loaded to answer in time): that is
   * asked again with backoff, logged once per failing spell; only the reader failing or stopping ends it.
   */
  async waitCaughtUp(maxLag: number, onProgress?: (consumed: bigint, end: bigint) => void): Promise<void> {
    const allowed = BigInt(Math.max(0, Math.floor(maxLag)));
    let backoff = FETCH_BACKOFF_MIN_MS;
    for (;;) {
      this.throwIfDone();
      let end: bigint;
      try {
        end = await this.endOffset();
      } catch (err) {
        this.throwIfDone();
        if (backoff === FETCH_BACKOFF_MIN_MS) {
          this.logger.warn(
            { err, partition: this.opts.partition },
            `reading the end offset of partition ${this.opts.partition} failed, retrying: ${innermostMessage(err)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, backoff));
        backoff = Math.min(backoff * 2, FETCH_BACKOFF_MAX_MS);
        continue;
      }
      backoff = FETCH_BACKOFF_MIN_MS;
      const consumed = this.next;
      onProgress?.(consumed, end);
      if (end - consumed <= allowed) return;
      await this.waitForPosition(end - allowed, CAUGHT_UP_POLL_MS);
    }
  }

  private running(): boolean {
    return this.state === 'running' && this.failure === undefined;
  }

  /**
   * Fetches from the partition's leader at `next`, hands the records to onRecords, and repeats.
   * A failed fetch (leader moved, broker down or restarting) drops the cached metadata and is
   * retried with backoff, for as long as the reader runs: the ingester serves its head meanwhile.
   */
  private async fetchLoop(): Promise<void> {
    let failures = 0;
    let failingSince = 0;
    let lastLoggedAt = 0;
    let suppressed = 0;
    let backoff = FETCH_BACKOFF_MIN_MS;
    while (this.running()) {
      let fetcher: Consumer | undefined;
      try {
        fetcher = await this.fetchers.get(this.requestTimeoutMs);
        const batch = await this.fetchOnce(fetcher);
        if (failures > 0) {
          this.logger.info(
            { partition: this.opts.partition, failures, ms: Date.now() - failingSince },
            `fetching partition ${this.opts.partition} of ${this.topic} works again after ${failures} failed attempts`,
          );
        }
        failures = 0;
        suppressed = 0;
        backoff = FETCH_BACKOFF_MIN_MS;
        if (batch !== undefined) await this.handleBatch(batch);
      } catch (err) {
        if (!this.running()) return;
        // A follower that fails (lagging, gone) is left for the leader, which may name another.
        this.preferredReplica = undefined;
        const type = kafkaErrorType(err);
        if (type === 'OFFSET_OUT_OF_RANGE') {
          await this.resetOutOfRange().catch(() => undefined);
          continue;
        }
        if (failures === 0) failingSince = Date.now();
        failures++;
        if (type !== undefined && TOPIC_UNKNOWN.includes(type)) void this.failIfTopicGone();
        fetcher?.clearMetadata();
        if (fetcher !== undefined && failures % REBUILD_AFTER_FAILURES === 0) this.fetchers.discard(fetcher);
        const now = Date.now();
        if (now - lastLoggedAt >= FAILURE_LOG_INTERVAL_MS) {
          this.logger.warn(
            { err, partition: this.opts.partition, kafkaType: type, failures, repeatedTimes: suppressed || undefined },
            `kafka fetch of partition ${this.opts.partition} failed, retrying: ${innermostMessage(err)}`,
          );
          lastLoggedAt = now;
          suppressed = 0;
        } else suppressed++;
        await this.pause(backoff);
        backoff = Math.min(backoff * 2, FETCH_BACKOFF_MAX_MS);
      }
    }
  }

  /** One Fetch at the leader: the records at and after `next` (undefined when none arrived within the long poll). */
  private async fetchOnce(fetcher: Consumer): Promise<ConsumedRecord[] | undefined> {
    const md = await withDeadline(fetcher.metadata({ topics: [this.topic] }), this.requestTimeoutMs, 'fetching metadata');
    const topic = md.topics.get(this.topic);
    const leader = topic?.partitions[this.opts.partition]?.leader;
    if (topic === undefined || leader === undefined) {
      throw Object.assign(new Error(`topic ${this.topic} has no partition ${this.opts.partition} in the metadata`), { apiId: 'UNKNOWN_TOPIC_OR_PARTITION' });
    }
    if (leader < 0)
      throw Object.assign(new Error(`partition ${this.opts.partition} has no leader (an election is running)`), { apiId: 'LEADER_NOT_AVAILABLE' });
    const from = this.next;
    const busy = this.lastFetchHadRecords;
    const node = this.fetchNode(topic.partitions[this.opts.partition], leader);
    this.fetchesByBroker.set(node, (this.fetchesByBroker.get(node) ?? 0) + 1);
    const response = await withDeadline(
      fetcher.fetch({
        node,
        maxWaitTime: busy ? BUSY_MAX_WAIT_MS : MAX_WAIT_MS,
        minBytes: busy ? BUSY_MIN_BYTES : 1,
        maxBytes: MAX_BYTES_PER_PARTITION,
        topics: [
          {
            topicId: topic.id,
            partitions: [
              { partition: this.opts.partition, fetchOffset: from, partitionMaxBytes: MAX_BYTES_PER_PARTITION, currentLeaderEpoch: -1, lastFetchedEpoch: -1 },
            ],
          },
        ],
      }),
      this.requestTimeoutMs + MAX_WAIT_MS,
      'fetching records',
    );
    const records: ConsumedRecord[] = [];
    let end = from;
    for (const t of response.responses) {
      for (const p of t.partitions) {
        if (p.partitionIndex !== this.opts.partition) continue;
        if (p.preferredReadReplica >= 0 && p.preferredReadReplica !== node) {
          this.preferredReplica = { node: p.preferredReadReplica, until: Date.now() + PREFERRED_REPLICA_TTL_MS };
        }
        for (const b of p.records ?? []) {
          end = maxOf(end, b.firstOffset + BigInt(b.lastOffsetDelta) + 1n);
          if ((b.attributes & IS_CONTROL_BATCH) !== 0) continue;
          for (const r of b.records) {
            const offset = b.firstOffset + BigInt(r.offsetDelta);
            if (offset < from) continue;
            records.push(fromMessage({ key: r.key, value: r.value, offset, timestamp: b.firstTimestamp + r.timestampDelta, headers: r.headers }));
          }
        }
      }
    }
    this.lastFetchHadRecords = records.length > 0;
    // A batch of only control records (or compacted-away offsets) still moves the position.
    if (records.length === 0 && end > from && this.next === from) {
      this.next = end;
      this.notify();
    }
    return records.length > 0 ? records : undefined;
  }

  /** The leader, or the replica it named for this client's rack while that is still a live replica. */
  private fetchNode(partition: { replicas: number[]; offlineReplicas?: number[] } | undefined, leader: number): number {
    const p = this.preferredReplica;
    if (p === undefined) return leader;
    if (Date.now() > p.until || !(partition?.replicas.includes(p.node) ?? false) || (partition?.offlineReplicas?.includes(p.node) ?? false)) {
      this.preferredReplica = undefined;
      return leader;
    }
    return p.node;
  }

  /** Fetch requests sent to each broker (node id): with a client rack, mostly the in-rack replica's. */
  fetchCounts(): ReadonlyMap<number, number> {
    return this.fetchesByBroker;
  }

  private async handleBatch(records: ConsumedRecord[]): Promise<void> {
    if (!this.running()) return;
    try {
      await this.opts.onRecords(records);
    } catch (err) {
      this.fail(new PartitionReaderFailedError(`onRecords failed at offset ${records[0].offset}: ${(err as Error).message}`, { cause: err }));
      return;
    }
    this.next = records[records.length - 1].offset + 1n;
    this.notify();
  }

  /** `next` fell out of the partition (retention deleted it): continue at the log start, as a fresh reader would. */
  private async resetOutOfRange(): Promise<void> {
    const { low, high } = await this.partitionOffsets();
    if (this.next >= low && this.next <= high) return;
    if (this.next < low) this.missed(this.next, low);
    else {
      this.logger.warn(
        { position: this.next.toString(), low: low.toString(), high: high.toString(), partition: this.opts.partition },
        'kafka partition reader position is past the end of the partition (was the topic recreated?); continuing at the earliest offset',
      );
    }
    this.next = low;
    this.notify();
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  private fail(err: PartitionReaderFailedError): void {
    if (this.failure !== undefined || this.state === 'stopped') return;
    this.failure = err;
    this.state = 'failed';
    this.logger.error({ err, topic: this.topic, partition: this.opts.partition }, 'kafka partition reader failed');
    this.notify();
    this.wake?.();
    void this.fetchers.close();
    this.opts.onError?.(err);
  }

  /**
   * A deleted topic can never be read again, while fetches would fail forever: when the brokers
   * confirm the topic is gone, fail. A broker that just restarted may answer before it knows
   * every topic, so the absence must hold over several checks, each from a broker that does know
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
          topics = await this.withAdmin('listing topics', (admin) => admin.listTopics({ includeInternals: true }));
        } catch {
          return; // Brokers unreachable: a transient outage, which the fetch loop rides out.
        }
        if (topics.includes(this.topic) || !topics.includes('__consumer_offsets')) return;
      }
      this.fail(
        new PartitionReaderFailedError(
          `topic "${this.topic}" no longer exists on the brokers; nothing more can be consumed from partition ${this.opts.partition}`,
        ),
      );
    } finally {
      this.checkingTopic = false;
    }
  }

  private async initialPosition(): Promise<bigint> {
    const { low, high } = await this.partitionOffsets();
    if (this.opts.startFrom === 'earliest') return low;
    const committed = await this.committedOffset();
    if (committed === undefined) return low;
    if (committed < low) this.missed(committed, low);
    else if (committed > high) {
      this.logger.warn(
        { committed: committed.toString(), low: low.toString(), high: high.toString() },
        'committed offset is past the end of the partition (was the topic recreated?); replaying from the earliest offset',
      );
    }
    return committed < low || committed > high ? low : committed;
  }

  /** Records [from, to) were deleted before being read: an error, never a silent skip. */
  private missed(from: bigint, to: bigint): void {
    const { partition } = this.opts;
    this.logger.error(
      { partition, from: from.toString(), to: to.toString(), missed: (to - from).toString() },
      `records ${from} to ${to - 1n} of ${this.topic}/${partition} (${to - from}) were deleted by Kafka's retention before they were read; ` +
        "they are lost to this reader, continuing at the earliest offset left (raise the topic's retention.ms above the longest outage)",
    );
    this.opts.onMissedRecords?.(from, to);
  }

  private async committedOffset(): Promise<bigint | undefined> {
    // A broker that just started answers "coordinator loading / not available" for a while: wait it out (bounded).
    let groups: Awaited<ReturnType<Admin['listConsumerGroupOffsets']>> | undefined;
    for (let attempt = 0; groups === undefined; attempt++) {
      try {
        groups = await this.withAdmin('fetching the committed offset', (admin) =>
          admin.listConsumerGroupOffsets({
            groups: [{ groupId: this.opts.consumerGroup, topics: [{ name: this.topic, partitionIndexes: [this.opts.partition] }] }],
          }),
        );
      } catch (err) {
        const type = (err as KafkaUnavailableError).kafkaType;
        if (attempt >= 40 || !COORDINATOR_LOADING.includes(type ?? '')) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    const row = groups
      .find((g) => g.groupId === this.opts.consumerGroup)
      ?.topics.find((t) => t.name === this.topic)
      ?.partitions.find((p) => p.partitionIndex === this.opts.partition);
    const offset = row === undefined ? -1n : row.committedOffset;
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

function maxOf(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** The brokers in random order: readers of many partitions do not all ask the first one. */
function shuffled(brokers: string[]): string[] {
  const out = [...brokers];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
