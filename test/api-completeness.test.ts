// The Prometheus and Mimir API beyond queries, against one real single
// process: a real Prometheus 2.42 reads Strata's data through remote_read
// (read_recent) and answers its own /api/v1/query with it; the streamed
// XOR-chunk answer decodes to the pushed samples; delete_series removes
// series from queries (blocks and head) and, once the compactor ran, from the
// blocks themselves (checked with promtool); a deleted tenant reads as empty.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePorts, type AppProcess } from '@strata/local-cluster';
import { FilesystemBucket } from '@strata/objstore';
import { decodeChunkedFrames, encodeReadRequest } from '@strata/querier';
import { decodeXorChunk } from '@strata/tsdb';
import { copyTenantBlocks, parseDump, promtool } from './support/promtool.ts';
import { api, generateSeries, push, waitFor, type MatrixSeries, type VectorSample } from './support/client.ts';
import { scrape } from './support/metrics.ts';
import { startSingleProcess, type SingleProcess } from './support/single-process.ts';

const PROMETHEUS = '/usr/bin/prometheus';

describe('API completeness on a single process', { timeout: 600_000 }, () => {
  let sp: SingleProcess;
  let strata: AppProcess;
  let dir: string;
  const now = Math.floor(Date.now() / 60_000) * 60_000;

  before(async () => {
    sp = await startSingleProcess('api', [
      // Blocks answer for recent data too, so a query after a flush reads them.
      '-querier.query-store-after=0s',
      '-blocks-storage.bucket-store.sync-interval=1s',
      '-compactor.compaction-interval=2s',
      '-compactor.first-level-compaction-wait-period=0s',
      '-compactor.cleanup-interval=2s',
    ]);
    strata = sp.strata;
    dir = sp.dir;
  });

  after(async () => {
    await sp?.stop();
  });

  test('a real Prometheus 2.42 with remote_read (read_recent) answers its own queries with data only Strata has', async (t) => {
    assert.ok(existsSync(PROMETHEUS), 'prometheus binary not found: install Debian package "prometheus" (.ci/run does)');
    // 200 samples 15s apart ending a minute ago: more than one 120-sample chunk per series.
    const start = now - 200 * 15_000;
    const pushed = generateSeries('rr_metric', 3, 200, start, 15_000, (s, i) => s * 1000 + i * 0.5);
    assert.equal((await push(strata.url, pushed)).status, 200);
    await waitFor('rr_metric in Strata', async () => {
      const r = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', {
        query: 'count(rr_metric)',
        time: String((start + 199 * 15_000) / 1000),
      });
      return r.data.result[0]?.value[1] === '3' ? true : undefined;
    });

    const [promPort] = await freePorts(1);
    const config = join(dir, 'prometheus.yml');
    writeFileSync(config, ['remote_read:', `  - url: ${strata.url}/prometheus/api/v1/read`, '    read_recent: true', ''].join('\n'));
    const child: ChildProcess = spawn(
      PROMETHEUS,
      [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'prometheus')}`, `--web.listen-address=127.0.0.1:${promPort}`],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    t.after(() => {
      if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGKILL');
    });
    const promUrl = `http://127.0.0.1:${promPort}`;
    const last = (start + 199 * 15_000) / 1000;
    const instant = await waitFor(
      'Prometheus answering rr_metric from Strata',
      async () => {
        const r = await api<{ result: VectorSample[] }>(promUrl, '/api/v1/query', { query: 'rr_metric', time: String(last) });
        return r.data.result.length === 3 ? r : undefined;
      },
      90_000,
    ).catch((err: Error) => assert.fail(`${err.message}\nprometheus stderr: ${stderr}`));
    const byInstance = new Map(instant.data.result.map((s) => [s.metric.instance, s.value[1]]));
    assert.deepEqual([...byInstance.entries()].sort(), [
      ['host-0', '99.5'],
      ['host-1', '1099.5'],
      ['host-2', '2099.5'],
    ]);
    // Every pushed sample comes back through Prometheus' own range query.
    const range = await api<{ result: MatrixSeries[] }>(promUrl, '/api/v1/query_range', {
      query: 'rr_metric{instance="host-1"}',
      start: String(start / 1000),
      end: String(last),
      step: '15',
    });
    assert.equal(range.data.result.length, 1);
    assert.deepEqual(
      range.data.result[0].values,
      pushed[1].samples.map((s) => [s.timestamp / 1000, String(s.value)]),
    );
    const page = await scrape(strata.url);
    const samples = page.sum('strata_querier_remote_read_responses_total', { type: 'SAMPLES' }) ?? 0;
    const streamed = page.sum('strata_querier_remote_read_responses_total', { type: 'STREAMED_XOR_CHUNKS' }) ?? 0;
    assert.ok(samples + streamed > 0, "Strata answered Prometheus' remote reads");
    t.diagnostic(`Prometheus 2.42's remote reads were answered as SAMPLES=${samples}, STREAMED_XOR_CHUNKS=${streamed}`);
  });

  test('remote read streams XOR chunks (STREAMED_XOR_CHUNKS) that decode to exactly the pushed samples', async () => {
    const start = now - 200 * 15_000;
    const body = encodeReadRequest({
      queries: [{ startMs: start, endMs: now, matchers: [{ type: '=', name: '__name__', value: 'rr_metric' }] }],
      acceptedResponseTypes: ['STREAMED_XOR_CHUNKS'],
    });
    const res = await fetch(`${strata.url}/api/v1/read`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-read-version': '0.1.0' },
      body,
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse');
    const frames = decodeChunkedFrames(new Uint8Array(await res.arrayBuffer()));
    assert.deepEqual(
      frames.map((f) => f.labels.instance),
      ['host-0', 'host-1', 'host-2'],
    );
    for (const [s, f] of frames.entries()) {
      assert.deepEqual(
        f.chunks.map((c) => c.type),
        [1, 1],
        'two XOR chunks (120 + 80 samples)',
      );
      const samples = f.chunks.flatMap((c) => {
        const d = decodeXorChunk(c.data);
        assert.deepEqual([c.minTimeMs, c.maxTimeMs], [d.timestamps[0], d.timestamps[d.timestamps.length - 1]]);
        return [...d.timestamps].map((t, i) => [t, d.values[i]]);
      });
      assert.deepEqual(
        samples,
        Array.from({ length: 200 }, (_, i) => [start + i * 15_000, s * 1000 + i * 0.5]),
      );
    }
  });

  test('delete_series: gone from queries after a flush to blocks, then gone from the compacted block itself', async () => {
    const start = now - 40 * 15_000;
    const series = generateSeries('del_metric', 2, 40, start, 15_000);
    assert.equal((await push(strata.url, series)).status, 200);
    const end = (start + 39 * 15_000) / 1000;
    // The raw samples (a range selector: no lookback filling the deleted gap).
    const rangeQuery = () => api<{ result: MatrixSeries[] }>(strata.url, '/prometheus/api/v1/query', { query: 'del_metric[10m]', time: String(end) });
    await waitFor('del_metric in Strata', async () => ((await rangeQuery()).data.result.length === 2 ? true : undefined));
    const flush = await fetch(`${strata.url}/ingester/flush?wait=true`, { method: 'POST' });
    assert.equal(flush.status, 204, await flush.text());

    // host-0 entirely; host-1 samples 10..19 only.
    const del = async (match: string, from: number, to: number) => {
      const qs = new URLSearchParams({ 'match[]': match, start: String(from / 1000), end: String(to / 1000) });
      const res = await fetch(`${strata.url}/prometheus/api/v1/admin/tsdb/delete_series?${qs}`, { method: 'POST' });
      assert.equal(res.status, 204, await res.text());
    };
    await del('del_metric{instance="host-0"}', start - 1000, now);
    await del('del_metric{instance="host-1"}', start + 10 * 15_000, start + 19 * 15_000);
    const after = await rangeQuery();
    assert.deepEqual(
      after.data.result.map((s) => s.metric.instance),
      ['host-1'],
    );
    const kept = series[1].samples.filter((_, i) => i < 10 || i > 19).map((s) => [s.timestamp / 1000, String(s.value)]);
    assert.deepEqual(after.data.result[0].values, kept);
    const instant = await api<{ result: VectorSample[] }>(strata.url, '/api/v1/query', { query: 'count(del_metric)', time: String(end) });
    assert.deepEqual(
      instant.data.result.map((r) => r.value[1]),
      ['1'],
    );

    // The compactor rewrites the block without the deleted samples; the old one is marked for deletion.
    const bucketDir = join(dir, 'data', 'bucket');
    const bucket = new FilesystemBucket(bucketDir);
    const tenantDir = join(bucketDir, 'anonymous');
    // Done when no live block overlapping the deleted range is an unrewritten ingester block (level 1).
    const compacted = await waitFor(
      'the blocks holding deleted samples rewritten',
      async () => {
        const live = readdirSync(tenantDir).filter(
          (n) => /^[0-9A-Z]{26}$/.test(n) && existsSync(join(tenantDir, n, 'meta.json')) && !existsSync(join(tenantDir, n, 'deletion-mark.json')),
        );
        const metas = live.map(
          (n) =>
            JSON.parse(readFileSync(join(tenantDir, n, 'meta.json'), 'utf8')) as {
              ulid: string;
              minTime: number;
              maxTime: number;
              compaction: { level: number };
            },
        );
        const pending = metas.filter((m) => m.compaction.level === 1 && m.minTime <= now && start <= m.maxTime);
        return metas.some((m) => m.compaction.level >= 2) && pending.length === 0 ? metas : undefined;
      },
      120_000,
    );
    const out = join(dir, 'dump');
    await copyTenantBlocks(bucket, 'anonymous', out, (u) => compacted.some((m) => m.ulid === u));
    const dump = parseDump(await promtool('tsdb', 'dump', out));
    const del0 = [...dump.keys()].filter((k) => k.includes('del_metric'));
    assert.deepEqual(del0, ['{__name__="del_metric", instance="host-1", job="e2e"}'], 'host-0 is not in the compacted block');
    assert.deepEqual(
      dump.get(del0[0]),
      series[1].samples.filter((_, i) => i < 10 || i > 19).map((s) => [s.timestamp, s.value]),
      'host-1 lost exactly the deleted range',
    );
    assert.equal([...dump.keys()].filter((k) => k.includes('rr_metric')).length, 3, 'other series are untouched');
    const stillGone = await rangeQuery();
    assert.deepEqual(
      stillGone.data.result.map((s) => s.metric.instance),
      ['host-1'],
    );
  });

  test('status endpoints of the real process: buildinfo from package.json and git, config redacted, tsdb stats', async () => {
    const build = await api<{ version: string; revision: string }>(strata.url, '/prometheus/api/v1/status/buildinfo', {});
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string };
    assert.equal(build.data.version, pkg.version);
    const git = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: join(import.meta.dirname, '..') });
    assert.equal(build.data.revision, git.status === 0 ? git.stdout.toString().trim() : 'unknown');
    const config = await api<{ yaml: string }>(strata.url, '/api/v1/status/config', {});
    assert.match(config.data.yaml, /^querier\.query-store-after: 0$/m);
    const tsdb = await api<{ headStats: { numSeries: number }; seriesCountByMetricName: { name: string; value: number }[] }>(
      strata.url,
      '/api/v1/status/tsdb',
      {},
    );
    assert.ok(
      tsdb.data.seriesCountByMetricName.some((m) => m.name === 'rr_metric' && m.value === 3),
      JSON.stringify(tsdb.data),
    );
  });

  test('POST /compactor/delete_tenant: the tenant reads as empty, and the compactor deletes its blocks', async () => {
    const before = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', { query: 'count(rr_metric)', time: String(now / 1000 - 60) });
    assert.deepEqual(
      before.data.result.map((r) => r.value[1]),
      ['3'],
    );
    const res = await fetch(`${strata.url}/compactor/delete_tenant`, { method: 'POST' });
    assert.equal(res.status, 200, await res.text());
    const afterDelete = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', {
      query: 'count(rr_metric)',
      time: String(now / 1000 - 60),
    });
    assert.deepEqual(afterDelete.data.result, []);
    const status = await waitFor(
      'the tenant blocks deleted',
      async () => {
        const r = (await (await fetch(`${strata.url}/compactor/delete_tenant_status`)).json()) as { tenant_id: string; blocks_deleted: boolean };
        return r.blocks_deleted ? r : undefined;
      },
      120_000,
    );
    assert.equal(status.tenant_id, 'anonymous');
    const tenantDir = join(dir, 'data', 'bucket', 'anonymous');
    assert.deepEqual(
      readdirSync(tenantDir).filter((n) => /^[0-9A-Z]{26}$/.test(n) && existsSync(join(tenantDir, n, 'meta.json'))),
      [],
    );
  });
});
