// Ingest storage on a 3-broker cluster (RF=3, min.insync.replicas=2), the drill setup: a killed
// broker costs a few seconds of writes, two down is a clean KafkaUnavailableError, and every
// acknowledged write is there afterwards, in order.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTopic, startKafka, type LocalKafka } from '@strata/local-kafka';
import { IngestWriter } from './ingest-writer.ts';
import { PartitionReader } from './partition-reader.ts';
import { KafkaUnavailableError } from './errors.ts';
import { Collector, sleep } from './test-kafka.ts';

const TOPIC = 'ingest';
const PARTITIONS = 3;
const TIMEOUT_MS = 2000;

describe('3 brokers, RF=3, min.insync.replicas=2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-kafka-3b-'));
  let kafka: LocalKafka;
  let writer: IngestWriter;
  const acked: string[][] = Array.from({ length: PARTITIONS }, () => []);
  let seq = 0;

  /** Writes one record to every partition; returns whether Kafka acknowledged it. */
  async function writeAll(): Promise<boolean> {
    const n = seq++;
    const records = Array.from({ length: PARTITIONS }, (_, p) => ({ partition: p, value: Buffer.from(`w${n}`) }));
    try {
      await writer.write('tenant-3b', records);
      for (let p = 0; p < PARTITIONS; p++) acked[p].push(`w${n}`);
      return true;
    } catch (err) {
      assert.ok(err instanceof KafkaUnavailableError, `unexpected ${(err as Error).name}`);
      return false;
    }
  }

  /** Keeps writing until a write is acknowledged; returns how long that took. */
  async function writeUntilAcked(limitMs: number): Promise<number> {
    const t = Date.now();
    while (!(await writeAll())) {
      assert.ok(Date.now() - t < limitMs, `no acknowledged write within ${limitMs}ms`);
      await sleep(100);
    }
    return Date.now() - t;
  }

  before(async () => {
    const t = Date.now();
    kafka = await startKafka({ dataDir: dir, brokers: 3 });
    console.log(`3-broker start took ${Date.now() - t}ms`);
    await ensureTopic({ brokers: kafka.brokers, topic: TOPIC, partitions: PARTITIONS, replicationFactor: 3, minInsyncReplicas: 2 });
    writer = new IngestWriter({ brokers: kafka.brokers, topic: TOPIC, clientId: 'writer-3b', timeoutMs: TIMEOUT_MS });
    await writer.start();
  });

  after(async () => {
    await writer?.stop();
    const t = Date.now();
    await kafka?.stop();
    console.log(`3-broker stop took ${Date.now() - t}ms`);
    rmSync(dir, { recursive: true, force: true });
  });

  test('writes are acknowledged with all brokers up', async () => {
    for (let i = 0; i < 5; i++) assert.equal(await writeAll(), true);
  });

  test('a kill -9ed broker costs a few seconds of writes at most', async () => {
    await kafka.stopBroker(0, 'SIGKILL');
    const took = await writeUntilAcked(20_000);
    console.log(`first acknowledged write ${took}ms after kill -9 of one broker`);
    for (let i = 0; i < 5; i++) assert.equal(await writeAll(), true);
  });

  test('with two brokers down writes fail fast with KafkaUnavailableError', async () => {
    await kafka.stopBroker(1);
    const t = Date.now();
    const ok = await writeAll();
    assert.equal(ok, false);
    assert.ok(Date.now() - t <= TIMEOUT_MS + 500);
  });

  test('restarted brokers take writes again', async () => {
    await kafka.startBroker(0);
    await kafka.startBroker(1);
    const took = await writeUntilAcked(20_000);
    console.log(`first acknowledged write ${took}ms after both brokers were back`);
    for (let i = 0; i < 5; i++) assert.equal(await writeAll(), true);
  });

  test('every acknowledged write is there, in order, on every partition', async () => {
    for (let p = 0; p < PARTITIONS; p++) {
      const c = new Collector();
      const r = new PartitionReader({ brokers: kafka.brokers, topic: TOPIC, partition: p, consumerGroup: `reader-3b-${p}`, startFrom: 'earliest', onRecords: c.onRecords });
      await r.start();
      await r.waitCaughtUp(0);
      await r.stop();
      // Unacknowledged writes may have landed too (a timeout is not a failure); acked ones must all be there, in order.
      const got = c.values();
      let i = 0;
      for (const v of got) if (v === acked[p][i]) i++;
      assert.equal(i, acked[p].length, `partition ${p}: acked ${acked[p].length}, found ${i} in order among ${got.length}`);
    }
  });
});
