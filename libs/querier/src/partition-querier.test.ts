import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelsFromRecord } from '@strata/model';
import { MemoryQuerier } from '@strata/model/testing';
import { createLogger } from '@strata/service';
import { PartitionQuerier } from './partition-querier.ts';

const logger = createLogger('test', 'silent');

function replicas(): { a: MemoryQuerier; b: MemoryQuerier; pq: PartitionQuerier } {
  const a = new MemoryQuerier();
  const b = new MemoryQuerier();
  for (const q of [a, b]) q.append('t', labelsFromRecord({ __name__: 'up' }), [1], [1]);
  const pq = new PartitionQuerier({
    replicas: [
      { id: 'ingester-zone-a-0', zone: 'zone-a', partition: 0, querier: a },
      { id: 'ingester-zone-b-0', zone: 'zone-b', partition: 0, querier: b },
    ],
    preferredZone: 'zone-a',
    logger,
  });
  return { a, b, pq };
}

test('a failing zone is failed over, an aborted query is not', async () => {
  const failing = replicas();
  failing.a.select = async () => {
    throw new Error('ingester-zone-a-0: unavailable');
  };
  assert.equal((await failing.pq.select({ tenant: 't', matchers: [], mint: 0, maxt: 10 })).length, 1);
  assert.equal(failing.b.calls.length, 1);

  const { a, b, pq } = replicas();
  a.delayMs = 5_000;
  const ac = new AbortController();
  const p = pq.select({ tenant: 't', matchers: [], mint: 0, maxt: 10, signal: ac.signal });
  ac.abort();
  await assert.rejects(p, { code: 'err-strata-query-aborted', kind: 'canceled' });
  assert.equal(b.calls.length, 0, 'nobody waits for the other zone');
});
