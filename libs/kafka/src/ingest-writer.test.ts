// IngestWriter against a real broker: acked writes arrive in order, a stopped broker is a fast
// KafkaUnavailableError, and writes recover by themselves once the broker is back. Delivery is at
// least once: an attempt whose answer is lost (a timeout under load, a connection reset by a
// restarting broker) may have landed and is sent again, so a record can be there twice in a row.
// The ingesters append an identical sample once; these tests compare values with repeats collapsed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { IngestWriter } from './ingest-writer.ts';
import { PartitionReader } from './partition-reader.ts';
import { KafkaUnavailableError } from './errors.ts';
import { RECORD_FORMAT_WRITE_REQUEST } from './record.ts';
import { Admin, ListOffsetTimestamps } from '@platformatic/kafka';
import { Collector, sleep, startTestKafka, type TestKafka } from './test-kafka.ts';

const TOPIC = 'ingest';
const TIMEOUT_MS = 2000;

function rec(partition: number, value: string): { partition: number; value: Buffer } {
  return { partition, value: Buffer.from(value) };
}

function readAll(brokers: string[], partition: number, expect: number, group: string): Promise<Collector> {
  return readAllOf(brokers, TOPIC, partition, expect, group);
}

async function readAllOf(brokers: string[], topic: string, partition: number, expect: number, group: string): Promise<Collector> {
  const c = new Collector();
  const reader = new PartitionReader({ brokers, topic, partition, consumerGroup: group, startFrom: 'earliest', onRecords: c.onRecords });
  await reader.start();
  try {
    await c.waitFor(expect, 30_000, true);
  } finally {
    await reader.stop();
  }
  return c;
}

async function waitForLeaders(admin: Admin, topic: string, partitions: number): Promise<void> {
  for (const t = Date.now(); ; await sleep(100)) {
    const md = await admin.metadata({ topics: [topic], forceUpdate: true }).catch(() => undefined);
    const ps = md?.topics.get(topic)?.partitions ?? [];
    if (ps.length === partitions && ps.every((p) => p.leader >= 0)) return;
    assert.ok(Date.now() - t < 10_000, `topic ${topic} has no leaders after 10s`);
  }
}

/** Kafka's compression codec ids (the low 3 bits of a record batch's attributes). */
const CODEC_IDS = { none: 0, snappy: 2, lz4: 3, zstd: 4 } as const;

/** The codec of each record batch in a partition's log segments on the broker's disk. */
function batchCodecs(dataDir: string, topic: string, partition: number): number[] {
  const codecs: number[] = [];
  for (const node of readdirSync(dataDir).filter((d) => d.startsWith('node-'))) {
    const dir = join(dataDir, node, 'data', `${topic}-${partition}`);
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.log'))) {
      const log = readFileSync(join(dir, f));
      // A batch: baseOffset int64, batchLength int32 (bytes after it), partitionLeaderEpoch int32, magic int8, crc int32, attributes int16.
      for (let at = 0; at + 23 <= log.length; at += 12 + log.readInt32BE(at + 8)) codecs.push(log.readInt16BE(at + 21) & 0x7);
    }
  }
  return codecs;
}

