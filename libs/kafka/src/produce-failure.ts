// What went wrong with one produce attempt, read from whatever kafkajs threw: the leader moved,
// the broker cannot be reached, the acks did not come in time, too few replicas are in sync, or
// the request itself is bad. The writer retries on the first three and says which one it was.

/**
 * - `leader-lost`: the partition's leader changed or is being elected (NOT_LEADER_OR_FOLLOWER,
 *   LEADER_NOT_AVAILABLE, a leader missing from the producer's metadata).
 * - `broker-unreachable`: connecting to the leader was refused, or its connection closed.
 * - `ack-timeout`: the leader did not answer (acks=all) within the attempt's timeout.
 * - `not-enough-replicas`: fewer in-sync replicas than min.insync.replicas.
 * - `partition-unknown`: the partition is not in the producer's metadata (e.g. just added).
 * - `request`: the record itself was refused (too large, corrupt); retrying cannot help.
 * - `other`: anything else kafkajs calls retriable.
 */
type ProduceFailureCause =
  | 'leader-lost'
  | 'broker-unreachable'
  | 'ack-timeout'
  | 'not-enough-replicas'
  | 'partition-unknown'
  | 'request'
  | 'other';

export interface ProduceFailure {
  cause: ProduceFailureCause;
  /** The broker's error type (e.g. NOT_LEADER_FOR_PARTITION), when it answered with one. */
  kafkaType: string | undefined;
  /** 'host:port' of the broker involved, when kafkajs names it. */
  broker: string | undefined;
  /** kafkajs's own message, innermost error. */
  detail: string;
  /** Whether kafkajs refreshed its metadata before throwing; otherwise the producer must be rebuilt to see the new leader. */
  metadataRefreshed: boolean;
}

const LEADER_TYPES = new Set(['NOT_LEADER_FOR_PARTITION', 'NOT_LEADER_OR_FOLLOWER', 'LEADER_NOT_AVAILABLE', 'FENCED_LEADER_EPOCH', 'UNKNOWN_LEADER_EPOCH']);
const REPLICA_TYPES = new Set(['NOT_ENOUGH_REPLICAS', 'NOT_ENOUGH_REPLICAS_AFTER_APPEND']);
const TIMEOUT_TYPES = new Set(['REQUEST_TIMED_OUT']);
const REQUEST_TYPES = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'CORRUPT_MESSAGE']);
// kafkajs's sendMessages refreshes its metadata before rethrowing these (connection errors and
// retriable protocol errors); after anything else its cached leaders stay as they were.
const REFRESHING_NAMES = new Set(['KafkaJSConnectionError', 'KafkaJSConnectionClosedError', 'KafkaJSMetadataNotLoaded']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT']);

interface ErrorLike {
  name?: unknown;
  type?: unknown;
  code?: unknown;
  broker?: unknown;
  message?: unknown;
  retriable?: unknown;
  cause?: unknown;
}

/** Classifies what a kafkajs send (or our own deadline around it) rejected with. */
export function classifyProduceError(err: unknown): ProduceFailure {
  const chain: ErrorLike[] = [];
  for (let e = err as ErrorLike | undefined, depth = 0; e && typeof e === 'object' && depth < 6; depth++) {
    chain.push(e);
    if (e.cause === e) break;
    e = e.cause as ErrorLike | undefined;
  }
  const innermost = chain.at(-1) ?? {};
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
  const kafkaType = chain.map((e) => str(e.type)).find((t) => t !== undefined);
  const names = new Set(chain.map((e) => str(e.name)));
  const codes = new Set(chain.map((e) => str(e.code)));
  const broker = chain.map((e) => str(e.broker)).find((b) => b !== undefined);
  const detail = str(innermost.message) ?? String(err);
  const protocolRefresh = chain.some((e) => e.name === 'KafkaJSProtocolError' && e.retriable === true);
  const metadataRefreshed = protocolRefresh || [...names].some((n) => n !== undefined && REFRESHING_NAMES.has(n));
  const failure = (cause: ProduceFailureCause): ProduceFailure => ({ cause, kafkaType, broker, detail, metadataRefreshed });

  if (kafkaType !== undefined && REQUEST_TYPES.has(kafkaType)) return failure('request');
  if (kafkaType !== undefined && LEADER_TYPES.has(kafkaType)) return failure('leader-lost');
  if (kafkaType !== undefined && REPLICA_TYPES.has(kafkaType)) return failure('not-enough-replicas');
  if (kafkaType === 'UNKNOWN_TOPIC_OR_PARTITION') return failure('partition-unknown');
  // A leader id in the metadata that the producer has no broker for, or a partition without a leader.
  if (names.has('KafkaJSBrokerNotFound') || /Invalid partition metadata/.test(detail)) return failure('leader-lost');
  if (names.has('KafkaJSConnectionError') || names.has('KafkaJSConnectionClosedError') || [...codes].some((c) => c !== undefined && NETWORK_CODES.has(c))) {
    return failure('broker-unreachable');
  }
  if (names.has('KafkaJSRequestTimeoutError') || names.has('DeadlineExceededError') || (kafkaType !== undefined && TIMEOUT_TYPES.has(kafkaType))) {
    return failure('ack-timeout');
  }
  return failure('other');
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
