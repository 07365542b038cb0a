// The distributor's side of ingest storage: produces one call's records (one per partition) with
// acks=all and resolves only once Kafka acknowledged all of them. Never waits longer than
// timeoutMs: a slow or absent Kafka is a KafkaUnavailableError that says what happened (leader
// lost, broker unreachable, no acks in time). Leader changes are retried within that time.
import { setTimeout as sleep } from 'node:timers/promises';
import { ProduceAcks, type Admin, type Producer } from '@platformatic/kafka';
import { ClientSlot } from './client-slot.ts';
import { DEFAULT_MAX_RECORD_SIZE_BYTES, DEFAULT_PRODUCER_MAX_IN_FLIGHT, type ProducerCompression } from './config.ts';
import { withDeadline } from './deadline.ts';
import { KafkaUnavailableError, kafkaErrorType, unavailable } from './errors.ts';
import { createAdmin, createProducer } from './kafka-client.ts';
import type { KafkaSecurity } from './kafka-security.ts';
import { silentLogger, type Logger } from './logger.ts';
import { classifyProduceError, describeFailure, type ProduceFailure } from './produce-failure.ts';
import { DEFAULT_TOPIC, toProduceMessage, type PartitionRecord } from './record.ts';

export interface IngestWriterOptions {
  brokers: string[];
  /** SASL, TLS and rack of every connection (kafkaSecurity of the config); default plaintext. */
  security?: KafkaSecurity;
  /** Default 'ingest'. */
  topic?: string;
  clientId: string;
  /** Upper bound of one write (connect + produce + acks), and of start(). */
  timeoutMs: number;
  logger?: Logger;
  /** How long a fetched partition count is trusted before it is refreshed (in the background); default 10s. */
  partitionCountMaxAgeMs?: number;
  /**
   * Upper bound of one produce attempt (request and acks) within a write; a leader that has not
   * answered by then (frozen, cut off) is asked again, after fresh metadata. Default
   * min(timeoutMs, 3s): above the brokers' session timeout, because a healthy leader holds acks=all
   * for a dead follower until the controller fences it, and giving up on that earlier only re-sends.
   */
  attemptTimeoutMs?: number;
  /**
   * Produce requests out at once (-ingest-storage.kafka.producer-max-in-flight, default 5); writes
   * that come while that many are out go out together in the next one.
   */
  maxInFlight?: number;
  /** Largest batch one partition gets in one produce request (the broker's message.max.bytes bounds it); default that of -ingest-storage.kafka.producer-max-record-size-bytes. */
  maxBatchBytes?: number;
  /** Called per produce request with the number of writes it carries (for a metric). */
  onProduceRequest?: (writes: number) => void;
  /** Codec of whole batches (-ingest-storage.kafka.producer-compression); default none: each record's value snappy-compressed. */
  compression?: ProducerCompression;
}

type ProduceMessage = ReturnType<typeof toProduceMessage>;
type ProduceOffsets = { topic: string; partition: number }[];

/** A first attempt waiting for a produce request slot. */
interface Waiting {
  producer: Producer;
  messages: ProduceMessage[];
  resolve: (offsets: ProduceOffsets) => void;
  reject: (err: unknown) => void;
}

/** Partitions of one call that failed in an attempt, and how. */
interface Failed {
  partitions: number[];
  failure: ProduceFailure;
  error?: unknown;
}

// Retries follow a leader change closely: the new leader shows up in metadata within
// milliseconds of its election, and a refused connection to the dead one costs nothing.
const RETRY_BACKOFF_MIN_MS = 25;
const RETRY_BACKOFF_MAX_MS = 100;
// The client's own request timeout fires first; this only catches a send it never settles.
const ATTEMPT_GRACE_MS = 500;
const DEFAULT_ATTEMPT_TIMEOUT_MS = 3000;
const CONNECT_TIMEOUT_MS = 1000;
const SUSPECT_MS = 10_000;
// After an attempt timed out on a partition, its next attempts get this long (and the producer is
// rebuilt at most this often), so the new leader is found soon after its election.
const SUSPECT_ATTEMPT_TIMEOUT_MS = 1000;

const DEADLINE: ProduceFailure = {
  cause: 'ack-timeout',
  kafkaType: undefined,
  broker: undefined,
  detail: 'the write timeout passed while another write was retrying the partition',
  metadataRefreshed: true,
};

