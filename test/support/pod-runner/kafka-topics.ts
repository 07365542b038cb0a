// Stand-in for Kafka's kafka-topics.sh inside the pod runner's apache/kafka containers (the Maven
// jars the repo fetches hold the broker, not the tools): --list, --describe --topic, and --create
// [--if-not-exists] with --partitions, --replication-factor and --config k=v, printing what the
// real tool prints for them (the manifests' scripts parse "PartitionCount: N").
import { Kafka, logLevel } from 'kafkajs';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const all = (name: string): string[] => argv.flatMap((a, i) => (a === name && argv[i + 1] !== undefined ? [argv[i + 1]] : []));
const bootstrap = opt('--bootstrap-server');
if (!bootstrap) {
  process.stderr.write('Missing required argument "[bootstrap-server]"\n');
  process.exit(1);
}
const admin = new Kafka({
  clientId: 'kafka-topics',
  brokers: bootstrap.split(','),
  logLevel: logLevel.NOTHING,
  connectionTimeout: 3000,
  requestTimeout: 10_000,
  retry: { retries: 2, initialRetryTime: 300 },
}).admin();

async function main(): Promise<number> {
  await admin.connect();
  const topic = opt('--topic');
  if (argv.includes('--list')) {
    for (const t of (await admin.listTopics()).sort()) process.stdout.write(`${t}\n`);
    return 0;
  }
  if (!topic) throw new Error('--topic is required');
  if (argv.includes('--create')) {
    if ((await admin.listTopics()).includes(topic)) {
      if (argv.includes('--if-not-exists')) return 0;
      throw new Error(`Topic '${topic}' already exists.`);
    }
    const configEntries = all('--config').map((kv) => ({ name: kv.slice(0, kv.indexOf('=')), value: kv.slice(kv.indexOf('=') + 1) }));
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: Number(opt('--partitions') ?? 1), replicationFactor: Number(opt('--replication-factor') ?? -1), configEntries }],
    });
    process.stdout.write(`Created topic ${topic}.\n`);
    return 0;
  }
  if (argv.includes('--describe')) {
    if (!(await admin.listTopics()).includes(topic)) throw new Error(`Topic '${topic}' does not exist as expected`);
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    const parts = topics[0]?.partitions ?? [];
    const rf = parts[0]?.replicas.length ?? 0;
    process.stdout.write(`Topic: ${topic}\tPartitionCount: ${parts.length}\tReplicationFactor: ${rf}\n`);
    for (const p of [...parts].sort((a, b) => a.partitionId - b.partitionId)) {
      process.stdout.write(`\tTopic: ${topic}\tPartition: ${p.partitionId}\tLeader: ${p.leader}\tReplicas: ${p.replicas.join(',')}\tIsr: ${p.isr.join(',')}\n`);
    }
    return 0;
  }
  throw new Error('one of --list, --describe, --create is required');
}

main().then(
  async (code) => {
    await admin.disconnect();
    process.exit(code);
  },
  (err: Error) => {
    process.stderr.write(`Error: ${err.message}\n`);
    process.exit(1);
  },
);
