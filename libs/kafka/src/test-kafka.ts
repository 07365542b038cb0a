// Test helpers shared by this lib's tests: a real 1-node Kafka in a temp dir and a record
// collector. Not part of the public surface.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTopic, startKafka, type LocalKafka } from '@strata/local-kafka';
import type { ConsumedRecord } from './record.ts';

export interface TestKafka {
  kafka: LocalKafka;
  cleanup(): Promise<void>;
}

export async function startTestKafka(topics: Record<string, number>): Promise<TestKafka> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-kafka-test-'));
  const kafka = await startKafka({ dataDir: dir, brokers: 1 });
  for (const [topic, partitions] of Object.entries(topics)) {
    await ensureTopic({ brokers: kafka.brokers, topic, partitions, replicationFactor: 1 });
  }
  return {
    kafka,
    async cleanup() {
      await kafka.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Collects consumed records; `waitFor(n)` resolves once at least n arrived. */
export class Collector {
  readonly records: ConsumedRecord[] = [];
  readonly batches: number[] = [];
  private waiters: { n: number; resolve: () => void }[] = [];

  readonly onRecords = (batch: ConsumedRecord[]): void => {
    this.records.push(...batch);
    this.batches.push(batch.length);
    this.waiters = this.waiters.filter((w) => {
      if (this.records.length < w.n) return true;
      w.resolve();
      return false;
    });
  };

  waitFor(n: number, timeoutMs = 30_000): Promise<void> {
    if (this.records.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`got ${this.records.length} of ${n} records`)), timeoutMs);
      this.waiters.push({
        n,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  values(): string[] {
    return this.records.map((r) => r.value.toString());
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
