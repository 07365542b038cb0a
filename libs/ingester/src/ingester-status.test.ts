// The ingester's status and user stats: replay progress while catching up,
// the lag asked from the source, series and ingestion rate per tenant.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { encodeWriteRequest } from '@strata/remote-write';
import { createLogger } from '@strata/service';
import { Ingester, type IngestRecord, type RecordSource } from './index.ts';

const record = (tenant: string, offset: number, series: number): IngestRecord => ({
  tenant,
  offset: BigInt(offset),
  value: encodeWriteRequest({
    timeseries: Array.from({ length: series }, (_, s) => ({
      labels: [
        { name: '__name__', value: 'm' },
        { name: 's', value: String(s) },
      ],
      samples: [{ value: 1, timestamp: 1_700_000_000_000 + offset }],
    })),
  }),
});

test('status: replaying with progress until caught up, then running with the lag; user stats per tenant', async () => {
  let deliver!: (b: IngestRecord[]) => Promise<void> | void;
  let caughtUp!: () => void;
  let progress!: (consumed: bigint, end: bigint) => void;
  let next = 0n;
  const ingester = new Ingester({
    identity: { id: 'ingester-zone-b-3', zone: 'b', partition: 3 },
    maxLagForReady: 0,
    logger: createLogger('test', 'silent'),
    registry: new Registry(),
    createSource: (onRecords): RecordSource => {
      deliver = onRecords;
      return {
        start: async () => undefined,
        stop: async () => undefined,
        waitCaughtUp: (_max, onProgress) => {
          progress = onProgress!;
          return new Promise<void>((r) => (caughtUp = r));
        },
        commit: async () => undefined,
        position: () => next,
        lag: async () => 7n,
      };
    },
  });
  await ingester.start();
  await deliver([record('t1', 0, 4)]);
  next = 1n;
  progress(1n, 10n);
  const replaying = await ingester.status();
  assert.equal(replaying.state, 'replaying');
  assert.deepEqual(replaying.replay, { consumed: '1', end: '10' });
  assert.match(replaying.notReadyReason ?? '', /replaying partition 3: 1 of 10/);

  caughtUp();
  await new Promise((r) => setImmediate(r));
  await deliver([record('t2', 1, 2), record('t1', 2, 4)]);
  next = 3n;
  const running = await ingester.status();
  assert.deepEqual(
    {
      state: running.state,
      replay: running.replay,
      ready: running.notReadyReason,
      lag: running.lagRecords,
      next: running.nextOffset,
      series: running.series,
      tenants: running.tenants,
      partition: running.partition,
      zone: running.zone,
    },
    { state: 'running', replay: undefined, ready: undefined, lag: 7, next: '3', series: 6, tenants: 2, partition: 3, zone: 'b' },
  );
  assert.deepEqual(
    ingester.allUserStats().map((u) => [u.tenant, u.numSeries, u.ruleIngestionRate]),
    [
      ['t1', 4, 0],
      ['t2', 2, 0],
    ],
  );
  assert.deepEqual(ingester.userStats('nobody'), { tenant: 'nobody', numSeries: 0, ingestionRate: 0, apiIngestionRate: 0, ruleIngestionRate: 0 });
  await ingester.stop();
  assert.equal((await ingester.status()).state, 'stopped');
});
