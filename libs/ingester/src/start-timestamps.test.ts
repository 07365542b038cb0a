// Records whose samples carry start (created) timestamps, in both record formats: the ingester
// puts a zero at each start time before its sample, once; a long-lived counter's repeated start
// time and a replay add nothing and count no rejection.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { encodeHistogram, encodeWriteRequest, parseWriteRequest, symbolizeSeries, type SeriesInput } from '@strata/remote-write';
import { createLogger } from '@strata/service';
import { Ingester, type IngestRecord } from './index.ts';

const T0 = 1_700_000_000_000;
const CT = T0 - 45_000;
const NAME = [{ name: '__name__', value: 'jobs_total' }];

function record(timeseries: SeriesInput[], offset: number, symbolized: boolean): IngestRecord {
  const value = encodeWriteRequest({ timeseries });
  if (!symbolized) return { tenant: 't', offset: BigInt(offset), value };
  return { tenant: 't', offset: BigInt(offset), value: symbolizeSeries(parseWriteRequest(value).series.map((s) => s.raw))!, format: 'symbolized' };
}

const sample = (value: number, t: number, startTimestamp: number): SeriesInput => ({ labels: NAME, samples: [{ value, timestamp: t, startTimestamp }] });

async function ingester(registry: Registry) {
  let feed!: (b: IngestRecord[]) => Promise<void> | void;
  const i = new Ingester({
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
  await i.start();
  return { i, feed: (b: IngestRecord[]) => feed(b) };
}

for (const symbolized of [false, true]) {
  test(`start timestamps become zero samples once, silently, from record format ${symbolized ? 3 : 2}`, async () => {
    const registry = new Registry();
    const { i, feed } = await ingester(registry);
    const reset = T0 + 20_000;
    const records = [
      record([sample(3, T0, CT)], 0, symbolized),
      record([sample(5, T0 + 15_000, CT)], 1, symbolized),
      record([sample(1, T0 + 30_000, reset)], 2, symbolized),
    ];
    await feed(records);
    await feed(records); // a replay
    const [s] = i.head('t')!.select([], -Infinity, Infinity);
    assert.deepEqual(
      [...s.timestamps].map((t, k) => [t - T0, s.values[k]]),
      [
        [CT - T0, 0],
        [0, 3],
        [15_000, 5],
        [reset - T0, 0],
        [30_000, 1],
      ],
    );
    const rejected = (await registry.getSingleMetric('strata_ingester_samples_rejected_total')!.get()).values;
    // The replay's samples: two older than the newest, one the newest itself. Its zeros and the repeated start time count nothing.
    assert.deepEqual(Object.fromEntries(rejected.filter((v) => v.value > 0).map((v) => [v.labels.reason, v.value])), { 'out-of-order': 2, duplicate: 1 });
    await i.stop();
  });
}

test('a native histogram start timestamp in a record becomes an empty histogram before it', async () => {
  const { i, feed } = await ingester(new Registry());
  const h = encodeHistogram({
    timestamp: T0,
    startTimestamp: CT,
    float: true,
    histogram: {
      counterResetHint: 'unknown',
      schema: -53,
      zeroThreshold: 0,
      zeroCount: 0,
      count: 3,
      sum: 1.5,
      positiveSpans: [{ offset: 0, length: 2 }],
      negativeSpans: [],
      positiveBuckets: [1, 2],
      negativeBuckets: [],
      customValues: [0.5, 1],
    },
  });
  await feed([{ tenant: 't', offset: 0n, value: encodeWriteRequest({ timeseries: [{ labels: NAME, samples: [], histograms: [h] }] }) }]);
  const [s] = i.head('t')!.select([], -Infinity, Infinity);
  assert.deepEqual([...s.histograms!.timestamps], [CT, T0]);
  const zero = s.histograms!.values[0];
  assert.deepEqual([zero.schema, zero.count, zero.sum, zero.customValues], [-53, 0, 0, [0.5, 1]]);
  await i.stop();
});
