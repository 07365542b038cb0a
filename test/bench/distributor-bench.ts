// Distributor throughput: decode + validate + shard + produce (acks=all), in
// samples/s for one process and per CPU-second of that process (= per core).
//
//   npm run bench:distributor -- [--series 20000] [--seconds 20] [--concurrency 16]
//                                [--samples-per-request 2000] [--partitions 4] [--no-kafka] [--protocol v1|v2]
//                                [--shards 1]  (the sender's shards: with 64 every request holds series of every target)
//                                [--create-shards N]  (the warm-up sends every series once over N shards: another count
//                                 sends them in another order than the distributor met them in)
//                                [--max-in-flight 5]  (-ingest-storage.kafka.producer-max-in-flight; a large value: no batching)
//                                [--compression none,zstd]  (-ingest-storage.kafka.producer-compression: each codec in turn,
//                                 its own topic, the same bodies; prints Kafka bytes per sample on the broker's disk, the
//                                 distributor's and the broker's CPU, and the CPU an ingester spends fetching it all back)
//
// Bodies are node-exporter-like remote-write requests, snappy-compressed before
// the clock starts. They go straight into Distributor.push() (no HTTP), from
// `--concurrency` loops, against a real 1-broker Kafka on loopback (its CPU is
// reported separately); `--no-kafka` replaces Kafka with a writer that acks at
// once, to isolate the distributor's own work.

import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { pino } from 'pino';
import { Distributor, type RecordWriter } from '@strata/distributor';
import { DEFAULT_PRODUCER_MAX_IN_FLIGHT, IngestWriter, PartitionReader, type ProducerCompression } from '@strata/kafka';
import { DEFAULT_LIMITS, Overrides } from '@strata/limits';
import { ensureTopic, startKafka, type LocalKafka } from '@strata/local-kafka';
import { WindowEncoder, type Protocol } from './encode.ts';
import { cpuSeconds } from './proc-stats.ts';
import { percentile } from './latency.ts';

const args = process.argv.slice(2);
const opt = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const SERIES = opt('series', 20_000);
const SECONDS = opt('seconds', 20);
const CONCURRENCY = opt('concurrency', 16);
const SAMPLES_PER_REQUEST = opt('samples-per-request', 2000);
const PARTITIONS = opt('partitions', 4);
const SHARDS = opt('shards', 1);
const CREATE_SHARDS = opt('create-shards', SHARDS);
const NO_KAFKA = args.includes('--no-kafka');
const MAX_IN_FLIGHT = opt('max-in-flight', DEFAULT_PRODUCER_MAX_IN_FLIGHT);
const PROTOCOL: Protocol = args.includes('--protocol') && args[args.indexOf('--protocol') + 1] === 'v2' ? 'v2' : 'v1';
const COMPRESSIONS = (args.includes('--compression') ? args[args.indexOf('--compression') + 1] : 'none').split(',') as ProducerCompression[];
const SCRAPE_MS = 15_000;

/** Enough scrape rounds that the bodies are not resent within one run at the expected rate. */
function encodeBodies(): Bodies & { total: number } {
  const rounds = 20;
  const encoder = new WindowEncoder({ protocol: PROTOCOL, series: SERIES, shards: Math.max(SHARDS, CREATE_SHARDS), samplesPerRequest: SAMPLES_PER_REQUEST });
  const tsStart = Date.now() - (rounds + 1) * SCRAPE_MS;
  const created = encoder.encode({ firstRound: 0, rounds: 1, tsStart, roundMs: SCRAPE_MS, shards: CREATE_SHARDS });
  const w = encoder.encode({ firstRound: 1, rounds, tsStart: tsStart + SCRAPE_MS, roundMs: SCRAPE_MS, shards: SHARDS });
  const first = Array.from(created.offsets, (o, i) => Buffer.from(created.data.buffer, o, created.lengths[i]));
  const firstSamples = created.totalSamples;
  const bodies: Buffer[] = [];
  const samples: number[] = [];
  for (let i = 0; i < w.offsets.length; i++) {
    bodies.push(Buffer.from(w.data.buffer, w.offsets[i], w.lengths[i]));
    samples.push(w.samples[i]);
  }
  return { first, firstSamples, bodies, samples, total: w.totalSamples };
}

const instantWriter: RecordWriter = {
  write: async () => undefined,
  partitionCount: async () => PARTITIONS,
};

