// Blocks end to end with separate processes and a real broker, on the
// filesystem bucket, on S3, GCS and Azure (s3rver, fake-gcs-server and Azurite
// on loopback): both zones' ingesters cut
// short blocks and ship them; promtool lists and dumps exactly what was
// pushed; queries across head and blocks are the same before and after flush;
// a kill -9'd ingester replays only from its committed offset and nothing is
// lost; the compactor leaves one block per range with no duplicate sample.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, LocalCluster, freePorts } from '@strata/local-cluster';
import { bucketConfigShape, createBucket, startAzuriteServer, startGcsServer, startS3Server, type Bucket } from '@strata/objstore';
import { flagsToConfig, parseFlags } from '@strata/service';
import { BucketStore, readBucketIndex } from '@strata/storegateway';
import { createLogger } from '@strata/service';
import { api, push, waitFor } from './support/client.ts';
import { copyTenantBlocks, havePromtool, parseDump, parseList, promtool } from './support/promtool.ts';
import { FAKE_GCS_SERVER } from '../scripts/fake-gcs-server.mjs';

const TENANT = 'team-blocks';
const HEADERS = { 'X-Scope-OrgID': TENANT };
const METRIC = 'e2e_blocks_metric';
const SERIES = 30;
const R = 20_000; // block range: 20s
const STEP = 1_000;
const logger = createLogger('e2e-blocks', 'silent');

// STRATA_E2E_BLOCKS_BACKENDS=filesystem runs one backend only (for quick iteration); gcs,azure run here on
// demand (each adds ~1 min): npm test covers them through test/object-stores.test.ts and bucket.test.ts.
const backends = (process.env.STRATA_E2E_BLOCKS_BACKENDS ?? 'filesystem,s3').split(',') as ('filesystem' | 's3' | 'gcs' | 'azure')[];

function skipReason(backend: string): string | false {
  if (!havePromtool) return 'promtool is not installed';
  if (backend === 'gcs' && !existsSync(FAKE_GCS_SERVER)) return `${FAKE_GCS_SERVER} is missing; the test bootstrap builds it`;
  return false;
}