const MISSING_PARTITION: ProduceFailure = {
  cause: 'partition-unknown',
  kafkaType: 'UNKNOWN_TOPIC_OR_PARTITION',
  broker: undefined,
  detail: "the topic's metadata does not have it, so the record was not sent",
  metadataRefreshed: false,
};

export class IngestWriter {
  private readonly topic: string;
  private readonly logger: Logger;
  private readonly producers: ClientSlot<Producer>;
  private readonly admins: ClientSlot<Admin>;
  private state: 'new' | 'running' | 'stopped' = 'new';
  private partitions: { count: number; fetchedAt: number } | undefined;
  private refreshing: Promise<number> | undefined;
  private readonly attemptTimeoutMs: number;
  /** The retry attempt in flight per failing partition (resolves to its failure, or undefined once acked). */
  private readonly probes = new Map<number, Promise<Failed | undefined>>();
  /** How the last attempt on a partition failed, until one succeeds. */
  private readonly lastFailure = new Map<number, ProduceFailure>();
  /** Brokers ('host:port') that timed out or refused lately, until when: a rebuilt producer does not start at one. */
  private readonly suspects = new Map<string, number>();
  private lastRebuildAt = 0;
  private readonly maxInFlight: number;
  private readonly maxBatchBytes: number;
  private inFlight = 0;
  private waiting: Waiting[] = [];

  private readonly opts: IngestWriterOptions;

