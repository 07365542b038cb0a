// One Kafka client measured on Strata's write and read pattern, in its own process
// (so its CPU is its own, and it can run on the Node version it needs):
//   produce: `concurrency` pushes at a time, each one record (key = tenant, header
//            v=2, an already-compressed value) sent with acks=all and awaited, as
//            the distributor does; latency per send, CPU per record.
//   consume: every record of the partition from the start, as an ingester replays.
//   failover: a steady rate of sends while the parent kills the partition leader;
//            prints every send's latency and error, the parent finds the stall.
// Plain JavaScript: the parent starts it with any Node binary. Prints one JSON line.
//
//   node child.mjs <client> <mode> '<json options>'

import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const [client, mode, raw] = process.argv.slice(2);
const o = JSON.parse(raw);
const require = createRequire(o.modulesDir + '/');

function payload(size, i) {
  // Compressed-looking bytes: what a snappy'd remote-write body looks like to Kafka.
  const b = Buffer.allocUnsafe(size);
  let x = (i * 2654435761) >>> 0;
  for (let k = 0; k < size; k++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[k] = x >>> 24;
  }
  return b;
}

/** Runs a kafkajs-shaped consumer (kafkajs, and confluent's KafkaJS layer) until `n` records arrived, then disconnects it. */
async function runBatches(consumer, runOptions, n, onRecord) {
  let seen = 0;
  await new Promise((resolve, reject) => {
    consumer
      .run({
        ...runOptions,
        eachBatch: async ({ batch }) => {
          for (const m of batch.messages) onRecord(m.value);
          seen += batch.messages.length;
          if (seen >= n) resolve();
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
}

/** send(record) → Promise, consumeAll(n) → Promise, close() → Promise */
async function open() {
  if (client === 'kafkajs') {
    const { Kafka, logLevel } = require('kafkajs');
    const kafka = new Kafka({ clientId: 'bench', brokers: o.brokers, logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 50 } });
    const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: false });
    await producer.connect();
    return {
      send: (m) => producer.send({ topic: o.topic, acks: -1, timeout: 10_000, messages: [{ partition: 0, key: m.key, value: m.value, headers: { v: '2' } }] }),
      async consumeAll(n, onRecord) {
        const consumer = kafka.consumer({ groupId: `bench-${process.pid}`, maxBytes: 50 << 20 });
        await consumer.connect();
        await consumer.subscribe({ topic: o.topic, fromBeginning: true });
        await runBatches(consumer, { autoCommit: false }, n, onRecord);
      },
      close: () => producer.disconnect(),
    };
  }
  if (client === 'confluent') {
    const { KafkaJS } = require('@confluentinc/kafka-javascript');
    const kafka = new KafkaJS.Kafka({ kafkaJS: { clientId: 'bench', brokers: o.brokers, logLevel: KafkaJS.logLevel.NOTHING } });
    // linger 0: every client sends as soon as asked (kafkajs has no linger).
    const producer = kafka.producer({ kafkaJS: { acks: -1, idempotent: false, timeout: 10_000 }, 'linger.ms': 0 });
    await producer.connect();
    return {
      send: (m) => producer.send({ topic: o.topic, messages: [{ partition: 0, key: m.key, value: m.value, headers: { v: '2' } }] }),
      async consumeAll(n, onRecord) {
        const consumer = kafka.consumer({ kafkaJS: { groupId: `bench-${process.pid}`, fromBeginning: true, autoCommit: false } });
        await consumer.connect();
        await consumer.subscribe({ topic: o.topic });
        await runBatches(consumer, {}, n, onRecord);
      },
      close: () => producer.disconnect(),
    };
  }
  if (client === 'platformatic') {
    const { Producer, Consumer, ProduceAcks, MessagesStreamModes } = await import(require.resolve('@platformatic/kafka'));
    // acks on every send: 2.12.1's send() ignores the producer's `acks` option and defaults to acks=1
    // unless idempotent (so issue 15's first runs measured platformatic at acks=1).
    const producer = new Producer({
      clientId: 'bench',
      bootstrapBrokers: o.brokers,
      idempotent: false,
      autocreateTopics: false,
      timeout: 10_000,
      retries: 10,
      retryDelay: 50,
    });
    return {
      send: (m) =>
        producer.send({
          acks: ProduceAcks.ALL,
          messages: [{ topic: o.topic, partition: 0, key: m.key, value: m.value, headers: new Map([[Buffer.from('v'), Buffer.from('2')]]) }],
        }),
      async consumeAll(n, onRecord) {
        const consumer = new Consumer({ groupId: `bench-${process.pid}`, clientId: 'bench-consumer', bootstrapBrokers: o.brokers, maxBytes: 50 << 20 });
        const stream = await consumer.consume({ topics: [o.topic], mode: MessagesStreamModes.EARLIEST, autocommit: false });
        let seen = 0;
        for await (const m of stream) {
          onRecord(m.value);
          if (++seen >= n) break;
        }
        await stream.close();
        await consumer.close();
      },
      close: () => producer.close(),
    };
  }
  throw new Error(`unknown client ${client}`);
}

function cpuSeconds(since) {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1e6;
}

const c = await open();
const out = { client, mode, node: process.version };

if (mode === 'produce') {
  const values = Array.from({ length: 64 }, (_, i) => payload(o.size, i));
  const key = Buffer.from('bench');
  // Warm up: connections, metadata.
  for (let i = 0; i < 20; i++) await c.send({ key, value: values[i % 64] });
  const lat = [];
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < o.records) {
        const i = next++;
        const s = performance.now();
        await c.send({ key, value: values[i % 64] });
        lat.push(performance.now() - s);
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(cpu0);
  lat.sort((a, b) => a - b);
  Object.assign(out, {
    records: o.records,
    wallSeconds: wall,
    cpuSeconds: cpu,
    recordsPerSecond: o.records / wall,
    recordsPerCpuSecond: o.records / cpu,
    p50ms: lat[Math.floor(lat.length * 0.5)],
    p99ms: lat[Math.floor(lat.length * 0.99)],
    maxms: lat[lat.length - 1],
  });
} else if (mode === 'consume') {
  let bytes = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await c.consumeAll(o.records, (v) => (bytes += v.length));
  Object.assign(out, { records: o.records, bytes, wallSeconds: (performance.now() - t0) / 1000, cpuSeconds: cpuSeconds(cpu0) });
  out.recordsPerCpuSecond = o.records / out.cpuSeconds;
} else if (mode === 'failover') {
  // A send every intervalMs, each awaited on its own; the parent kills the leader meanwhile.
  const key = Buffer.from('bench');
  const value = payload(o.size, 1);
  const sends = [];
  const t0 = Date.now();
  const pending = [];
  process.stdout.write('ready\n');
  while (Date.now() - t0 < o.durationMs) {
    const started = Date.now();
    pending.push(
      c.send({ key, value }).then(
        () => sends.push({ at: started - t0, ms: Date.now() - started }),
        (err) => sends.push({ at: started - t0, ms: Date.now() - started, error: String(err?.message ?? err).slice(0, 200) }),
      ),
    );
    await new Promise((r) => setTimeout(r, o.intervalMs));
  }
  await Promise.allSettled(pending);
  sends.sort((a, b) => a.at - b.at);
  Object.assign(out, { sends });
}
await c.close();
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(0);
