// Local Apache Kafka for development: `fetch` resolves the broker jars into .cache/kafka,
// `start` runs a 1- or 3-node KRaft cluster on loopback in the foreground until SIGINT/SIGTERM.
// Usage:
//   node --import tsx scripts/kafka.ts fetch
//   node --import tsx scripts/kafka.ts start [--brokers 1|3] [--dir D] [--topic ingest --partitions N]
import { join } from 'node:path';
import { parseArgs } from 'node:util';
// Imported by path, not package name: bootstrap runs `fetch` before workspace links may exist.
import { KAFKA_VERSION, ensureTopic, fetchKafka, startKafka } from '@strata/local-kafka';

const root = join(import.meta.dirname, '..');

// Progress (only when something has to be done) goes to stderr; the one-line summary to stdout.
async function fetchCommand(): Promise<void> {
  const started = Date.now();
  let worked = false;
  const dir = await fetchKafka({
    log: (line) => {
      worked = true;
      console.error(`strata kafka: ${line}`);
    },
  });
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`strata kafka: Apache Kafka ${KAFKA_VERSION} ${worked ? `fetched and prepared in ${secs}s` : 'already present'} in ${dir}`);
}

async function startCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      brokers: { type: 'string', default: '1' },
      dir: { type: 'string' },
      topic: { type: 'string' },
      partitions: { type: 'string', default: '1' },
    },
  });
  const brokers = Number(values.brokers);
  if (brokers !== 1 && brokers !== 3) throw new Error(`--brokers must be 1 or 3, got ${values.brokers}`);
  const partitions = Number(values.partitions);
  if (!Number.isInteger(partitions) || partitions < 1) throw new Error(`--partitions must be a positive integer`);
  const dataDir = values.dir ?? join(root, 'data', brokers === 1 ? 'kafka' : 'kafka-3');

  const kafka = await startKafka({ dataDir, brokers, log: (line) => console.error(line) });
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.error(`kafka: ${signal}, stopping`);
    kafka.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`kafka: stop failed: ${(err as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));

  if (values.topic !== undefined) {
    const r = await ensureTopic({
      brokers: kafka.brokers,
      topic: values.topic,
      partitions,
      replicationFactor: brokers,
      minInsyncReplicas: brokers === 3 ? 2 : undefined,
    });
    console.error(`kafka: topic ${values.topic} ${r.created ? 'created' : 'exists'} with ${r.partitions} partition(s)`);
  }
  console.log(kafka.brokers.join(','));
  console.error(`kafka: data in ${dataDir}, logs in ${kafka.logFiles.join(' ')}; Ctrl-C to stop`);
  // Keep the event loop alive until a signal arrives (the brokers are unref'd children).
  setInterval(() => undefined, 1 << 30);
}

const [command, ...rest] = process.argv.slice(2);
try {
  if (command === 'fetch') await fetchCommand();
  else if (command === 'start') await startCommand(rest);
  else {
    console.error('usage: kafka.ts fetch | start [--brokers 1|3] [--dir D] [--topic T --partitions N]');
    process.exit(2);
  }
} catch (err) {
  console.error(`strata kafka: ${(err as Error).message}`);
  process.exit(1);
}
