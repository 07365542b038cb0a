// Record formats 2 (a 1.0 WriteRequest) and 3 (symbolized float series) in one partition:
// a series is one series whichever format carried its samples, value bits survive, a
// replay appends nothing twice and a corrupt record is skipped, counted.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { STALE_NAN_BITS, encodeWriteRequest, parseWriteRequest, symbolizeSeries, type SeriesInput } from '@strata/remote-write';
import { createLogger } from '@strata/service';
import { Ingester, type IngestRecord } from './index.ts';

const T0 = 1_700_000_000_000;

function records(timeseries: SeriesInput[], offset: number): { v2: IngestRecord; v3: IngestRecord } {
  const value = encodeWriteRequest({ timeseries });
  return {
    v2: { tenant: 'team-a', offset: BigInt(offset), value },
    v3: { tenant: 'team-a', offset: BigInt(offset), value: symbolizeSeries(parseWriteRequest(value).series.map((s) => s.raw))!, format: 'symbolized' },
  };
}

const cpu = (c: string, mode: string, value: number, t: number, stale = false): SeriesInput => ({
  labels: [
    { name: '__name__', value: 'node_cpu_seconds_total' },
    { name: 'cpu', value: c },
    { name: 'instance', value: 'host-1:9100' },
    { name: 'mode', value: mode },
  ],
  samples: [{ value, timestamp: t, stale }],
});

test('format 2 and format 3 records of the same series append to one series; a replay appends nothing twice; a corrupt record is skipped', async () => {
  const registry = new Registry();
  let feed!: (b: IngestRecord[]) => Promise<void> | void;
  const ingester = new Ingester({
    identity: { id: 'ingester-zone-a-0', zone: 'a', partition: 0 },
    maxLagForReady: 0,
    logger: createLogger('test', 'silent'),
    registry,
    createSource: (onRecords) => {
      feed = onRecords;
      return {
        start: async () => undefined,
        stop: async () => undefined,
        waitCaughtUp: async () => undefined,
        commit: async () => undefined,
        position: () => 0n,
      };
    },
  });
  await ingester.start();
  const first = records([cpu('0', 'idle', 1, T0), cpu('0', 'user', 2, T0)], 0);
  const second = records([cpu('0', 'idle', 3, T0 + 15_000), cpu('1', 'idle', 4, T0 + 15_000)], 1);
  const third = records([cpu('0', 'idle', NaN, T0 + 30_000, true), cpu('0', 'user', 5, T0 + 30_000)], 2);
  await feed([first.v2, second.v3, third.v2]);
  // A restart replays the same offsets in the other format: nothing is appended twice.
  await feed([first.v3, second.v2, third.v3]);
  await feed([{ tenant: 'team-a', offset: 3n, value: Buffer.from([0x2a, 0x05, 0x0a]), format: 'symbolized' }]);

  const head = ingester.head('team-a')!;
  assert.equal(head.numSeries, 3);
  const idle = head.select(
    [
      { type: '=', name: 'mode', value: 'idle' },
      { type: '=', name: 'cpu', value: '0' },
    ],
    T0,
    T0 + 60_000,
  );
  assert.equal(idle.length, 1);
  assert.deepEqual([...idle[0].timestamps], [T0, T0 + 15_000, T0 + 30_000]);
  assert.deepEqual([...idle[0].values.slice(0, 2)], [1, 3]);
  const bits = new BigUint64Array(idle[0].values.buffer, idle[0].values.byteOffset, idle[0].values.length);
  assert.equal(bits[2], STALE_NAN_BITS, 'the stale marker keeps its bits through format 3');

  const counter = async (name: string) => (await registry.getSingleMetric(name)!.get()).values;
  const appended = (await counter('strata_ingester_samples_appended_total')).find((v) => v.labels.tenant === 'team-a')?.value;
  const rejected = await counter('strata_ingester_samples_rejected_total');
  assert.equal(appended, 6);
  // The last record's samples are each series' newest (duplicates, the stale marker compared by its bits); the older ones are out of order.
  assert.equal(rejected.find((v) => v.labels.reason === 'duplicate')?.value, 3);
  assert.equal(rejected.find((v) => v.labels.reason === 'out-of-order')?.value, 3);
  assert.equal(rejected.find((v) => v.labels.reason === 'corrupt-record')?.value, 1);
  await ingester.stop();
});
