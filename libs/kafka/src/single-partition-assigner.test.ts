// The single-partition assigner without a broker: each member gets the partition it asked for,
// and a partition is never given to two members.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AssignerProtocol, type Assigner, type Cluster, type Logger } from 'kafkajs';
import { SINGLE_PARTITION_PROTOCOL, singlePartitionAssigner } from './single-partition-assigner.ts';

function assigner(partition: number): Assigner {
  return singlePartitionAssigner('ingest', partition)({ cluster: {} as Cluster, groupId: 'g', logger: {} as Logger });
}

function member(memberId: string, partition: number): { memberId: string; memberMetadata: Buffer } {
  return { memberId, memberMetadata: assigner(partition).protocol({ topics: ['ingest'] }).metadata };
}

async function assignments(members: { memberId: string; memberMetadata: Buffer }[]): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const a of await assigner(0).assign({ members, topics: ['ingest'] })) {
    out[a.memberId] = AssignerProtocol.MemberAssignment.decode(a.memberAssignment)?.assignment;
  }
  return out;
}

test('protocol name is stable (members of one group must agree on it)', () => {
  assert.equal(assigner(3).name, SINGLE_PARTITION_PROTOCOL);
  assert.equal(assigner(3).protocol({ topics: ['ingest'] }).name, SINGLE_PARTITION_PROTOCOL);
});

test('each member gets the partition it asked for', async () => {
  assert.deepEqual(await assignments([member('m-b', 5), member('m-a', 2)]), {
    'm-a': { ingest: [2] },
    'm-b': { ingest: [5] },
  });
});

test('two members asking for one partition: only the lowest member id gets it', async () => {
  assert.deepEqual(await assignments([member('m-2', 1), member('m-1', 1)]), {
    'm-1': { ingest: [1] },
    'm-2': {},
  });
});