  constructor(opts: IngestWriterOptions) {
    this.opts = opts;
    this.topic = opts.topic ?? DEFAULT_TOPIC;
    this.logger = opts.logger ?? silentLogger;
    this.attemptTimeoutMs = Math.min(opts.timeoutMs, opts.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS);
    this.maxInFlight = Math.max(1, opts.maxInFlight ?? DEFAULT_PRODUCER_MAX_IN_FLIGHT);
    this.maxBatchBytes = opts.maxBatchBytes ?? DEFAULT_MAX_RECORD_SIZE_BYTES;
    if (opts.brokers.length === 0) throw new Error('no Kafka brokers configured; set -ingest-storage.kafka.address');
    this.producers = new ClientSlot({
      create: () =>
        createProducer({
          // A rebuilt producer asks for metadata at a broker that has not timed out lately.
          brokers: this.seedBrokers(),
          clientId: opts.clientId,
          security: opts.security,
          compression: opts.compression,
          // A leader that does not answer one request in time is asked again (or its successor is).
          requestTimeoutMs: this.attemptTimeoutMs,
          // A dead host does not refuse, it stays silent: each retry must not wait long for a connect.
          connectionTimeoutMs: CONNECT_TIMEOUT_MS,
          // write() retries, per partition, until its deadline, after fresh metadata; the client's
          // own retries would re-send to the dead leader it still has in its metadata.
          retries: 0,
        }),
      ready: (producer) => producer.metadata({ topics: [] }),
      what: 'producer',
    });
    this.admins = new ClientSlot({
      create: () =>
        createAdmin({
          brokers: this.seedBrokers(),
          clientId: `${opts.clientId}-admin`,
          security: opts.security,
          requestTimeoutMs: opts.timeoutMs,
          connectionTimeoutMs: CONNECT_TIMEOUT_MS,
          retries: 2,
        }),
      ready: (admin) => admin.metadata({ topics: [] }),
      what: 'admin client',
    });
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
   * Produces `records` for `tenant` with acks=all. Resolves once every record is acknowledged;
   * rejects with KafkaUnavailableError once timeoutMs passed without that, saying why.
   *
   * The first attempt is one send for the whole call (one request per leader). A failed attempt
   * is retried at once (with a short backoff) until the deadline, each partition still pending in
   * its own send: a partition whose leader answers is done and is not written again while another
   * waits for its new leader. After any failure the producer's metadata is dropped, so the next
   * attempt asks the cluster who leads now; after a timeout (a silent leader, which may also be the
   * broker the producer asks for metadata) the producer is rebuilt, starting at another broker. So
   * a leader's death costs about the time the cluster needs to elect a new one, not a retry budget.
   */
  async write(tenant: string, records: PartitionRecord[]): Promise<void> {
    if (this.state !== 'running') throw new KafkaUnavailableError('the Kafka writer is not running');
    if (records.length === 0) return;
    const started = Date.now();
    const deadline = started + this.opts.timeoutMs;
    const pending = new Map<number, PartitionRecord[]>();
    for (const r of records) {
      const q = pending.get(r.partition);
      if (q === undefined) pending.set(r.partition, [r]);
      else q.push(r);
    }
    let failed: Failed[] = [];
    let backoff = RETRY_BACKOFF_MIN_MS;
    for (let attempt = 0; Date.now() < deadline && this.state === 'running'; attempt++) {
      let producer: Producer;
      try {
        producer = await this.producers.get(deadline - Date.now());
      } catch (err) {
        failed = [{ partitions: [...pending.keys()], failure: classifyProduceError(err), error: err }];
        await sleep(Math.max(0, Math.min(backoff, deadline - Date.now())));
        backoff = Math.min(backoff * 2, RETRY_BACKOFF_MAX_MS);
        continue;
      }
      // A partition another write is retrying is not sent to again until that attempt is answered.
      const together = attempt === 0 && ![...pending.keys()].some((p) => this.probes.has(p));
      failed = together ? await this.sendTogether(producer, tenant, pending, deadline) : await this.sendEach(producer, tenant, pending, deadline);
      if (pending.size === 0) return;
      const refused = failed.find((f) => f.failure.cause === 'request');
      if (refused !== undefined) throw this.failure(refused, Date.now() - started);
      this.afterFailure(producer, failed);
      await sleep(Math.max(0, Math.min(backoff, deadline - Date.now())));
      backoff = Math.min(backoff * 2, RETRY_BACKOFF_MAX_MS);
    }
    if (failed.length === 0) failed = [{ partitions: [...pending.keys()], failure: classifyProduceError(new Error('the writer stopped')) }];
    // The push edge logs the answer; one line per failed push is enough.
    throw this.failure(failed[0], Date.now() - started);
  }

  /**
   * The producer's metadata is dropped at once, so the next attempt fetches who leads now (during
   * an election: until the new leader shows up, within milliseconds of being elected). After a
   * timeout (a frozen or cut-off leader, which may be the broker the producer asks for metadata)
   * the producer is rebuilt — at most once a second, so a merely slow cluster is not hit with
   * reconnect storms — starting at a broker not suspected.
   */
  private afterFailure(producer: Producer, failed: Failed[]): void {
    const now = Date.now();
    for (const { failure, partitions } of failed) {
      for (const p of partitions) this.lastFailure.set(p, failure);
      if (failure.broker !== undefined && (failure.cause === 'ack-timeout' || failure.cause === 'broker-unreachable')) {
        this.suspects.set(failure.broker, now + SUSPECT_MS);
      }
    }
    producer.clearMetadata();
    if (failed.every((f) => f.failure.metadataRefreshed) || now - this.lastRebuildAt < SUSPECT_ATTEMPT_TIMEOUT_MS) return;
    this.lastRebuildAt = now;
    this.producers.discard(producer);
  }

  /** Bootstrap brokers for a new connection: the unsuspected ones first, in random order. */
  private seedBrokers(): string[] {
    const now = Date.now();
    const ok: string[] = [];
    const suspected: string[] = [];
    for (const b of this.opts.brokers) ((this.suspects.get(b) ?? 0) > now ? suspected : ok).push(b);
    for (let i = ok.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [ok[i], ok[j]] = [ok[j], ok[i]];
    }
    return [...ok, ...suspected];
  }

  private failure(f: Failed, waitedMs: number): KafkaUnavailableError {
    return new KafkaUnavailableError(describeFailure(f.failure, f.partitions, this.topic, waitedMs), {
      kafkaType: f.failure.kafkaType,
      reason: f.failure.cause,
      cause: f.error,
    });
  }

  /** One send per wave of the call's records (a partition appears once per send); stops at the first failed wave. */
  private async sendTogether(producer: Producer, tenant: string, pending: Map<number, PartitionRecord[]>, deadline: number): Promise<Failed[]> {
    // One send's records for a partition form one batch, which the broker bounds by
    // message.max.bytes: a partition's next record (split for size) goes in the next send.
    for (const wave of waves([...pending.values()].flat())) {
      const partitions = wave.map((r) => r.partition);
      try {
        const acked = await this.send(producer, tenant, wave, deadline, { timeoutMs: this.attemptTimeoutMs, coalesce: true });
        const missing = this.markAcked(pending, wave, acked);
        if (missing.length > 0) return [{ partitions: missing, failure: MISSING_PARTITION }];
      } catch (err) {
        return [{ partitions, failure: classifyProduceError(err), error: err }];
      }
    }
    return [];
  }

  /**
   * Each pending partition in its own sends, concurrently; a partition's records in order. While
   * one write is already retrying a partition, the others wait for that attempt instead of sending
   * too: during an election each failing partition costs one request (and one metadata refresh)
   * per backoff, not one per waiting push. When it succeeds, they all send at once.
   */
  private async sendEach(producer: Producer, tenant: string, pending: Map<number, PartitionRecord[]>, deadline: number): Promise<Failed[]> {
    const results = await Promise.all(
      [...pending.keys()].map(async (partition): Promise<Failed | undefined> => {
        for (let q = pending.get(partition); q !== undefined && q.length > 0; q = pending.get(partition)) {
          const probe = this.probes.get(partition);
          if (probe !== undefined) {
            const outcome = await untilDeadline(probe, deadline);
            if (outcome === 'deadline') return { partitions: [partition], failure: this.lastFailure.get(partition) ?? DEADLINE };
            if (outcome !== undefined) return { ...outcome, partitions: [partition] };
          }
          const record = q[0];
          // A leader that just timed out is likely frozen until its successor is elected: ask often.
          const suspect = this.lastFailure.get(partition)?.cause === 'ack-timeout';
          const timeoutMs = suspect ? Math.min(this.attemptTimeoutMs, SUSPECT_ATTEMPT_TIMEOUT_MS) : this.attemptTimeoutMs;
          const attempt = this.send(producer, tenant, [record], deadline, { timeoutMs, coalesce: false }).then(
            (acked): Failed | undefined =>
              this.markAcked(pending, [record], acked).length > 0 ? { partitions: [partition], failure: MISSING_PARTITION } : undefined,
            (err: unknown): Failed => ({ partitions: [partition], failure: classifyProduceError(err), error: err }),
          );
          if (!this.probes.has(partition)) {
            this.probes.set(partition, attempt);
            void attempt.then(() => {
              if (this.probes.get(partition) === attempt) this.probes.delete(partition);
            });
          }
          const failed = await attempt;
          if (failed !== undefined) return failed;
        }
        return undefined;
      }),
    );
    return results.filter((f) => f !== undefined);
  }

  /**
   * Sends `wave` (acks=all) and returns the partitions the response acknowledged. The client maps a
   * record's partition modulo the partition count it knows, so a partition beyond that (added since
   * its metadata was fetched, or not in the topic at all) would land in another partition: such a
   * record is not sent before fresh metadata has it, and is reported missing. `coalesce`: a first
   * attempt, which may wait for a request slot and share the request (produceCoalesced).
   */
  private async send(
    producer: Producer,
    tenant: string,
    wave: PartitionRecord[],
    deadline: number,
    { timeoutMs, coalesce }: { timeoutMs: number; coalesce: boolean },
  ): Promise<{ partition: number }[]> {
    const left = Math.max(1, deadline - Date.now());
    const budget = Math.min(timeoutMs, left);
    const bound = Math.min(budget + ATTEMPT_GRACE_MS, left);
    const max = Math.max(...wave.map((r) => r.partition));
    let count = await this.knownPartitions(producer, false, bound);
    if (max >= count) count = await this.knownPartitions(producer, true, bound);
    const sendable = wave.filter((r) => r.partition < count);
    if (sendable.length === 0) return [];
    const snappyValues = (this.opts.compression ?? 'none') === 'none';
    const messages = sendable.map((r) => toProduceMessage(this.topic, tenant, r, snappyValues));
    const send = coalesce ? this.produceCoalesced(producer, messages) : this.produce(producer, messages);
    try {
      const offsets = await withDeadline(send, bound, 'producing to Kafka');
      return offsets.filter((o) => o.topic === this.topic);
    } catch (err) {
      throw this.naming(err, producer, sendable);
    }
  }

  /**
   * One produce request, counted against maxInFlight; when it settles, the writes waiting for a slot go out.
   * acks per send: @platformatic/kafka ignores the producer's own `acks` option in send() and
   * defaults to acks=1 (leader only) for a producer that is not idempotent.
   */
  private async produce(producer: Producer, messages: ProduceMessage[], writes = 1): Promise<ProduceOffsets> {
    this.inFlight++;
    this.opts.onProduceRequest?.(writes);
    try {
      const { offsets } = await producer.send({ acks: ProduceAcks.ALL, messages });
      return offsets ?? [];
    } finally {
      this.inFlight--;
      this.sendWaiting();
    }
  }

  /**
   * A first attempt: sent at once while fewer than maxInFlight produce requests are out, else it
   * waits and goes out with every other waiting write in the next request — one batch per partition
   * for all of them, as Kafka's producer batches behind max.in.flight.requests.per.connection. Under
   * load that turns many small pushes into few produce requests and record batches; below the cap
   * nothing waits. A failure fails every write of the request; each retries its own partitions.
   */
  private produceCoalesced(producer: Producer, messages: ProduceMessage[]): Promise<ProduceOffsets> {
    if (this.inFlight < this.maxInFlight && this.waiting.length === 0) return this.produce(producer, messages);
    return new Promise((resolve, reject) => this.waiting.push({ producer, messages, resolve, reject }));
  }

  /** Sends the waiting writes while slots are free: those of one producer together, each partition's batch within maxBatchBytes. */
  private sendWaiting(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const producer = this.waiting[0].producer;
      const batch: Waiting[] = [];
      const later: Waiting[] = [];
      const bytes = new Map<number, number>();
      for (const w of this.waiting) {
        const fits =
          w.producer === producer && (batch.length === 0 || w.messages.every((m) => (bytes.get(m.partition) ?? 0) + m.value.length <= this.maxBatchBytes));
        if (!fits) {
          later.push(w);
          continue;
        }
        batch.push(w);
        for (const m of w.messages) bytes.set(m.partition, (bytes.get(m.partition) ?? 0) + m.value.length);
      }
      this.waiting = later;
      const sent = this.produce(
        producer,
        batch.flatMap((w) => w.messages),
        batch.length,
      );
      for (const w of batch) sent.then(w.resolve, w.reject);
    }
  }