interface Bodies {
  /** The round that creates every series, and its samples. */
  first: Buffer[];
  firstSamples: number;
  bodies: Buffer[];
  samples: number[];
}

/** What one codec's run measured. */
interface RunResult {
  compression: ProducerCompression;
  /** Samples acknowledged in the timed part (the CPU figures' denominator). */
  sent: number;
  /** Samples in the topic: the warm-up's too (the bytes' denominator). */
  inTopic: number;
  distributorCpuS: number;
  brokerCpuS: number;
  /** Bytes of the topic's log segments on the broker's disk; NaN without Kafka. */
  kafkaBytes: number;
  /** CPU-s of fetching the whole topic back and decoding each record's value, as an ingester's reader does. */
  fetchCpuS: number;
}

async function main(): Promise<void> {
  const encoded = encodeBodies();
  const bytes = encoded.bodies.reduce((n, b) => n + b.length, 0);
  console.log(
    `distributor bench: ${encoded.bodies.length} pre-encoded ${PROTOCOL} requests, ${encoded.total} samples (${SAMPLES_PER_REQUEST} per request, ` +
      `${SERIES} series, ${SHARDS} sender shards), ${(bytes / encoded.total).toFixed(2)} compressed bytes/sample; ${CONCURRENCY} concurrent pushes for ${SECONDS}s, ` +
      (NO_KAFKA ? 'Kafka replaced by an instant ack' : `real Kafka, ${PARTITIONS} partitions, acks=all, at most ${MAX_IN_FLIGHT} produce requests in flight`),
  );
  let kafka: LocalKafka | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'strata-distributor-bench-'));
  try {
    if (!NO_KAFKA) kafka = await startKafka({ dataDir: dir, brokers: 1 });
    const results: RunResult[] = [];
    for (const [run, compression] of (NO_KAFKA ? (['none'] as const) : COMPRESSIONS).entries())
      results.push(await runOnce(kafka, compression, `ingest-${run}-${compression}`, encoded));
    if (results.length > 1) printCodecs(results);
  } finally {
    await kafka?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Pushes for SECONDS through a distributor writing with `compression` to a topic of its own. */
async function runOnce(
  kafka: LocalKafka | undefined,
  compression: ProducerCompression,
  topic: string,
  { first, firstSamples, bodies, samples }: Bodies,
): Promise<RunResult> {
  const writesPerRequest: number[] = [];
  let ingestWriter: IngestWriter | undefined;
  try {
    let writer = instantWriter;
    if (kafka !== undefined) {
      await ensureTopic({ brokers: kafka.brokers, topic, partitions: PARTITIONS, replicationFactor: 1 });
      ingestWriter = new IngestWriter({
        brokers: kafka.brokers,
        topic,
        clientId: `bench-${compression}`,
        timeoutMs: 10_000,
        maxInFlight: MAX_IN_FLIGHT,
        compression,
        onProduceRequest: (n) => writesPerRequest.push(n),
      });
      await ingestWriter.start();
      writer = ingestWriter;
    }
    // The bench measures capacity, not the tenant's rate limit.
    const limits = new Overrides({ defaults: { ...DEFAULT_LIMITS, ingestionRate: 1e12, ingestionBurstSize: 1e12 } });
    const distributor = new Distributor({ writer, limits, maxRecvMsgSize: 100 << 20, logger: pino({ level: 'warn' }), registry: new Registry() });
    const push = (i: number) => distributor.push({ tenant: 'bench', body: bodies[i % bodies.length] });

    // Warm-up: every series met once (over --create-shards), V8 optimises, the producer connects to every partition leader.
    for (const body of first) await distributor.push({ tenant: 'bench', body });
    for (let i = 0; i < Math.min(bodies.length, 50); i++) await push(i);
    let warmSamples = firstSamples;
    for (let i = 0; i < Math.min(bodies.length, 50); i++) warmSamples += samples[i];

    const latencies: number[] = [];
    let next = 0;
    let sent = 0;
    let failed = 0;
    let firstFailure: string | undefined;
    const brokerPid = kafka?.pids[0];
    const brokerCpu0 = brokerPid === undefined ? 0 : (cpuSeconds(brokerPid) ?? 0);
    const cpu0 = process.cpuUsage();
    writesPerRequest.length = 0;
    const t0 = performance.now();
    const until = t0 + SECONDS * 1000;
    const loop = async () => {
      while (performance.now() < until) {
        const i = next++;
        const started = performance.now();
        try {
          const r = await push(i);
          if (r.status >= 300) {
            failed++;
            firstFailure ??= `${r.status} ${r.message}`;
          } else sent += samples[i % bodies.length];
        } catch (err) {
          failed++;
          firstFailure ??= String(err);
        }
        latencies.push(performance.now() - started);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, loop));
    const wall = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const cpuS = (cpu.user + cpu.system) / 1e6;
    const brokerCpu = brokerPid === undefined ? 0 : (cpuSeconds(brokerPid) ?? 0) - brokerCpu0;
    latencies.sort((a, b) => a - b);
    const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
    console.log(
      [
        `--- producer compression ${compression}${kafka ? ` (topic ${topic})` : ''}`,
        `requests: ${fmt(latencies.length)} (${failed} failed), samples acknowledged: ${fmt(sent)} in ${wall.toFixed(1)}s`,
        `distributor throughput: ${fmt(sent / wall)} samples/s in one process`,
        `distributor CPU: ${cpuS.toFixed(1)} CPU-s (${((cpuS / wall) * 100).toFixed(0)}% of a core) → ${fmt(sent / cpuS)} samples per CPU-second (per core; target 300,000)`,
        kafka
          ? `produce requests: ${fmt(writesPerRequest.length)}, ${(writesPerRequest.reduce((a, b) => a + b, 0) / Math.max(1, writesPerRequest.length)).toFixed(2)} pushes each on average`
          : '',
        kafka ? `Kafka broker CPU: ${brokerCpu.toFixed(1)} CPU-s (${fmt(sent / Math.max(brokerCpu, 0.001))} samples per broker CPU-second)` : '',
        firstFailure ? `first failure: ${firstFailure}` : '',
        `push latency: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`,
      ]
        .filter(Boolean)
        .join('\n'),
    );
    const inTopic = sent + warmSamples;
    if (kafka === undefined) return { compression, sent, inTopic, distributorCpuS: cpuS, brokerCpuS: 0, kafkaBytes: NaN, fetchCpuS: NaN };
    await ingestWriter?.stop();
    ingestWriter = undefined;
    return {
      compression,
      sent,
      inTopic,
      distributorCpuS: cpuS,
      brokerCpuS: brokerCpu,
      kafkaBytes: topicBytes(kafka, topic),
      fetchCpuS: await fetchAll(kafka, topic),
    };
  } finally {
    await ingestWriter?.stop();
  }
}

/** Bytes of a topic's log segments (every partition) on the broker's disk. */
function topicBytes(kafka: LocalKafka, topic: string): number {
  let bytes = 0;
  for (const node of readdirSync(kafka.dataDir).filter((d) => d.startsWith('node-'))) {
    const data = join(kafka.dataDir, node, 'data');
    for (const d of readdirSync(data).filter((x) => x.startsWith(`${topic}-`) && /^\d+$/.test(x.slice(topic.length + 1)))) {
      for (const f of readdirSync(join(data, d)).filter((x) => x.endsWith('.log'))) bytes += statSync(join(data, d, f)).size;
    }
  }
  return bytes;
}

/** Reads every partition of `topic` from the start to its end, as an ingester's reader does; returns the CPU-s it took. */
async function fetchAll(kafka: LocalKafka, topic: string): Promise<number> {
  const cpu0 = process.cpuUsage();
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const reader = new PartitionReader({
      brokers: kafka.brokers,
      topic,
      partition,
      consumerGroup: `bench-fetch-${topic}`,
      startFrom: 'earliest',
      onRecords: async () => undefined,
    });
    await reader.start();
    await reader.waitCaughtUp(0);
    await reader.stop();
  }
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / 1e6;
}

function printCodecs(results: RunResult[]): void {
  const perSample = (cpuS: number, samples: number) => ((cpuS / samples) * 1e6).toFixed(2);
  console.log('\n| producer compression | Kafka bytes/sample | distributor CPU-µs/sample | broker CPU-µs/sample | fetch CPU-µs/sample |');
  console.log('|---|--:|--:|--:|--:|');
  for (const r of results) {
    console.log(
      `| ${r.compression} | ${(r.kafkaBytes / r.inTopic).toFixed(2)} | ${perSample(r.distributorCpuS, r.sent)} | ${perSample(r.brokerCpuS, r.sent)} | ${perSample(r.fetchCpuS, r.inTopic)} |`,
    );
  }
}

await main();
