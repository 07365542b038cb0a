import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MultipleErrors, NetworkError, ProtocolError, ResponseError, TimeoutError, UserError } from '@platformatic/kafka';
import { classifyProduceError, describeFailure } from './produce-failure.ts';

// What @platformatic/kafka rejects a send with: a broker's per-partition error code comes as a
// ResponseError holding a ProtocolError; a failed connection as a NetworkError with the socket
// error as its cause; a request with no answer in time as a TimeoutError.
const response = (type: string) => new ResponseError(0, 9, { '/responses/0/partitionResponses/0': [protocolCode(type), null] }, {});
const refused = (broker: string) =>
  new NetworkError(`Connection to ${broker} failed.`, { cause: Object.assign(new Error(`connect ECONNREFUSED ${broker}`), { code: 'ECONNREFUSED' }) });
const noLeader = () =>
  new NetworkError('Cannot get a connection: the broker is not available in the current cluster metadata.', { hasStaleMetadata: true, broker: undefined });

function protocolCode(type: string): number {
  return (new ProtocolError(type) as unknown as { apiCode: number }).apiCode;
}

test('@platformatic/kafka errors are classified by what happened to the write', () => {
  const cases: [Error, string, boolean][] = [
    [response('NOT_LEADER_OR_FOLLOWER'), 'leader-lost', true],
    [response('LEADER_NOT_AVAILABLE'), 'leader-lost', true],
    [noLeader(), 'leader-lost', true],
    [refused('127.0.0.1:9092'), 'broker-unreachable', true],
    [new NetworkError('Connection closed'), 'broker-unreachable', true],
    [new TimeoutError('Connection to 127.0.0.1:9092 timed out.'), 'broker-unreachable', true],
    [new MultipleErrors('Cannot connect to any broker.', [refused('a:1'), refused('b:2')]), 'broker-unreachable', true],
    [new TimeoutError('Request timed out'), 'ack-timeout', false],
    [response('REQUEST_TIMED_OUT'), 'ack-timeout', false],
    [response('NOT_ENOUGH_REPLICAS'), 'not-enough-replicas', true],
    [response('MESSAGE_TOO_LARGE'), 'request', true],
    [new UserError('Unknown topic ingest.'), 'partition-unknown', true],
    [new Error('something else'), 'other', true],
  ];
  for (const [err, cause, refreshSuffices] of cases) {
    const f = classifyProduceError(err);
    assert.equal(f.cause, cause, `${err.message} (${String((err as { cause?: Error }).cause?.message)})`);
    assert.equal(f.metadataRefreshed, refreshSuffices, `fresh metadata is enough after ${cause}`);
  }
  assert.equal(classifyProduceError(response('NOT_LEADER_OR_FOLLOWER')).kafkaType, 'NOT_LEADER_OR_FOLLOWER');
  assert.equal(classifyProduceError(refused('127.0.0.1:9092')).broker, '127.0.0.1:9092');
});

test('the sender reads what happened to which partitions, never "partitions were just added" for a moved leader', () => {
  const lost = describeFailure(classifyProduceError(response('NOT_LEADER_OR_FOLLOWER')), [0], 'ingest', 10_000);
  assert.match(lost, /^Kafka leader lost: the leader of partition 0 of topic ingest went away and no new leader took the write within 10000ms/);
  assert.doesNotMatch(lost, /just added/);
  const down = describeFailure(classifyProduceError(refused('b:9092')), [1, 2], 'ingest', 10_000);
  assert.match(down, /^Kafka broker unreachable: the broker leading partitions 1,2 of topic ingest \(b:9092\)/);
  const slow = describeFailure(classifyProduceError(new TimeoutError('Request timed out')), [3], 'ingest', 2000);
  assert.match(slow, /^timeout waiting for Kafka's acks: the leader of partition 3 .* within 2000ms/);
});