  /**
   * The client's timeouts and closed connections do not say which broker they were at; the leader
   * of the records' partitions (when they share one) is, and a rebuilt producer avoids it.
   */
  private naming(err: unknown, producer: Producer, wave: PartitionRecord[]): unknown {
    const md = producer.currentMetadata;
    const topic = md?.topics.get(this.topic);
    const leaders = new Set(wave.map((r) => topic?.partitions[r.partition]?.leader));
    const [leader] = leaders;
    const broker = leaders.size === 1 && leader !== undefined ? md?.brokers.get(leader) : undefined;
    if (broker === undefined || classifyProduceError(err).broker !== undefined) return err;
    return Object.assign(new Error(`producing at ${broker.host}:${broker.port}`, { cause: err }), { broker: { host: broker.host, port: broker.port } });
  }

  /** The topic's partition count in the producer's metadata (the same metadata its next send uses; a count never shrinks). */
  private async knownPartitions(producer: Producer, forceUpdate: boolean, timeoutMs: number): Promise<number> {
    const md = await withDeadline(producer.metadata({ topics: [this.topic], forceUpdate }), timeoutMs, 'fetching metadata');
    return md.topics.get(this.topic)?.partitionsCount ?? 0;
  }

  // Only the response tells which partitions took their records: a partition left out of it was not written.
  /** Removes the acknowledged records of `wave` from `pending`; returns the partitions the response left out. */
  private markAcked(pending: Map<number, PartitionRecord[]>, wave: PartitionRecord[], acked: { partition: number }[]): number[] {
    const got = new Set(acked.map((a) => a.partition));
    const missing: number[] = [];
    for (const r of wave) {
      if (!got.has(r.partition)) {
        missing.push(r.partition);
        continue;
      }
      this.lastFailure.delete(r.partition);
      const q = pending.get(r.partition);
      if (q === undefined) continue;
      q.shift();
      if (q.length === 0) pending.delete(r.partition);
    }
    return missing;
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
      const { topics } = await withDeadline(admin.metadata({ topics: [this.topic], forceUpdate: true }), timeout, 'fetching metadata');
      const count = topics.get(this.topic)?.partitionsCount ?? 0;
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

/** `promise`'s value, or 'deadline' if that comes first. */
async function untilDeadline<T>(promise: Promise<T>, deadline: number): Promise<T | 'deadline'> {
  const timer = new AbortController();
  const expired = sleep(Math.max(0, deadline - Date.now()), 'deadline' as const, { signal: timer.signal }).catch(() => 'deadline' as const);
  try {
    return await Promise.race([promise, expired]);
  } finally {
    timer.abort();
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
