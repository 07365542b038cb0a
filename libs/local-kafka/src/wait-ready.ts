// Readiness checks for a local cluster: port open, broker registered, and the real test
// that matters — an acks=all produce to a probe topic is acknowledged.
import { connect } from 'node:net';
import { probeClient, sleep } from './probe-client.ts';

const PROBE_TOPIC = 'strata-local-kafka-probe';

/** Returns a reason to give up (a broker died), or undefined to keep waiting. */
export type AbortCheck = () => string | undefined;

interface WaitOptions {
  deadline: number;
  abort: AbortCheck;
}

function check(opts: WaitOptions, what: string, lastError: unknown): void {
  const reason = opts.abort();
  if (reason !== undefined) throw new Error(`${what}: ${reason}`);
  if (Date.now() > opts.deadline) {
    const detail = lastError instanceof Error ? `: ${lastError.message}` : '';
    throw new Error(`${what}: timed out${detail}`);
  }
}

function tryConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function waitForPort(port: number, opts: WaitOptions): Promise<void> {
  while (!(await tryConnect(port))) {
    check(opts, `waiting for 127.0.0.1:${port} to accept connections`, undefined);
    await sleep(50);
  }
}

/** Waits until `broker` itself serves metadata that lists node `nodeId` as a live broker. */
export async function waitUntilRegistered(broker: string, nodeId: number, opts: WaitOptions): Promise<void> {
  const admin = probeClient([broker]).admin();
  let lastError: unknown;
  try {
    for (;;) {
      try {
        await admin.connect();
        const { brokers } = await admin.describeCluster();
        if (brokers.some((b) => b.nodeId === nodeId)) return;
      } catch (err) {
        lastError = err;
      }
      check(opts, `waiting for kafka node ${nodeId} to register`, lastError);
      await sleep(100);
    }
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Waits until a produce with acks=all to the probe topic is acknowledged (creating the topic if needed). */
export async function waitUntilWritable(
  brokers: string[],
  replicationFactor: number,
  opts: WaitOptions,
): Promise<void> {
  const kafka = probeClient(brokers);
  const admin = kafka.admin();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  let lastError: unknown;
  try {
    for (;;) {
      try {
        await admin.connect();
        const topics = await admin.listTopics();
        if (!topics.includes(PROBE_TOPIC)) {
          await admin.createTopics({
            topics: [{ topic: PROBE_TOPIC, numPartitions: 1, replicationFactor }],
            waitForLeaders: true,
            timeout: 5000,
          });
        }
        await producer.connect();
        await producer.send({ topic: PROBE_TOPIC, acks: -1, timeout: 5000, messages: [{ value: 'probe' }] });
        return;
      } catch (err) {
        lastError = err;
      }
      check(opts, 'waiting for the cluster to accept acks=all writes', lastError);
      await sleep(100);
    }
  } finally {
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}
