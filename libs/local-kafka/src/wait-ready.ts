// Readiness checks for a local cluster: port open, broker registered, and the real test
// that matters — an acks=all produce to a probe topic is acknowledged.
import { connect } from 'node:net';
import { ProduceAcks } from '@platformatic/kafka';
import { probeAdmin, probeProducer, sleep } from './probe-client.ts';

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
  const admin = probeAdmin([broker]);
  let lastError: unknown;
  try {
    for (;;) {
      try {
        const { brokers } = await admin.metadata({ topics: [], forceUpdate: true });
        if (brokers.has(nodeId)) return;
      } catch (err) {
        lastError = err;
      }
      check(opts, `waiting for kafka node ${nodeId} to register`, lastError);
      await sleep(100);
    }
  } finally {
    await admin.close().catch(() => undefined);
  }
}

/** Waits until a produce with acks=all to the probe topic is acknowledged (creating the topic if needed). */
export async function waitUntilWritable(brokers: string[], replicationFactor: number, opts: WaitOptions): Promise<void> {
  const admin = probeAdmin(brokers);
  const producer = probeProducer(brokers);
  let lastError: unknown;
  try {
    for (;;) {
      try {
        const topics = await admin.listTopics();
        if (!topics.includes(PROBE_TOPIC)) await admin.createTopics({ topics: [PROBE_TOPIC], partitions: 1, replicas: replicationFactor });
        // Until the topic has a leader this fails and is asked again after fresh metadata.
        producer.clearMetadata();
        await producer.send({ acks: ProduceAcks.ALL, messages: [{ topic: PROBE_TOPIC, partition: 0, value: Buffer.from('probe') }] });
        return;
      } catch (err) {
        lastError = err;
      }
      check(opts, 'waiting for the cluster to accept acks=all writes', lastError);
      await sleep(100);
    }
  } finally {
    await producer.close().catch(() => undefined);
    await admin.close().catch(() => undefined);
  }
}
