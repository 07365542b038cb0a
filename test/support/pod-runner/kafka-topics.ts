// Stand-in for Kafka's kafka-topics.sh inside the pod runner's apache/kafka containers (the Maven
// jars the repo fetches hold the broker, not the tools): --list, --describe --topic, and --create
// [--if-not-exists] with --partitions, --replication-factor and --config k=v, printing what the
// real tool prints for them (the manifests' scripts parse "PartitionCount: N").
import { Admin } from '@platformatic/kafka';

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
const admin = new Admin({
  clientId: 'kafka-topics',
  bootstrapBrokers: bootstrap.split(','),
  connectTimeout: 3000,
  requestTimeout: 10_000,
  retries: 2,
  retryDelay: 300,
});

/** Partitions of `topic` in metadata, once every one has a leader (the real tool waits for them too). */
async function partitionsWithLeaders(topic: string, timeoutMs: number) {
  for (const t = Date.now(); ; await new Promise((r) => setTimeout(r, 100))) {
    const md = await admin.metadata({ topics: [topic], forceUpdate: true });
    const parts = md.topics.get(topic)?.partitions ?? [];
    if ((parts.length > 0 && parts.every((p) => p !== undefined && p.leader >= 0)) || Date.now() - t > timeoutMs) return parts;
  }
}

async function main(): Promise<number> {
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
    const configs = all('--config').map((kv) => ({ name: kv.slice(0, kv.indexOf('=')), value: kv.slice(kv.indexOf('=') + 1) }));
    await admin.createTopics({ topics: [topic], partitions: Number(opt('--partitions') ?? 1), replicas: Number(opt('--replication-factor') ?? -1), configs });
    await partitionsWithLeaders(topic, 30_000);
    process.stdout.write(`Created topic ${topic}.\n`);
    return 0;
  }
  if (argv.includes('--describe')) {
    if (!(await admin.listTopics()).includes(topic)) throw new Error(`Topic '${topic}' does not exist as expected`);
    const md = await admin.metadata({ topics: [topic], forceUpdate: true });
    const parts = md.topics.get(topic)?.partitions ?? [];
    const rf = parts[0]?.replicas.length ?? 0;
    process.stdout.write(`Topic: ${topic}\tPartitionCount: ${parts.length}\tReplicationFactor: ${rf}\n`);
    parts.forEach((p, partition) => {
      process.stdout.write(`\tTopic: ${topic}\tPartition: ${partition}\tLeader: ${p.leader}\tReplicas: ${p.replicas.join(',')}\tIsr: ${p.isr.join(',')}\n`);
    });
    return 0;
  }
  throw new Error('one of --list, --describe, --create is required');
}

main().then(
  async (code) => {
    await admin.close();
    process.exit(code);
  },
  (err: Error) => {
    process.stderr.write(`Error: ${err.message}\n`);
    process.exit(1);
  },
);
