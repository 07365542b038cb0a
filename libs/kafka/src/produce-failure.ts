// What went wrong with one produce attempt, read from whatever @platformatic/kafka threw: the
// leader moved, the broker cannot be reached, the acks did not come in time, too few replicas are
// in sync, or the request itself is bad. The writer retries on all but the last and says which
// one it was.
import { TimeoutError } from '@platformatic/kafka';
import { errorChain, innermostMessage, kafkaErrorType } from './errors.ts';

/**
 * - `leader-lost`: the partition's leader changed or is being elected (NOT_LEADER_OR_FOLLOWER,
 *   LEADER_NOT_AVAILABLE, a leader missing from the producer's metadata).
 * - `broker-unreachable`: connecting to the leader was refused or timed out, or its connection closed.
 * - `ack-timeout`: the leader did not answer (acks=all) within the attempt's timeout.
 * - `not-enough-replicas`: fewer in-sync replicas than min.insync.replicas.
 * - `partition-unknown`: the partition is not in the producer's metadata (e.g. just added).
 * - `request`: the record itself was refused (too large, corrupt); retrying cannot help.
 * - `other`: anything else.
 */
type ProduceFailureCause = 'leader-lost' | 'broker-unreachable' | 'ack-timeout' | 'not-enough-replicas' | 'partition-unknown' | 'request' | 'other';

export interface ProduceFailure {
  cause: ProduceFailureCause;
  /** The broker's error code name (e.g. NOT_LEADER_OR_FOLLOWER), when it answered with one. */
  kafkaType: string | undefined;
  /** 'host:port' of the broker involved, when the error names it. */
  broker: string | undefined;
  /** The client's own message, innermost error. */
  detail: string;
  /**
   * Whether fresh metadata is all the next attempt needs (the writer drops the producer's cached
   * metadata at once). Otherwise — a broker that accepted the request and went silent — the
   * producer is rebuilt, so its metadata comes from a seed broker that has not timed out.
   */
  metadataRefreshed: boolean;
}

const LEADER_TYPES = new Set(['NOT_LEADER_OR_FOLLOWER', 'LEADER_NOT_AVAILABLE', 'FENCED_LEADER_EPOCH', 'UNKNOWN_LEADER_EPOCH', 'NOT_LEADER_FOR_PARTITION']);
const REPLICA_TYPES = new Set(['NOT_ENOUGH_REPLICAS', 'NOT_ENOUGH_REPLICAS_AFTER_APPEND']);
const TIMEOUT_TYPES = new Set(['REQUEST_TIMED_OUT']);
const REQUEST_TYPES = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'CORRUPT_MESSAGE']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT']);
const NETWORK_ERROR = 'PLT_KFK_NETWORK';
const CONNECT_TIMEOUT = /^Connection to \S+ timed out/;
const BROKER_IN_MESSAGE = /Connection to (\S+:\d+)/;

/** Classifies what a @platformatic/kafka send (or our own deadline around it) rejected with. */
export function classifyProduceError(err: unknown): ProduceFailure {
  const chain = errorChain(err);
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  const kafkaType = kafkaErrorType(err);
  const messages = chain.map((e) => str(e.message) ?? '');
  const codes = new Set(chain.map((e) => str(e.code)));
  const broker = chain.map(brokerOf).find((b) => b !== undefined);
  const detail = innermostMessage(err);
  const failure = (cause: ProduceFailureCause): ProduceFailure => ({ cause, kafkaType, broker, detail, metadataRefreshed: cause !== 'ack-timeout' });

  if (kafkaType !== undefined && REQUEST_TYPES.has(kafkaType)) return failure('request');
  if (kafkaType !== undefined && LEADER_TYPES.has(kafkaType)) return failure('leader-lost');
  if (kafkaType !== undefined && REPLICA_TYPES.has(kafkaType)) return failure('not-enough-replicas');
  if (kafkaType === 'UNKNOWN_TOPIC_OR_PARTITION') return failure('partition-unknown');
  // A leader id the metadata has no broker for (-1 while an election runs): the client says its metadata is stale.
  if (chain.some((e) => e.code === NETWORK_ERROR && e.hasStaleMetadata === true)) return failure('leader-lost');
  // A silent host: the connect itself timed out. Nothing was sent.
  if (messages.some((m) => CONNECT_TIMEOUT.test(m))) return failure('broker-unreachable');
  if (chain.some((e) => e instanceof TimeoutError || e.name === 'DeadlineExceededError') || (kafkaType !== undefined && TIMEOUT_TYPES.has(kafkaType))) {
    return failure('ack-timeout');
  }
  if (codes.has(NETWORK_ERROR) || [...codes].some((c) => c !== undefined && NETWORK_CODES.has(c))) return failure('broker-unreachable');
  return failure('other');
}

function brokerOf(e: Record<string, unknown>): string | undefined {
  const b = e.broker as { host?: unknown; port?: unknown } | undefined;
  if (b !== null && typeof b === 'object' && typeof b.host === 'string' && typeof b.port === 'number') return `${b.host}:${b.port}`;
  const m = typeof e.message === 'string' ? BROKER_IN_MESSAGE.exec(e.message) : null;
  return m?.[1];
}

/** One line for the sender: what happened to which partitions, in the words of the cause. */
export function describeFailure(f: ProduceFailure, partitions: readonly number[], topic: string, waitedMs: number): string {
  const parts = `partition${partitions.length === 1 ? '' : 's'} ${partitions.join(',')} of topic ${topic}`;
  const type = f.kafkaType ? `, ${f.kafkaType}` : '';
  const at = f.broker ? ` (${f.broker})` : '';
  switch (f.cause) {
    case 'leader-lost':
      return `Kafka leader lost: the leader of ${parts} went away${at} and no new leader took the write within ${waitedMs}ms (${f.detail}${type})`;
    case 'broker-unreachable':
      return `Kafka broker unreachable: the broker leading ${parts}${at} refused or dropped the connection and no new leader took the write within ${waitedMs}ms (${f.detail})`;
    case 'ack-timeout':
      return `timeout waiting for Kafka's acks: the leader of ${parts}${at} did not acknowledge the write (acks=all) within ${waitedMs}ms (${f.detail}${type})`;
    case 'not-enough-replicas':
      return `too few in-sync Kafka replicas for ${parts}: fewer than min.insync.replicas brokers hold it, so acks=all cannot be met (${f.detail}${type})`;
    case 'partition-unknown':
      return `${parts} is not in the producer's metadata after ${waitedMs}ms; if partitions were just added this clears up on retry, otherwise the partition ring and the topic disagree (${f.detail}${type})`;
    case 'request':
      return `Kafka refused the record for ${parts} (${f.detail}${type})`;
    case 'other':
      return `writing to ${parts} failed for ${waitedMs}ms (${f.detail}${type})`;
  }
}
