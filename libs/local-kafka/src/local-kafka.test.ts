// Starts a real 1-node Kafka, creates a topic, produces and consumes through it, stops it;
// also checks that a failed start leaves no broker process behind.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Consumer, MessagesStreamModes, Producer, ProduceAcks } from '@platformatic/kafka';
import { ensureTopic, startKafka, type LocalKafka } from './index.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids of java processes whose command line mentions `dir` (our brokers put their config path there). */
function javaProcessesUnder(dir: string): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes('java') && l.includes(dir))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

describe('local kafka, 1 broker', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-local-kafka-'));
  let kafka: LocalKafka;

  before(async () => {
    const t = Date.now();
    kafka = await startKafka({ dataDir: join(dir, 'cluster'), brokers: 1 });
    console.log(`1-broker start took ${Date.now() - t}ms`);
  });

  after(async () => {
    await kafka?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('listens on loopback and reports a live pid', () => {
    assert.equal(kafka.brokers.length, 1);
    assert.match(kafka.brokers[0], /^127\.0\.0\.1:\d+$/);
    assert.equal(kafka.pids.length, 1);
    assert.ok(alive(kafka.pids[0]));
  });

  test('ensureTopic creates once, then leaves the topic alone', async () => {
    const opts = { brokers: kafka.brokers, topic: 'ingest', partitions: 3, replicationFactor: 1 };
    assert.deepEqual(await ensureTopic(opts), { created: true, partitions: 3 });
    assert.deepEqual(await ensureTopic({ ...opts, partitions: 5 }), { created: false, partitions: 3 });
  });

  test('produces with acks=all and consumes the records back in order', async () => {
    const producer = new Producer({ clientId: 'local-kafka-test', bootstrapBrokers: kafka.brokers, autocreateTopics: false });
    const values = Array.from({ length: 20 }, (_, i) => `v${i}`);
    await producer.send({
      acks: ProduceAcks.ALL,
      messages: values.map((value) => ({ topic: 'ingest', key: Buffer.from('tenant-a'), value: Buffer.from(value), partition: 1 })),
    });
    await producer.close();

    const consumer = new Consumer({ clientId: 'local-kafka-test', groupId: 'local-kafka-test', bootstrapBrokers: kafka.brokers });
    const stream = await consumer.consume({ topics: ['ingest'], mode: MessagesStreamModes.EARLIEST, autocommit: false });
    const got: string[] = [];
    const timer = setTimeout(() => void stream.close(), 30_000);
    for await (const message of stream) {
      assert.equal(message.partition, 1);
      got.push(message.value.toString());
      if (got.length === values.length) break;
    }
    clearTimeout(timer);
    await stream.close();
    await consumer.close();
    assert.deepEqual(got, values, `consumed ${got.length} records`);
  });

  test('stop terminates the broker process', async () => {
    const [pid] = kafka.pids;
    const t = Date.now();
    await kafka.stop();
    console.log(`stop took ${Date.now() - t}ms`);
    assert.equal(alive(pid), false);
  });
});

describe('local kafka, failed start', () => {
  test('a broker that cannot start is reported with its log and not left running', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-local-kafka-bad-'));
    try {
      await assert.rejects(startKafka({ dataDir: dir, brokers: 1, jvmArgs: ['-Dkafka.test=1', '-XX:+NoSuchJvmFlagForStrata'] }), /exited/);
      assert.deepEqual(javaProcessesUnder(dir), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a start that times out kills the broker it spawned', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-local-kafka-slow-'));
    try {
      await assert.rejects(startKafka({ dataDir: dir, brokers: 1, startTimeoutMs: 300 }), /timed out/);
      assert.deepEqual(javaProcessesUnder(dir), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
