// Creates a topic on a (local or real) cluster if it does not exist and waits until every
// partition has a leader. Never alters an existing topic.
import { probeClient, sleep } from './probe-client.ts';

export interface EnsureTopicOptions {
  brokers: string[];
  topic: string;
  partitions: number;
  replicationFactor: number;
  /** Sets the topic's min.insync.replicas; the broker default applies when omitted. */
  minInsyncReplicas?: number;
  /** Upper bound for creation plus leader election; default 30s. */
  timeoutMs?: number;
}

export interface EnsureTopicResult {
  created: boolean;
  /** The topic's partition count (an existing topic keeps its own). */
  partitions: number;
}

export async function ensureTopic(opts: EnsureTopicOptions): Promise<EnsureTopicResult> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  const admin = probeClient(opts.brokers, 10_000).admin();
  try {
    await admin.connect();
    let created = false;
    if (!(await admin.listTopics()).includes(opts.topic)) {
      const configEntries =
        opts.minInsyncReplicas === undefined ? [] : [{ name: 'min.insync.replicas', value: String(opts.minInsyncReplicas) }];
      try {
        created = await admin.createTopics({
          topics: [
            { topic: opts.topic, numPartitions: opts.partitions, replicationFactor: opts.replicationFactor, configEntries },
          ],
          timeout: 10_000,
        });
      } catch (err) {
        // Someone else created it between listTopics and createTopics.
        if (!String((err as Error).message).includes('already exists')) throw err;
      }
    }
    const partitions = await waitForLeaders(admin, opts.topic, deadline);
    return { created, partitions };
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

type Admin = ReturnType<ReturnType<typeof probeClient>['admin']>;

async function waitForLeaders(admin: Admin, topic: string, deadline: number): Promise<number> {
  let lastError: unknown;
  for (;;) {
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      const parts = topics[0]?.partitions ?? [];
      if (parts.length > 0 && parts.every((p) => p.leader >= 0 && p.partitionErrorCode === 0)) return parts.length;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? ` (${lastError.message})` : '';
      throw new Error(`topic ${topic}: partitions have no leader after the timeout${detail}`);
    }
    await sleep(100);
  }
}
