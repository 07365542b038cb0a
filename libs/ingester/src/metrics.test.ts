// The ingester's consumption metrics from a scripted partition: lag asked from the source at
// scrape time (only while consuming), receive delay from record timestamps, samples consumed
// and active series per tenant.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { encodeWriteRequest } from '@strata/remote-write';
import { createLogger } from '@strata/service';
import { Ingester, type IngestRecord, type RecordSource } from './index.ts';

test('lag, receive delay, samples consumed and active series per tenant', async () => {
  const registry = new Registry();
  let deliver!: (batch: IngestRecord[]) => Promise<void> | void;
  let lagAsked = 0;
  const source: RecordSource = {
    start: async () => undefined,
    stop: async () => undefined,
    waitCaughtUp: async () => undefined,
    commit: async () => undefined,
    position: () => 0n,
    lag: async () => {
      lagAsked++;
      return 42n;
    },
  };
  const now = 1_700_000_100_000;
  const ingester = new Ingester({
    identity: { id: 'ingester-zone-b-3', zone: 'b', partition: 3 },
    maxLagForReady: 0,
    logger: createLogger('test', 'silent'),
    registry,
    now: () => now,
    createSource: (on) => {
      deliver = on;
      return source;
    },
  });
  const value = (name: string, labels: Record<string, string> = {}) =>
    registry.getMetricsAsJSON().then((all) => {
      // A histogram's _bucket/_count/_sum samples belong to the family without the suffix.
      const m = all.find((x) => x.name === name || name.startsWith(`${x.name}_`));
      type V = { labels: Record<string, string>; sharedLabels?: Record<string, string>; value: number; metricName?: string };
      const v = (m?.values as V[] | undefined)?.find((x) => {
        const all = { ...x.sharedLabels, ...x.labels };
        return (x.metricName ?? m!.name) === name && Object.entries(labels).every(([k, want]) => String(all[k]) === want);
      });
      return v?.value;
    });
  assert.equal(await value('strata_ingester_kafka_partition_lag_records', { partition: '3' }), 0, 'not consuming yet: Kafka is not asked');
  assert.equal(lagAsked, 0);
  await ingester.start();
  const record = (tenant: string, offset: number, series: number, sentAgoMs: number): IngestRecord => ({
    tenant,
    offset: BigInt(offset),
    timestamp: now - sentAgoMs,
    headers: { v: '1' },
    value: encodeWriteRequest({
      timeseries: Array.from({ length: series }, (_, s) => ({
        labels: [
          { name: '__name__', value: 'm' },
          { name: 's', value: String(s) },
        ],
        samples: [
          { value: 1, timestamp: now - 2000 },
          { value: 2, timestamp: now - 1000 },
        ],
      })),
    }),
  });
  await deliver([record('a', 0, 3, 500), record('b', 1, 5, 2500)]);
  assert.equal(await value('strata_ingester_kafka_partition_lag_records', { partition: '3' }), 42);
  assert.ok(lagAsked > 0, 'asked at scrape time');
  assert.equal(await value('strata_ingester_samples_consumed_total', { tenant: 'a' }), 6);
  assert.equal(await value('strata_ingester_samples_consumed_total', { tenant: 'b' }), 10);
  assert.equal(await value('strata_ingester_active_series', { tenant: 'a' }), 3);
  assert.equal(await value('strata_ingester_active_series', { tenant: 'b' }), 5);
  assert.equal(await value('strata_ingester_memory_series'), 8);
  assert.equal(await value('strata_ingester_kafka_receive_delay_seconds_count', { partition: '3' }), 2);
  assert.equal(await value('strata_ingester_kafka_receive_delay_seconds_sum', { partition: '3' }), 3);
  assert.equal(await value('strata_ingester_kafka_receive_delay_seconds_bucket', { partition: '3', le: '1' }), 1);
  await ingester.stop();
  const asked = lagAsked;
  assert.equal(await value('strata_ingester_kafka_partition_lag_records', { partition: '3' }), 42, 'stopped: the last answer');
  assert.equal(lagAsked, asked, 'a stopped ingester does not ask Kafka');
});
