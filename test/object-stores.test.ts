// The single process on Google Cloud Storage and Azure Blob Storage, each a real
// emulator on loopback (fake-gcs-server, Azurite): samples pushed, the head
// flushed into blocks shipped to the emulator, and the same samples read back
// once the head no longer holds them — by the process itself and by a querier
// that has no ingesters, so its answer comes from the bucket alone.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { bucketConfigShape, createBucket, startAzuriteServer, startGcsServer, type Bucket } from '@strata/objstore';
import { flagsToConfig, parseFlags } from '@strata/service';
import { FAKE_GCS_SERVER } from '../scripts/fake-gcs-server.mjs';
import { api, push, waitFor } from './support/client.ts';

const TENANT = 'anonymous';
const METRIC = 'object_store_metric';
const SERIES = 20;
const SECONDS = 120;
const STEP = 1_000;

interface Emulator {
  flags(): string[];
  stop(): Promise<void>;
}

const backends: { name: 'gcs' | 'azure'; start: (dir: string) => Promise<Emulator> }[] = [
  {
    name: 'gcs',
    // Built by the test bootstrap; a missing one is a failure, never a skip.
    start: () => {
      assert.ok(existsSync(FAKE_GCS_SERVER), `${FAKE_GCS_SERVER} is missing; build it with node scripts/fake-gcs-server.mjs`);
      return startGcsServer({ binary: FAKE_GCS_SERVER });
    },
  },
  { name: 'azure', start: (dir) => startAzuriteServer({ dir: join(dir, 'azurite') }) },
];

for (const backend of backends) {
  describe(`single process on the ${backend.name} bucket`, { timeout: 600_000 }, () => {
    let dir: string;
    let emulator: Emulator;
    let bucket: Bucket;
    let strata: AppProcess;
    let storeOnly: AppProcess;
    // instance -> timestamp -> value
    const pushed = new Map<string, Map<number, number>>();
    const T0 = Math.floor((Date.now() - 10 * 60_000) / 1000) * 1000;
    const common = ['-auth.multitenancy-enabled=false', '-blocks-storage.bucket-store.sync-interval=1s', '-querier.query-store-after=0s'];

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), `strata-object-stores-${backend.name}-`));
      emulator = await backend.start(dir);
      bucket = createBucket(flagsToConfig(bucketConfigShape, parseFlags(emulator.flags(), {})));
      const [port, storePort] = await freePorts(2);
      strata = new AppProcess({
        name: 'strata',
        target: 'all',
        httpPort: port,
        logFile: join(dir, 'strata.log'),
        args: [
          `-data-dir=${dir}/data`,
          `-server.http-listen-port=${port}`,
          ...emulator.flags(),
          ...common,
          '-blocks-storage.tsdb.block-ranges-period=20s',
          '-blocks-storage.tsdb.head-compaction-interval=1s',
        ],
      });
      strata.start();
      await strata.waitReady(180_000);
      // A querier with no ingesters: what it returns comes from the bucket alone.
      storeOnly = new AppProcess({
        name: 'querier-store-only',
        target: 'querier',
        httpPort: storePort,
        logFile: join(dir, 'querier-store-only.log'),
        args: [`-server.http-listen-port=${storePort}`, ...emulator.flags(), ...common],
      });
      storeOnly.start();
      await storeOnly.waitReady();
    });

    after(async () => {
      await storeOnly?.kill('SIGTERM');
      await strata?.kill('SIGTERM');
      await bucket?.close();
      await emulator?.stop();
      if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
    });

    async function readRaw(url: string): Promise<Map<string, Map<number, number>>> {
      const res = await api<{ result: { metric: Record<string, string>; values: [number, string][] }[] }>(url, '/prometheus/api/v1/query', {
        query: `${METRIC}[1h]`,
        time: String((T0 + SECONDS * STEP) / 1000),
      });
      assert.equal(res.httpStatus, 200, res.error);
      return new Map(res.data.result.map((s) => [s.metric.instance, new Map(s.values.map(([t, v]) => [Math.round(t * 1000), Number(v)]))]));
    }

    async function assertReadsEverything(url: string, what: string): Promise<void> {
      await waitFor(
        what,
        async () => {
          const got = await readRaw(url);
          assert.deepEqual(got, pushed);
          return true;
        },
        30_000,
      ).catch(async (err) => assert.deepEqual(await readRaw(url), pushed, `${what}: ${(err as Error).message}`));
    }

    test('pushed samples are flushed into blocks in the bucket and read back from it exactly', async () => {
      for (let done = 0; done < SECONDS; done += 10) {
        const series = Array.from({ length: SERIES }, (_, s) => ({
          labels: [
            { name: '__name__', value: METRIC },
            { name: 'instance', value: `host-${s}` },
          ],
          samples: Array.from({ length: 10 }, (_, i) => {
            const k = done + i;
            return { timestamp: T0 + k * STEP, value: s * 1000 + k / 4 };
          }),
        }));
        const res = await push(strata.url, series);
        assert.equal(res.status, 200, `push: ${res.status} ${res.body}`);
        for (const s of series) {
          let m = pushed.get(s.labels[1].value);
          if (!m) pushed.set(s.labels[1].value, (m = new Map()));
          for (const smp of s.samples) m.set(smp.timestamp, smp.value);
        }
      }
      await assertReadsEverything(strata.url, 'from the head');

      const flushed = await fetch(`${strata.url}/ingester/flush?wait=true`, { method: 'POST' });
      assert.equal(flushed.status, 204, await flushed.text());
      const metrics = await (await fetch(`${strata.url}/metrics`)).text();
      assert.match(metrics, /strata_ingester_active_series\{[^}]*\} 0/, 'the head was truncated');

      const blocks = (await bucket.list(`${TENANT}/`)).filter((k) => /[0-9A-Z]{26}\/$/.test(k));
      assert.ok(blocks.length >= 1, `blocks in the ${backend.name} bucket: ${blocks.join(' ')}`);
      for (const b of blocks) assert.ok(await bucket.exists(`${b}meta.json`), `${b}meta.json`);

      await assertReadsEverything(storeOnly.url, 'store-only querier, from the bucket');
      await assertReadsEverything(strata.url, 'the single process, after the flush');
    });
  });
}
