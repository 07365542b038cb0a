// Test helpers shared by this lib's tests and test/kafka-three-brokers.test.ts (as
// @strata/kafka/testing): a real 1-node Kafka in a temp dir and a record collector.
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
  private waiters: { n: number; count: () => number; resolve: () => void }[] = [];

  readonly onRecords = (batch: ConsumedRecord[]): void => {
    this.records.push(...batch);
    this.batches.push(batch.length);
    this.waiters = this.waiters.filter((w) => {
      if (w.count() < w.n) return true;
      w.resolve();
      return false;
    });
  };

  /**
   * Resolves once `n` records arrived, or with `distinct`, `n` once adjacent repeats are collapsed:
   * the writer delivers at least once (an attempt whose answer was lost is sent again).
   */
  waitFor(n: number, timeoutMs = 30_000, distinct = false): Promise<void> {
    const count = () => (distinct ? this.distinctValues().length : this.records.length);
    if (count() >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`got ${count()} of ${n} records`)), timeoutMs);
      this.waiters.push({
        n,
        count,
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

  /** values() with adjacent repeats collapsed: what was written, each once, in order. */
  distinctValues(): string[] {
    return this.values().filter((v, i, all) => i === 0 || v !== all[i - 1]);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
