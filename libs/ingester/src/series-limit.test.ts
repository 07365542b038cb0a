// The per-tenant series limit in the ingester: new series beyond this
// ingester's share are dropped (counted, logged once a minute); samples of
// existing series still append, and other tenants are unaffected.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { encodeWriteRequest, parseWriteRequest, symbolizeSeries } from '@strata/remote-write';
import { Ingester, type IngestRecord, type IngesterLimits } from './index.ts';

const T0 = 1_700_000_000_000;

for (const format of ['write-request', 'symbolized'] as const) {
  test(`${format} records: new series beyond maxSeries are dropped and counted; existing series keep appending`, () => seriesLimit(format));
}

async function seriesLimit(format: 'write-request' | 'symbolized'): Promise<void> {
  const record = (tenant: string, offset: number, names: string[], t: number): IngestRecord => {
    const timeseries = names.map((n) => ({ labels: [{ name: '__name__', value: n }], samples: [{ value: 1, timestamp: t }] }));
    const value = encodeWriteRequest({ timeseries });
    if (format === 'write-request') return { tenant, offset: BigInt(offset), value };
    return { tenant, offset: BigInt(offset), value: symbolizeSeries(parseWriteRequest(value).series.map((s) => s.raw))!, format };
  };
  const lines: { msg: string; tenant?: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s) as { msg: string }) });
  const registry = new Registry();
  let limit = 2;
  const limits: IngesterLimits = { outOfOrderTimeWindowMs: () => 0, maxExemplars: () => 0, maxSeries: (t) => (t === 'small' ? limit : 0) };
  let feed!: (b: IngestRecord[]) => Promise<void> | void;
  const ingester = new Ingester({
    identity: { id: 'ingester-zone-a-0', zone: 'a', partition: 0 },
    maxLagForReady: 0,
    logger,
    registry,
    limits,
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
  await feed([record('small', 0, ['a', 'b', 'c', 'd'], T0), record('big', 1, ['a', 'b', 'c', 'd'], T0)]);
  assert.equal(ingester.head('small')!.numSeries, 2);
  assert.equal(ingester.head('big')!.numSeries, 4, 'a tenant without a limit is unaffected');
  await feed([record('small', 2, ['a', 'b', 'e'], T0 + 1000)]);
  const small = ingester.head('small')!;
  assert.equal(small.numSeries, 2);
  assert.equal(small.select([{ type: '=', name: '__name__', value: 'a' }], T0, T0 + 1000)[0].timestamps.length, 2, 'existing series still append');

  const rejected = (await registry.getSingleMetric('strata_ingester_samples_rejected_total')!.get()).values.find(
    (v) => v.labels.tenant === 'small' && v.labels.reason === 'per-user-series-limit',
  );
  assert.equal(rejected?.value, 3);
  const warnings = lines.filter((l) => /reached its series limit/.test(l.msg));
  assert.equal(warnings.length, 1, 'logged once per tenant per minute');
  assert.match(warnings[0].msg, /tenant small reached its series limit of 2 in ingester-zone-a-0 .*raise max_global_series_per_user/);

  limit = 3;
  await feed([record('small', 3, ['e'], T0 + 2000)]);
  assert.equal(small.numSeries, 3, 'a raised limit applies to the next record');
  await ingester.stop();
}