describe('IngestWriter', () => {
  let env: TestKafka;
  let writer: IngestWriter;

  before(async () => {
    env = await startTestKafka({ [TOPIC]: 4 });
    writer = new IngestWriter({ brokers: env.kafka.brokers, topic: TOPIC, clientId: 'writer-test', timeoutMs: TIMEOUT_MS });
    await writer.start();
  });

  after(async () => {
    await writer?.stop();
    await env?.cleanup();
  });

  test('partitionCount comes from topic metadata', async () => {
    assert.equal(await writer.partitionCount(), 4);
  });

  test('acked writes are consumed in order with tenant key and version header', async () => {
    await writer.write('tenant-a', [rec(0, 'a0'), rec(1, 'a1'), rec(2, 'a2')]);
    await writer.write('tenant-b', [rec(1, 'b1'), rec(3, 'b3')]);
    for (let i = 0; i < 20; i++) await writer.write('tenant-c', [rec(1, `c${i}`)]);
    await writer.write('tenant-a', []);

    const c = await readAll(env.kafka.brokers, 1, 22, 'writer-test-read-1');
    assert.deepEqual(c.distinctValues(), ['a1', 'b1', ...Array.from({ length: 20 }, (_, i) => `c${i}`)]);
    assert.deepEqual(
      ['a1', 'b1'].map((v) => c.records.find((r) => r.value.toString() === v)?.tenant),
      ['tenant-a', 'tenant-b'],
    );
    assert.ok(c.records.every((r) => r.headers.v === RECORD_FORMAT_WRITE_REQUEST));
    assert.deepEqual(
      c.records.map((r) => r.offset),
      c.records.map((_, i) => BigInt(i)),
    );
  });

  test('extra headers travel with the record, v cannot be overridden', async () => {
    await writer.write('tenant-h', [{ partition: 3, value: Buffer.from('h'), headers: { traceparent: '00-abc-def-01', v: '9' } }]);
    const c = await readAll(env.kafka.brokers, 3, 2, 'writer-test-read-3');
    const last = c.records[c.records.length - 1];
    assert.equal(last.value.toString(), 'h');
    assert.equal(last.headers.traceparent, '00-abc-def-01');
    assert.equal(last.headers.v, RECORD_FORMAT_WRITE_REQUEST);
  });

  test('a write while the broker is down rejects with KafkaUnavailableError within the timeout', async () => {
    await env.kafka.stopBroker(0);
    for (let i = 0; i < 2; i++) {
      const t = Date.now();
      await assert.rejects(writer.write('tenant-a', [rec(0, `lost-${i}`)]), KafkaUnavailableError);
      const took = Date.now() - t;
      assert.ok(took <= TIMEOUT_MS + 500, `write took ${took}ms`);
    }
  });

  test('after the broker restarts, writes succeed again and acked ones are still there', async () => {
    await env.kafka.startBroker(0);
    const t = Date.now();
    await writer.write('tenant-a', [rec(0, 'after-restart')]);
    console.log(`first write after restart took ${Date.now() - t}ms`);
    const c = await readAll(env.kafka.brokers, 0, 2, 'writer-test-read-0');
    assert.deepEqual(c.distinctValues(), ['a0', 'after-restart']);
  });

  test('a broker restart between two writes does not wedge the producer', async () => {
    await writer.write('tenant-a', [rec(2, 'before')]);
    await env.kafka.stopBroker(0);
    await env.kafka.startBroker(0);
    const t = Date.now();
    await writer.write('tenant-a', [rec(2, 'after')]);
    console.log(`write after an unseen restart took ${Date.now() - t}ms`);
    const c = await readAll(env.kafka.brokers, 2, 3, 'writer-test-read-2');
    assert.deepEqual(c.distinctValues(), ['a2', 'before', 'after']);
  });

  test('a frozen broker (SIGSTOP) is a timeout, and writes recover once it thaws', async () => {
    const [pid] = env.kafka.pids;
    process.kill(pid, 'SIGSTOP');
    try {
      for (let i = 0; i < 2; i++) {
        const t = Date.now();
        await assert.rejects(writer.write('tenant-a', [rec(2, `frozen-${i}`)]), KafkaUnavailableError);
        const took = Date.now() - t;
        assert.ok(took <= TIMEOUT_MS + 500, `write took ${took}ms`);
      }
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const t = Date.now();
    let attempts = 0;
    for (;;) {
      attempts++;
      try {
        await writer.write('tenant-a', [rec(2, 'thawed')]);
        break;
      } catch (err) {
        assert.ok(err instanceof KafkaUnavailableError);
        assert.ok(Date.now() - t < 15_000, 'writes did not recover within 15s of SIGCONT');
      }
    }
    console.log(`write after SIGCONT succeeded after ${attempts} attempt(s), ${Date.now() - t}ms`);
  });

  test('a write to a partition the topic does not have is rejected, never silently dropped', async () => {
    const t = Date.now();
    await assert.rejects(writer.write('tenant-a', [rec(0, 'x'), rec(9, 'nowhere')]), KafkaUnavailableError);
    assert.ok(Date.now() - t <= TIMEOUT_MS + 500);
  });

  test('writes that wait behind the in-flight cap go out together, each partition within the batch bound', async () => {
    const admin = new Admin({ clientId: 'writer-test-admin-batch', bootstrapBrokers: env.kafka.brokers });
    await admin.createTopics({ topics: ['batched'], partitions: 2, replicas: 1 });
    await waitForLeaders(admin, 'batched', 2);
    await admin.close();
    const requests: number[] = [];
    const batched = new IngestWriter({
      brokers: env.kafka.brokers,
      topic: 'batched',
      clientId: 'writer-batch',
      timeoutMs: 10_000,
      maxInFlight: 1,
      onProduceRequest: (n) => requests.push(n),
    });
    try {
      await batched.start();
      // One write first, so a leader the new topic is still settling on is found before counting.
      await batched.write('t', [rec(0, 'warm-0'), rec(1, 'warm-1')]);
      requests.length = 0;
      const values = Array.from({ length: 60 }, (_, i) => `w${i}`);
      await Promise.all(values.map((v, i) => batched.write('t', i % 3 === 0 ? [rec(0, `${v}-0`), rec(1, `${v}-1`)] : [rec(i % 2, `${v}-${i % 2}`)])));
      assert.equal(
        requests.reduce((a, b) => a + b, 0),
        60,
        'every write went out in exactly one request',
      );
      assert.ok(requests.length < 10, `60 writes behind one in-flight request took ${requests.length} requests`);
      const want = (p: number) => [`warm-${p}`, ...values.flatMap((v, i) => (i % 3 === 0 || i % 2 === p ? [`${v}-${p}`] : []))].sort();
      for (const p of [0, 1]) {
        const c = await readAllOf(env.kafka.brokers, 'batched', p, want(p).length, `writer-batch-read-${p}`);
        assert.deepEqual([...new Set(c.records.map((r) => r.value.toString()))].sort(), want(p));
      }

      // A partition's batch stays within maxBatchBytes: 60-byte values, 100 bytes per batch, one write per request.
      const small: number[] = [];
      const bounded = new IngestWriter({
        brokers: env.kafka.brokers,
        topic: 'batched',
        clientId: 'writer-bounded',
        timeoutMs: 10_000,
        maxInFlight: 1,
        maxBatchBytes: 100,
        onProduceRequest: (n) => small.push(n),
      });
      try {
        await bounded.start();
        await Promise.all(Array.from({ length: 10 }, () => bounded.write('t', [{ partition: 0, value: randomBytes(60) }])));
        assert.deepEqual(
          small,
          Array.from({ length: 10 }, () => 1),
        );
      } finally {
        await bounded.stop();
      }
    } finally {
      await batched.stop();
    }
  });

  test('batches compressed whole with each codec are acked by the broker and read back as written', async () => {
    const codecs = ['snappy', 'lz4', 'zstd'] as const;
    const admin = new Admin({ clientId: 'writer-test-admin-codecs', bootstrapBrokers: env.kafka.brokers });
    await admin.createTopics({ topics: ['codecs'], partitions: codecs.length, replicas: 1 });
    await waitForLeaders(admin, 'codecs', codecs.length);
    await admin.close();
    // Values that repeat, as label strings do across records, so each codec has something to shrink.
    const values = Array.from({ length: 20 }, (_, i) => `node_cpu_seconds_total{cpu="${i % 4}",mode="idle"} ${i}`.repeat(20));
    for (const [partition, compression] of codecs.entries()) {
      const w = new IngestWriter({ brokers: env.kafka.brokers, topic: 'codecs', clientId: `writer-${compression}`, timeoutMs: 10_000, compression });
      try {
        await w.start();
        for (const [i, v] of values.entries()) await w.write('t', [{ partition, value: Buffer.from(v), format: i % 2 === 0 ? 'symbolized' : 'write-request' }]);
      } finally {
        await w.stop();
      }
      const c = await readAllOf(env.kafka.brokers, 'codecs', partition, values.length, `writer-codecs-read-${compression}`);
      assert.deepEqual(c.distinctValues(), values, compression);
      assert.deepEqual(
        new Set(batchCodecs(env.kafka.dataDir, 'codecs', partition)),
        new Set([CODEC_IDS[compression]]),
        `${compression}: codec of every batch in the log`,
      );
      const formatOf = new Map(c.records.map((r) => [r.value.toString(), r.format]));
      assert.deepEqual(
        values.map((v) => formatOf.get(v)),
        values.map((_, i) => (i % 2 === 0 ? 'symbolized' : 'write-request')),
        compression,
      );
    }
  });

  test('partitions added to the topic are written to (after at most one retriable rejection)', async () => {
    const admin = new Admin({ clientId: 'writer-test-admin', bootstrapBrokers: env.kafka.brokers });
    await admin.createTopics({ topics: ['grow'], partitions: 2, replicas: 1 });
    await waitForLeaders(admin, 'grow', 2);
    const grow = new IngestWriter({ brokers: env.kafka.brokers, topic: 'grow', clientId: 'writer-grow', timeoutMs: TIMEOUT_MS });
    try {
      await grow.start();
      await grow.write('t', [rec(0, 'p0')]);
      await admin.createPartitions({ topics: [{ name: 'grow', count: 4 }] });
      let rejected = 0;
      for (;;) {
        try {
          await grow.write('t', [rec(3, 'p3')]);
          break;
        } catch (err) {
          assert.ok(err instanceof KafkaUnavailableError);
          assert.ok(++rejected <= 3, 'still rejected after retries');
          await sleep(200);
        }
      }
      const [offsets] = await admin.listOffsets({ topics: [{ name: 'grow', partitions: [{ partitionIndex: 3, timestamp: ListOffsetTimestamps.LATEST }] }] });
      // Written once, or once more per rejected attempt that landed anyway (at least once).
      const end = offsets.partitions.find((o) => o.partitionIndex === 3)?.offset ?? 0n;
      assert.ok(end >= 1n && end <= BigInt(rejected + 1), `partition 3 ends at offset ${end} after ${rejected} rejection(s)`);
    } finally {
      await grow.stop();
      await admin.close();
    }
  });
});
