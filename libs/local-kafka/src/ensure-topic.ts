// Creates a topic on a (local or real) cluster if it does not exist and waits until every
// partition has a leader. Never alters an existing topic.
import type { Admin } from '@platformatic/kafka';
import { probeAdmin, sleep, type ConnectionSecurity } from './probe-client.ts';

export interface EnsureTopicOptions {
  brokers: string[];
  topic: string;
  partitions: number;
  replicationFactor: number;
  /** Sets the topic's min.insync.replicas; the broker default applies when omitted. */
  minInsyncReplicas?: number;
  /** Upper bound for creation plus leader election; default 30s. */
  timeoutMs?: number;
  /** SASL and TLS of a cluster that asks for them. */
  security?: ConnectionSecurity;
}

export interface EnsureTopicResult {
  created: boolean;
  /** The topic's partition count (an existing topic keeps its own). */
  partitions: number;
}

export async function ensureTopic(opts: EnsureTopicOptions): Promise<EnsureTopicResult> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  const admin = probeAdmin(opts.brokers, 10_000, opts.security);
  try {
    let created = false;
    if (!(await admin.listTopics()).includes(opts.topic)) {
      const configs = opts.minInsyncReplicas === undefined ? [] : [{ name: 'min.insync.replicas', value: String(opts.minInsyncReplicas) }];
      try {
        await admin.createTopics({ topics: [opts.topic], partitions: opts.partitions, replicas: opts.replicationFactor, configs });
        created = true;
      } catch (err) {
        // Someone else created it between listTopics and createTopics.
        if (!alreadyExists(err)) throw err;
      }
    }
    const partitions = await waitForLeaders(admin, opts.topic, deadline);
    return { created, partitions };
  } finally {
    await admin.close().catch(() => undefined);
  }
}

function alreadyExists(err: unknown): boolean {
  const e = err as { apiId?: unknown; errors?: unknown[]; message?: unknown } | undefined;
  if (e?.apiId === 'TOPIC_ALREADY_EXISTS' || String(e?.message).includes('already exists')) return true;
  return Array.isArray(e?.errors) && e.errors.some(alreadyExists);
}

async function waitForLeaders(admin: Admin, topic: string, deadline: number): Promise<number> {
  let lastError: unknown;
  for (;;) {
    try {
      const { topics } = await admin.metadata({ topics: [topic], forceUpdate: true });
      const parts = topics.get(topic)?.partitions ?? [];
      if (parts.length > 0 && parts.every((p) => p !== undefined && p.leader >= 0)) return parts.length;
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
