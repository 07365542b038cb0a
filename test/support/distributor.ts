// A real 1-broker Kafka and one distributor process in a temp dir, for tests that
// drive the write path alone. stop() kills both (by pid) and removes the dir
// unless STRATA_KEEP_TEST_DATA is set.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { ensureTopic, startKafka, type LocalKafka } from '@strata/local-kafka';

export interface DistributorWithKafka {
  dir: string;
  kafka: LocalKafka;
  distributor: AppProcess;
  stop(): Promise<void>;
}

export async function startDistributorWithKafka(opts: { name: string; partitions: number; args: string[] }): Promise<DistributorWithKafka> {
  const dir = mkdtempSync(join(tmpdir(), `strata-${opts.name}-`));
  const kafka = await startKafka({ dataDir: join(dir, 'kafka'), brokers: 1 });
  await ensureTopic({ brokers: kafka.brokers, topic: 'ingest', partitions: opts.partitions, replicationFactor: 1 });
  const [port] = await freePorts(1);
  const distributor = new AppProcess({
    name: 'distributor',
    target: 'distributor',
    httpPort: port,
    logFile: join(dir, 'distributor.log'),
    args: [`-ingest-storage.kafka.address=${kafka.brokers.join(',')}`, `-server.http-listen-port=${port}`, ...opts.args],
  });
  const stop = async () => {
    await distributor.kill('SIGKILL');
    await kafka.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  };
  try {
    distributor.start();
    await distributor.waitReady(120_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { dir, kafka, distributor, stop };
}
