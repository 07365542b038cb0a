import { test } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import { classifyProduceError, describeFailure } from './produce-failure.ts';

const { KafkaJSConnectionError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError, KafkaJSRequestTimeoutError } = kafkajs;

// What kafkajs throws from a send with retries: 0 — the error wrapped in KafkaJSNumberOfRetriesExceeded.
const wrapped = (e: Error) => new KafkaJSNumberOfRetriesExceeded(e, { retryCount: 0, retryTime: 100 });
const timeout = (message: string) =>
  new KafkaJSRequestTimeoutError(message, { broker: '127.0.0.1:9092', clientId: 'c', correlationId: 1, createdAt: 0, sentAt: 0, pendingDuration: 0 });
const protocol = (type: string, code: number, retriable = true) =>
  new KafkaJSProtocolError({ message: `broker said ${type}`, type, code, retriable } as unknown as Error);

test('kafkajs errors are classified by what happened to the write', () => {
  const cases: [Error, string, boolean][] = [
    [wrapped(protocol('NOT_LEADER_FOR_PARTITION', 6)), 'leader-lost', true],
    [wrapped(protocol('LEADER_NOT_AVAILABLE', 5)), 'leader-lost', true],
    [wrapped(Object.assign(new Error('Broker 2 not found in the cached metadata'), { name: 'KafkaJSBrokerNotFound' })), 'leader-lost', false],
    [wrapped(new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9092', { broker: '127.0.0.1:9092', code: 'ECONNREFUSED' })), 'broker-unreachable', true],
    [wrapped(timeout('Request Produce(key: 0, version: 7) timed out')), 'ack-timeout', false],
    [wrapped(protocol('REQUEST_TIMED_OUT', 7)), 'ack-timeout', true],
    [wrapped(protocol('NOT_ENOUGH_REPLICAS', 19)), 'not-enough-replicas', true],
    [wrapped(protocol('MESSAGE_TOO_LARGE', 10, false)), 'request', false],
    [new Error('something else'), 'other', false],
  ];
  for (const [err, cause, refreshed] of cases) {
    const f = classifyProduceError(err);
    assert.equal(f.cause, cause, `${err.message} (${String((err as { cause?: Error }).cause?.message)})`);
    assert.equal(f.metadataRefreshed, refreshed, `metadata refreshed after ${cause}`);
  }
  const refused = classifyProduceError(wrapped(new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9092', { broker: '127.0.0.1:9092' })));
  assert.equal(refused.broker, '127.0.0.1:9092');
});

test('the sender reads what happened to which partitions, never "partitions were just added" for a moved leader', () => {
  const lost = describeFailure(classifyProduceError(wrapped(protocol('NOT_LEADER_FOR_PARTITION', 6))), [0], 'ingest', 10_000);
  assert.match(lost, /^Kafka leader lost: the leader of partition 0 of topic ingest went away and no new leader took the write within 10000ms/);
  assert.doesNotMatch(lost, /just added/);
  const down = describeFailure(classifyProduceError(wrapped(new KafkaJSConnectionError('connect ECONNREFUSED', { broker: 'b:9092' }))), [1, 2], 'ingest', 10_000);
  assert.match(down, /^Kafka broker unreachable: the broker leading partitions 1,2 of topic ingest \(b:9092\)/);
  const slow = describeFailure(classifyProduceError(timeout('timed out')), [3], 'ingest', 2000);
  assert.match(slow, /^timeout waiting for Kafka's acks: the leader of partition 3 .* within 2000ms/);
});
