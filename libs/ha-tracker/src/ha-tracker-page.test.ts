// The HA tracker's status page: the replica elected per tenant and cluster, or why there is none.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKv } from '@strata/ring';
import { createLogger } from '@strata/service';
import { HaTracker } from './ha-tracker.ts';
import { haTrackerPage } from './ha-tracker-page.ts';

test('the page lists each elected replica, and says when the tracker is off', async () => {
  const t = Date.UTC(2026, 0, 2, 3, 4, 5);
  const tracker = new HaTracker({
    kv: new MemoryKv(),
    updateTimeoutMs: 15_000,
    updateTimeoutJitterMaxMs: 0,
    failoverTimeoutMs: 30_000,
    logger: createLogger('test', 'silent'),
    now: () => t,
  });
  await tracker.checkReplica('team-a', 'prod', 'r1');
  const [on] = await haTrackerPage(tracker).sections();
  assert.deepEqual(on.rows, [
    {
      tenant: 'team-a',
      cluster: 'prod',
      'elected replica': 'r1',
      'elected at': '2026-01-02T03:04:05.000Z',
      'last sample received': '2026-01-02T03:04:05.000Z',
      'elected changes': 0,
    },
  ]);
  const [off] = await haTrackerPage(undefined).sections();
  assert.match(off.note ?? '', /-distributor\.ha-tracker\.enable=false/);
  assert.equal(off.rows, undefined);
});