for (const backend of backends) {
  describe(`blocks e2e on the ${backend} bucket`, { timeout: 600_000, skip: skipReason(backend) }, () => {
    let cluster: LocalCluster;
    let dir: string;
    let emulator: { flags(): string[]; stop(): Promise<void> } | undefined;
    let bucket: Bucket;
    let storeOnly: AppProcess;
    // Every pushed sample: instance -> timestamp -> value (NaN for stale markers).
    const pushed = new Map<string, Map<number, number>>();
    // Aligned to the compactor's second range (6R): the 140 s pushed fill its first window, so
    // that window is compacted to level 3 whatever the clock says. Unaligned, a start 100 s into
    // a window leaves one block in the first and an incomplete second one holding the newest
    // candidate, which the planner rightly leaves alone.
    const T0 = Math.floor((Date.now() - 10 * 60_000) / (6 * R)) * (6 * R);
    let nextT = T0;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), `strata-e2e-blocks-${backend}-`));
      let bucketArgs: string[] | undefined;
      if (backend === 's3') emulator = await startS3Server({ dir: join(dir, 's3') });
      if (backend === 'gcs') emulator = await startGcsServer({ binary: FAKE_GCS_SERVER });
      if (backend === 'azure') emulator = await startAzuriteServer({ dir: join(dir, 'azurite') });
      bucketArgs = emulator?.flags();
      const common = ['-blocks-storage.bucket-store.sync-interval=1s', '-blocks-storage.bucket-store.ignore-deletion-marks-delay=0s'];
      cluster = await LocalCluster.start({
        dataDir: dir,
        partitions: 1,
        bucketArgs,
        compactor: true,
        extraArgs: {
          ingester: [`-blocks-storage.tsdb.block-ranges-period=${R / 1000}s`, '-blocks-storage.tsdb.head-compaction-interval=1s'],
          querier: [...common, '-querier.query-store-after=0s', '-querier.query-ingesters-within=0s'],
          compactor: [
            `-compactor.block-ranges=${R / 1000}s,${(6 * R) / 1000}s`,
            '-compactor.compaction-interval=2s',
            '-compactor.cleanup-interval=2s',
            // Level-1 blocks wait until the test is done looking at them as the ingesters shipped them.
            '-compactor.first-level-compaction-wait-period=10m',
            // s3rver omits tenants that hold only nested objects from a root listing (real S3 does not).
            `-compactor.enabled-tenants=${TENANT}`,
          ],
        },
      });
      bucket = createBucket(flagsToConfig(bucketConfigShape, parseFlags(bucketArgs ?? [`-blocks-storage.filesystem.dir=${join(dir, 'bucket')}`], {})));
      // A querier with no ingesters: what it returns comes from the bucket alone.
      const [port] = await freePorts(1);
      storeOnly = new AppProcess({
        name: 'querier-store-only',
        target: 'querier',
        httpPort: port,
        logFile: join(dir, 'logs', 'querier-store-only.log'),
        args: [
          `-server.http-listen-port=${port}`,
          ...(bucketArgs ?? [`-blocks-storage.filesystem.dir=${join(dir, 'bucket')}`]),
          ...common,
          '-querier.query-store-after=0s',
        ],
      });
      storeOnly.start();
      await storeOnly.waitReady();
    });

    after(async () => {
      await storeOnly?.kill('SIGTERM');
      await cluster?.stop();
      await bucket?.close();
      await emulator?.stop();
      if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
    });

    /** Pushes `seconds` of scrapes (every series each second), 5s per request, as an agent would. */
    async function scrape(seconds: number): Promise<void> {
      for (let done = 0; done < seconds; done += 5) {
        const n = Math.min(5, seconds - done);
        const ts = Array.from({ length: n }, (_, i) => nextT + i * STEP);
        const series = Array.from({ length: SERIES }, (_, s) => ({
          labels: [
            { name: '__name__', value: METRIC },
            { name: 'instance', value: `host-${s}` },
            { name: 'job', value: 'blocks' },
          ],
          samples: ts.map((t) => {
            const k = (t - T0) / STEP;
            const stale = s % 10 === 3 && k % 50 === 25;
            return { timestamp: t, value: stale ? 0 : s * 1000 + k / 4, stale };
          }),
        }));
        const res = await push(cluster.distributorUrl, series, HEADERS);
        assert.equal(res.status, 200, `push: ${res.status} ${res.body}`);
        for (const s of series) {
          let m = pushed.get(s.labels[1].value);
          if (!m) pushed.set(s.labels[1].value, (m = new Map()));
          for (const smp of s.samples) m.set(smp.timestamp, smp.stale ? NaN : smp.value);
        }
        nextT += n * STEP;
      }
    }

    /** Every raw sample the querier returns (range selector: stale markers are not samples there). */
    async function readRaw(url: string): Promise<Map<string, Map<number, number>>> {
      const res = await api<{ result: { metric: Record<string, string>; values: [number, string][] }[] }>(
        url,
        '/prometheus/api/v1/query',
        { query: `${METRIC}[1h]`, time: String((nextT + 1) / 1000) },
        { headers: HEADERS },
      );
      assert.equal(res.httpStatus, 200, res.error);
      return new Map(res.data.result.map((s) => [s.metric.instance, new Map(s.values.map(([t, v]) => [Math.round(t * 1000), Number(v)]))]));
    }

    function expectedRaw(): Map<string, Map<number, number>> {
      return new Map([...pushed].map(([k, m]) => [k, new Map([...m].filter(([, v]) => !Number.isNaN(v)))]));
    }

    async function assertReadsEverything(url: string, what: string): Promise<void> {
      const want = expectedRaw();
      await waitFor(
        what,
        async () => {
          const got = await readRaw(url);
          assert.deepEqual(got, want, what);
          return true;
        },
        30_000,
      ).catch(async (err) => {
        assert.deepEqual(await readRaw(url), want, `${what}: ${(err as Error).message}`);
      });
    }

    function shippedUlids(name: string): string[] {
      return [...readFileSync(cluster.process(name).opts.logFile, 'utf8').matchAll(/shipped block (\w+)/g)].map((m) => m[1]);
    }

    function shippedBy(name: string): number {
      return shippedUlids(name).length;
    }

    test('both zones cut blocks with a short block range and ship them', async () => {
      await scrape(90);
      await waitFor('blocks shipped by both zones', async () =>
        shippedBy('ingester-zone-a-0') >= 2 && shippedBy('ingester-zone-b-0') >= 2 ? true : undefined,
      );
      const blocks = (await bucket.list(`${TENANT}/`)).filter((k) => /[0-9A-Z]{26}\/$/.test(k));
      const shipped = ['ingester-zone-a-0', 'ingester-zone-b-0'].map((n) => `${n}: ${shippedUlids(n).join(' ')}`).join('; ');
      assert.ok(blocks.length >= 4, `blocks in the bucket: ${blocks.join(' ')}; shipped: ${shipped}`);
      await assertReadsEverything(cluster.querierUrl, 'head + blocks');
    });

    test('a query spanning head and blocks is the same before and after flush and head truncation', async () => {
      const before = await readRaw(cluster.querierUrl);
      for (const name of ['ingester-zone-a-0', 'ingester-zone-b-0']) {
        const res = await fetch(`${cluster.process(name).url}/ingester/flush?wait=true`, { method: 'POST' });
        assert.equal(res.status, 204, await res.text());
      }
      assert.deepEqual(await readRaw(cluster.querierUrl), before);
      assert.deepEqual(before, expectedRaw());
      // Everything is in the bucket now: the store-only querier has it all too.
      await assertReadsEverything(storeOnly.url, 'store only, after flush');
      const metrics = await (await fetch(`${cluster.process('ingester-zone-a-0').url}/metrics`)).text();
      assert.match(metrics, /strata_ingester_active_series\{[^}]*\} 0/, 'the head was truncated');
    });

    test('promtool lists and dumps the tenant folder: exactly the samples pushed, stale markers included', async () => {
      const out = await mkdtemp(join(tmpdir(), 'strata-promtool-e2e-'));
      try {
        const ulids = await copyTenantBlocks(bucket, TENANT, out);
        const listed = parseList(await promtool('tsdb', 'list', out));
        assert.deepEqual(listed.map((b) => b.ulid).sort(), ulids.sort());
        const total = [...pushed.values()].reduce((a, m) => a + m.size, 0);
        assert.ok(listed.reduce((a, b) => a + b.samples, 0) >= total, 'both zones ship every sample');
        const dump = parseDump(await promtool('tsdb', 'dump', `--min-time=${T0}`, `--max-time=${nextT}`, out));
        assert.equal(dump.size, SERIES);
        for (const [instance, want] of pushed) {
          const got = dump.get(`{__name__="${METRIC}", instance="${instance}", job="blocks"}`);
          assert.ok(got, `${instance} missing from the dump`);
          assert.deepEqual(
            got.map(([t]) => t),
            [...want.keys()],
            `${instance}: timestamps`,
          );
          got.forEach(([t, v]) => {
            const w = want.get(t) as number;
            assert.ok(Number.isNaN(w) ? Number.isNaN(v) : v === w, `${instance} @${t}: dumped ${v}, pushed ${w}`);
          });
        }
      } finally {
        await rm(out, { recursive: true, force: true });
      }
    });

    test('kill -9 of an ingester mid-append: it replays only from its committed offset and loses nothing', async () => {
      await scrape(30);
      const a = cluster.process('ingester-zone-a-0');
      const pending = scrape(20); // appends in flight while it dies
      await new Promise((r) => setTimeout(r, 300));
      await a.kill('SIGKILL');
      await pending;
      a.start();
      await a.waitReady();
      const log = readFileSync(a.opts.logFile, 'utf8');
      const starts = [...log.matchAll(/consuming partition 0 from offset (\d+) \(the committed offset\)/g)].map((m) => Number(m[1]));
      assert.ok(starts.length >= 2, 'started twice');
      assert.ok(starts[starts.length - 1] > 0, `the restart resumed at the committed offset ${starts[starts.length - 1]}, not at 0`);
      // Zone a is preferred: it answers with its blocks, its replayed head and the bucket.
      await assertReadsEverything(cluster.querierUrl, 'after kill -9 and restart');
      // No block without meta.json is visible anywhere (partial uploads are skipped).
      const store = new BucketStore({ bucket, logger, syncIntervalMs: 0, ignoreDeletionMarksDelayMs: 0, bucketIndexEnabled: false, warmStartPeriodMs: 0 });
      for (const b of await store.blocksOf(TENANT)) assert.ok(await bucket.exists(`${TENANT}/${b.ulid}/meta.json`));
      await store.stop();
    });

    test('the compactor merges the zones and levels: one block per range, no duplicate sample, same query results', async () => {
      for (const name of ['ingester-zone-a-0', 'ingester-zone-b-0']) {
        assert.equal((await fetch(`${cluster.process(name).url}/ingester/flush?wait=true`, { method: 'POST' })).status, 204);
      }
      const before = await readRaw(cluster.querierUrl);
      assert.deepEqual(before, expectedRaw());
      // Let the compactor at the level-1 blocks now.
      const c = cluster.process('compactor');
      await c.kill('SIGTERM');
      c.opts.args.push('-compactor.first-level-compaction-wait-period=0s');
      c.start();
      await c.waitReady();
      const live = await waitFor(
        'one block per range in the bucket index',
        async () => {
          const idx = await readBucketIndex(bucket, TENANT);
          if (!idx) return undefined;
          const marked = new Set(idx.block_deletion_marks.map((m) => m.block_id));
          const blocks = idx.blocks.filter((b) => !marked.has(b.block_id)).sort((x, y) => x.min_time - y.min_time);
          for (let i = 1; i < blocks.length; i++) if (blocks[i].min_time < blocks[i - 1].max_time) return undefined;
          return blocks.some((b) => (b.compaction_level ?? 1) >= 3) ? blocks : undefined;
        },
        120_000,
      );
      const out = await mkdtemp(join(tmpdir(), 'strata-promtool-compacted-'));
      try {
        const keep = new Set(live.map((b) => b.block_id));
        await copyTenantBlocks(bucket, TENANT, out, (u) => keep.has(u));
        const listed = parseList(await promtool('tsdb', 'list', out));
        const total = [...pushed.values()].reduce((a, m) => a + m.size, 0);
        assert.equal(
          listed.reduce((a, b) => a + b.samples, 0),
          total,
          'compacted blocks hold every sample exactly once',
        );
        const dump = parseDump(await promtool('tsdb', 'dump', `--min-time=${T0}`, `--max-time=${nextT}`, out));
        for (const [instance, want] of pushed) {
          const got = dump.get(`{__name__="${METRIC}", instance="${instance}", job="blocks"}`)!;
          assert.equal(got.length, want.size, `${instance}: no sample twice`);
        }
      } finally {
        await rm(out, { recursive: true, force: true });
      }
      assert.deepEqual(await readRaw(cluster.querierUrl), before, 'same results after compaction');
      await assertReadsEverything(storeOnly.url, 'store only, after compaction');
    });
  });
}
