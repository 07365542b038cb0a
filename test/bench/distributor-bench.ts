// Distributor throughput: decode + validate + shard + produce (acks=all), in
// samples/s for one process and per CPU-second of that process (= per core).
//
//   npm run bench:distributor -- [--series 20000] [--seconds 20] [--concurrency 16]
//                                [--samples-per-request 2000] [--partitions 4] [--no-kafka] [--protocol v1|v2]
//                                [--shards 1]  (the sender's shards: with 64 every request holds series of every target)
//                                [--create-shards N]  (the warm-up sends every series once over N shards: another count
//                                 sends them in another order than the distributor met them in)
//                                [--max-in-flight 5]  (-ingest-storage.kafka.producer-max-in-flight; a large value: no batching)
//
// Bodies are node-exporter-like remote-write requests, snappy-compressed before
// the clock starts. They go straight into Distributor.push() (no HTTP), from
// `--concurrency` loops, against a real 1-broker Kafka on loopback (its CPU is
// reported separately); `--no-kafka` replaces Kafka with a writer that acks at
// once, to isolate the distributor's own work.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { pino } from 'pino';
import { Distributor, type RecordWriter } from '@strata/distributor';
import { DEFAULT_PRODUCER_MAX_IN_FLIGHT, IngestWriter } from '@strata/kafka';
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
const SCRAPE_MS = 15_000;

/** Enough scrape rounds that the bodies are not resent within one run at the expected rate. */
function encodeBodies(): { first: Buffer[]; bodies: Buffer[]; samples: number[]; total: number } {
  const rounds = 20;
  const encoder = new WindowEncoder({ protocol: PROTOCOL, series: SERIES, shards: Math.max(SHARDS, CREATE_SHARDS), samplesPerRequest: SAMPLES_PER_REQUEST });
  const tsStart = Date.now() - (rounds + 1) * SCRAPE_MS;
  const created = encoder.encode({ firstRound: 0, rounds: 1, tsStart, roundMs: SCRAPE_MS, shards: CREATE_SHARDS });
  const w = encoder.encode({ firstRound: 1, rounds, tsStart: tsStart + SCRAPE_MS, roundMs: SCRAPE_MS, shards: SHARDS });
  const first = Array.from(created.offsets, (o, i) => Buffer.from(created.data.buffer, o, created.lengths[i]));
  const bodies: Buffer[] = [];
  const samples: number[] = [];
  for (let i = 0; i < w.offsets.length; i++) {
    bodies.push(Buffer.from(w.data.buffer, w.offsets[i], w.lengths[i]));
    samples.push(w.samples[i]);
  }
  return { first, bodies, samples, total: w.totalSamples };
}

const instantWriter: RecordWriter = {
  write: async () => undefined,
  partitionCount: async () => PARTITIONS,
};

async function main(): Promise<void> {
  const { first, bodies, samples, total } = encodeBodies();
  const bytes = bodies.reduce((n, b) => n + b.length, 0);
  console.log(
    `distributor bench: ${bodies.length} pre-encoded ${PROTOCOL} requests, ${total} samples (${SAMPLES_PER_REQUEST} per request, ` +
      `${SERIES} series, ${SHARDS} sender shards), ${(bytes / total).toFixed(2)} compressed bytes/sample; ${CONCURRENCY} concurrent pushes for ${SECONDS}s, ` +
      (NO_KAFKA ? 'Kafka replaced by an instant ack' : `real Kafka, ${PARTITIONS} partitions, acks=all, at most ${MAX_IN_FLIGHT} produce requests in flight`),
  );
  let kafka: LocalKafka | undefined;
  const writesPerRequest: number[] = [];
  let ingestWriter: IngestWriter | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'strata-distributor-bench-'));
  try {
    let writer = instantWriter;
    if (!NO_KAFKA) {
      kafka = await startKafka({ dataDir: dir, brokers: 1 });
      await ensureTopic({ brokers: kafka.brokers, topic: 'ingest', partitions: PARTITIONS, replicationFactor: 1 });
      ingestWriter = new IngestWriter({
        brokers: kafka.brokers,
        clientId: 'bench',
        timeoutMs: 10_000,
        maxInFlight: MAX_IN_FLIGHT,
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
  } finally {
    await ingestWriter?.stop();
    await kafka?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
