// Without any reachable broker, start() of the writer and the reader fails fast and clearly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { IngestWriter } from './ingest-writer.ts';
import { PartitionReader } from './partition-reader.ts';
import { KafkaUnavailableError } from './errors.ts';

async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (addr === null || typeof addr === 'string') throw new Error('no port');
  return `127.0.0.1:${addr.port}`;
}

test('IngestWriter.start rejects with KafkaUnavailableError within its timeout', async () => {
  const w = new IngestWriter({ brokers: [await closedPort()], clientId: 'w', timeoutMs: 1000 });
  const t = Date.now();
  await assert.rejects(w.start(), KafkaUnavailableError);
  assert.ok(Date.now() - t < 1500, `took ${Date.now() - t}ms`);
  await assert.rejects(w.write('t', [{ partition: 0, value: Buffer.from('x') }]), KafkaUnavailableError);
  await w.stop();
  await assert.rejects(w.write('t', [{ partition: 0, value: Buffer.from('x') }]), /not running/);
});

test('PartitionReader.start rejects with KafkaUnavailableError within its request timeout', async () => {
  const r = new PartitionReader({
    brokers: [await closedPort()],
    partition: 0,
    consumerGroup: 'g',
    startFrom: 'earliest',
    onRecords: () => undefined,
    requestTimeoutMs: 1000,
  });
  const t = Date.now();
  await assert.rejects(r.start(), KafkaUnavailableError);
  assert.ok(Date.now() - t < 1500, `took ${Date.now() - t}ms`);
  await assert.rejects(r.waitCaughtUp(0), KafkaUnavailableError);
});
