// PartitionReader against a real broker: catching up on empty and replayed partitions, replay
// from earliest, resume from committed, one batch at a time, failure on a throwing handler, and
// how fast a successor of a kill -9'd reader gets its partition back.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { Admin } from '@platformatic/kafka';
import { IngestWriter } from './ingest-writer.ts';
import { PartitionReader, type PartitionReaderOptions } from './partition-reader.ts';
import { PartitionReaderFailedError } from './errors.ts';
import { fetchLastProducedOffsets } from './offsets.ts';
import { LastProducedOffsetsReader } from './last-produced-offsets.ts';
import { Collector, sleep, startTestKafka, type TestKafka } from './test-kafka.ts';

const TOPIC = 'ingest';

describe('PartitionReader', () => {
  let env: TestKafka;
  let writer: IngestWriter;
  let brokers: string[];
  const readers: PartitionReader[] = [];

  function reader(opts: Omit<PartitionReaderOptions, 'brokers' | 'topic'>): PartitionReader {
    const r = new PartitionReader({ brokers, topic: TOPIC, ...opts });
    readers.push(r);
    return r;
  }

  async function write(partition: number, values: string[]): Promise<void> {
    for (const v of values) await writer.write('tenant-r', [{ partition, value: Buffer.from(v) }]);
  }

  before(async () => {
    env = await startTestKafka({ [TOPIC]: 6 });
    brokers = env.kafka.brokers;
    writer = new IngestWriter({ brokers, topic: TOPIC, clientId: 'reader-test-writer', timeoutMs: 5000 });
    await writer.start();
  });

  after(async () => {
    await Promise.all(readers.map((r) => r.stop()));
    await writer?.stop();
    await env?.cleanup();
  });

  test('waitCaughtUp resolves on an empty partition, where no batch ever arrives', async () => {
    const c = new Collector();
    const r = reader({ partition: 0, consumerGroup: 'reader-empty', startFrom: 'earliest', onRecords: c.onRecords });
    await r.start();
    const progress: [bigint, bigint][] = [];
    await r.waitCaughtUp(0, (consumed, end) => progress.push([consumed, end]));
    assert.deepEqual(progress, [[0n, 0n]]);
    assert.equal(r.position(), 0n);
    assert.equal(await r.lag(), 0n);
    await r.stop();
  });

  test('a restarted reader with earliest replays everything, and waitCaughtUp follows', async () => {
    const values = Array.from({ length: 50 }, (_, i) => `r${i}`);
    await write(1, values);

    const first = new Collector();
    const r1 = reader({ partition: 1, consumerGroup: 'reader-replay', startFrom: 'earliest', onRecords: first.onRecords });
    await r1.start();
    await r1.waitCaughtUp(0);
    assert.deepEqual(first.values(), values);
    await r1.commit(r1.position());
    await r1.stop();

    const second = new Collector();
    const r2 = reader({ partition: 1, consumerGroup: 'reader-replay', startFrom: 'earliest', onRecords: second.onRecords });
    const t = Date.now();
    await r2.start();
    // No group membership: a second reader of the partition starts at once.
    assert.ok(Date.now() - t < 2500, `start after a clean stop took ${Date.now() - t}ms`);
    let calls = 0;
    await r2.waitCaughtUp(0, () => calls++);
    assert.ok(calls >= 1);
    assert.deepEqual(second.values(), values, 'earliest ignores the committed offset');
    assert.equal(r2.position(), 50n);
    assert.equal(await r2.endOffset(), 50n);
    await r2.stop();
  });

  test('committed resumes after the committed offset, or from earliest without one', async () => {
    await write(2, ['c0', 'c1', 'c2', 'c3']);
    const none = new Collector();
    const r0 = reader({ partition: 2, consumerGroup: 'reader-committed', startFrom: 'committed', onRecords: none.onRecords });
    await r0.start();
    await r0.waitCaughtUp(0);
    assert.deepEqual(none.values(), ['c0', 'c1', 'c2', 'c3']);
    await r0.commit(2n);
    await r0.stop();

    await write(2, ['c4']);
    const resumed = new Collector();
    const r1 = reader({ partition: 2, consumerGroup: 'reader-committed', startFrom: 'committed', onRecords: resumed.onRecords });
    await r1.start();
    await r1.waitCaughtUp(0);
    assert.deepEqual(resumed.values(), ['c2', 'c3', 'c4']);
    assert.deepEqual(
      resumed.records.map((r) => r.offset),
      [2n, 3n, 4n],
    );
    await r1.stop();
  });

  test('records written while consuming keep arriving in order, one batch at a time', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const got: string[] = [];
    const r = reader({
      partition: 3,
      consumerGroup: 'reader-live',
      startFrom: 'earliest',
      onRecords: async (batch) => {
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        await sleep(20);
        got.push(...batch.map((b) => b.value.toString()));
        inFlight--;
      },
    });
    await r.start();
    const values = Array.from({ length: 200 }, (_, i) => `l${i}`);
    await Promise.all([write(3, values.slice(0, 100)), write(3, [])]);
    await write(3, values.slice(100));
    await r.waitCaughtUp(0);
    assert.equal(maxInFlight, 1);
    assert.deepEqual(got, values);
    const last = await fetchLastProducedOffsets(brokers, TOPIC);
    assert.equal(last.get(3), 199n);
    assert.equal(last.get(0), -1n);
    assert.equal(last.size, 6);
    // The querier's long-lived reader agrees, and keeps answering on its one admin client.
    const offsets = new LastProducedOffsetsReader({ brokers, topic: TOPIC });
    try {
      assert.deepEqual(await offsets.fetch(), last);
      assert.deepEqual(await offsets.fetch(), last);
    } finally {
      await offsets.stop();
    }
    await r.stop();
  });

  test('a throwing onRecords fails the reader loudly instead of skipping records', async () => {
    await write(4, ['bad']);
    let reported: Error | undefined;
    const r = reader({
      partition: 4,
      consumerGroup: 'reader-fail',
      startFrom: 'earliest',
      onRecords: () => {
        throw new Error('head is broken');
      },
      onError: (err) => {
        reported = err;
      },
    });
    await r.start();
    await assert.rejects(r.waitCaughtUp(0), PartitionReaderFailedError);
    assert.ok(reported instanceof PartitionReaderFailedError);
    assert.match(reported.message, /head is broken/);
    assert.equal(r.position(), 0n);
    await r.stop();
  });

  test('a successor of a kill -9ed reader gets the partition back (timing reported)', async () => {
    await write(5, ['k0', 'k1', 'k2']);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'testdata', 'reader-process.ts'), brokers.join(','), TOPIC, '5', 'reader-kill'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const lines = createInterface({ input: child.stdout });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('child reader did not consume k0..k2')), 30_000);
      lines.on('line', (line) => {
        const ev = JSON.parse(line) as { consumed?: string };
        if (ev.consumed === '3') {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();
    await write(5, ['k3']);

    const c = new Collector();
    const startedAt = Date.now();
    const r = reader({ partition: 5, consumerGroup: 'reader-kill', startFrom: 'committed', onRecords: c.onRecords });
    await r.start();
    const joinedAt = Date.now();
    await c.waitFor(1);
    const firstAt = Date.now();
    console.log(
      `restart after kill -9: start() took ${joinedAt - startedAt}ms, first record ${firstAt - startedAt}ms after start ` +
        `(${firstAt - killedAt}ms after the kill)`,
    );
    assert.deepEqual(c.values(), ['k3']);
    await r.stop();
  });

  test('a running reader survives a broker restart without gaps or duplicates; waiting to catch up rides it out', async () => {
    const c = new Collector();
    const r = reader({ partition: 0, consumerGroup: 'reader-broker-restart', startFrom: 'earliest', onRecords: c.onRecords });
    await r.start();
    await write(0, ['b0', 'b1']);
    await c.waitFor(2);
    await env.kafka.stopBroker(0);
    // Asked while no broker answers (an ingester starting beside a restarting or overloaded Kafka): it waits, it does not fail.
    let settled: 'caught up' | Error | undefined;
    const caughtUp = r.waitCaughtUp(0).then(
      () => (settled = 'caught up'),
      (err: Error) => (settled = err),
    );
    await sleep(1500);
    assert.equal(settled, undefined, 'waitCaughtUp settled while the broker was down');
    await env.kafka.startBroker(0);
    const t = Date.now();
    await write(0, ['b2', 'b3']);
    await c.waitFor(4);
    console.log(`reader got records ${Date.now() - t}ms after the broker was back`);
    await caughtUp;
    assert.equal(settled, 'caught up');
    await r.waitCaughtUp(0);
    assert.deepEqual(c.values(), ['b0', 'b1', 'b2', 'b3']);
    await r.stop();
  });

  test('records retention deleted before they were read are reported as missed, then reading goes on (never a silent skip)', async () => {
    const first = reader({ partition: 4, consumerGroup: 'reader-retention-gap', startFrom: 'committed', onRecords: () => undefined });
    await write(4, ['g0', 'g1', 'g2', 'g3', 'g4']);
    await first.start();
    const base = (await first.endOffset()) - 5n;
    await first.commit(base + 1n);
    await first.stop();
    const admin = new Admin({ clientId: 'reader-retention-gap', bootstrapBrokers: brokers });
    try {
      // What retention does to old segments: the log start moves past records nobody read.
      await admin.deleteRecords({ topics: [{ name: TOPIC, partitions: [{ partition: 4, offset: base + 3n }] }] });
    } finally {
      await admin.close();
    }
    const missed: [bigint, bigint][] = [];
    const c = new Collector();
    const r = reader({
      partition: 4,
      consumerGroup: 'reader-retention-gap',
      startFrom: 'committed',
      onRecords: c.onRecords,
      onMissedRecords: (f, t) => missed.push([f, t]),
    });
    await r.start();
    await r.waitCaughtUp(0);
    assert.deepEqual(missed, [[base + 1n, base + 3n]]);
    assert.deepEqual(c.values().slice(-2), ['g3', 'g4']);
    await r.stop();
  });
});
