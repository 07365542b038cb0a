// Backfill as a team moving from Prometheus does it: an OpenMetrics file becomes TSDB blocks with
// Prometheus 3.16's `promtool tsdb create-blocks-from openmetrics`, Mimir's own `mimirtool backfill`
// (built by the test bootstrap) uploads them to Strata's block-upload API, and Strata then answers
// over that window exactly as a Prometheus 3 opened on a copy of the same blocks does, and with the
// values written. A tenant without compactor_block_upload_enabled is refused as Mimir refuses it;
// a block with a flipped index byte or a truncated chunk file is refused with the reason, and none
// of its data becomes queryable. GET /check says where each upload stands.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MIMIRTOOL } from '../scripts/mimirtool.mjs';
import { startPrometheus3, type Prometheus3 } from './support/prometheus3.ts';
import { promtool3 } from './support/promtool.ts';
import { startSingleProcess, type SingleProcess } from './support/single-process.ts';

const run = promisify(execFile);
const MIN = 60_000;
const H = 60 * MIN;
const TENANT = 'team-a';

const RUNTIME_CONFIG = `overrides:
  ${TENANT}:
    compactor_block_upload_enabled: true
`;

interface Answer {
  status: string;
  data: { resultType: string; result: { metric: Record<string, string>; values: [number, string][] }[] };
}

/** An OpenMetrics file of `families`, one point a minute from `from` to `to` (ms); values from `value(series, minute)`. */
function openMetrics(
  from: number,
  to: number,
  families: { name: string; type: 'counter' | 'gauge'; series: string[]; value: (s: number, i: number) => number }[],
): string {
  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} Backfilled ${f.type}.`, `# TYPE ${f.name} ${f.type}`);
    f.series.forEach((labels, s) => {
      for (let t = from, i = 0; t <= to; t += MIN, i++) lines.push(`${f.name}${f.type === 'counter' ? '_total' : ''}{${labels}} ${f.value(s, i)} ${t / 1000}`);
    });
  }
  lines.push('# EOF', '');
  return lines.join('\n');
}

/** promtool's blocks of `file` under `out`, oldest first. */
async function createBlocks(file: string, out: string): Promise<string[]> {
  await promtool3('tsdb', 'create-blocks-from', 'openmetrics', file, out);
  return readdirSync(out)
    .filter((n) => /^[0-9A-Z]{26}$/.test(n))
    .sort()
    .map((n) => join(out, n));
}

async function mimirtool(address: string, tenant: string, blocks: string[]): Promise<{ ok: boolean; output: string }> {
  try {
    const r = await run(MIMIRTOOL, ['backfill', `--address=${address}`, `--id=${tenant}`, '--sleep-time=200ms', ...blocks], { timeout: 300_000 });
    return { ok: true, output: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}${e.message}` };
  }
}

describe('mimirtool backfill of promtool-made blocks into Strata', { timeout: 900_000 }, () => {
  let dir: string;
  let strata: SingleProcess;
  let prometheus: Prometheus3;
  let blocks: string[];
  let from = 0;
  let to = 0;
  let backfill: { ok: boolean; output: string };

  const query = async (path: string, params: Record<string, string>, url = strata.strata.url, tenant = TENANT): Promise<Answer> => {
    const res = await fetch(`${url}${path}?${new URLSearchParams(params)}`, { headers: { 'X-Scope-OrgID': tenant }, signal: AbortSignal.timeout(60_000) });
    return (await res.json()) as Answer;
  };
  const check = async (ulid: string, tenant = TENANT) => {
    const res = await fetch(`${strata.strata.url}/api/v1/upload/block/${ulid}/check`, { headers: { 'X-Scope-OrgID': tenant } });
    return { status: res.status, body: await res.text() };
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-block-upload-'));
    // Whole minutes from 26 h to 2 h ago: inside any retention, old enough for no ingester to hold it.
    to = Math.floor((Date.now() - 2 * H) / MIN) * MIN;
    from = to - 24 * H;
    writeFileSync(
      join(dir, 'history.om'),
      openMetrics(from, to, [
        { name: 'backfill_requests', type: 'counter', series: ['job="app",code="200"', 'job="app",code="500"'], value: (s, i) => (s === 0 ? 3 : 1) * i },
        { name: 'backfill_temperature_celsius', type: 'gauge', series: ['room="lab"', 'room="office"'], value: (s, i) => 20 + s + (i % 10) * 0.5 },
        { name: 'backfill_queue_length', type: 'gauge', series: ['job="app"'], value: (_s, i) => i % 7 },
      ]),
    );
    writeFileSync(join(dir, 'runtime.yaml'), RUNTIME_CONFIG);
    [strata, blocks] = await Promise.all([
      startSingleProcess('block-upload', [
        '-auth.multitenancy-enabled=true',
        `-runtime-config.file=${join(dir, 'runtime.yaml')}`,
        // The backfilled window ends 2 h ago: the querier must ask the bucket for all of it.
        '-querier.query-store-after=0s',
        '-blocks-storage.bucket-store.sync-interval=1s',
      ]),
      createBlocks(join(dir, 'history.om'), join(dir, 'blocks')),
    ]);
    // Prometheus 3 on its own copy: it compacts the blocks it is given.
    mkdirSync(join(dir, 'reference'));
    cpSync(join(dir, 'blocks'), join(dir, 'reference', 'prometheus'), { recursive: true });
    prometheus = await startPrometheus3(join(dir, 'reference'), []);
    backfill = await mimirtool(strata.strata.url, TENANT, blocks);
  });

  after(async () => {
    prometheus?.stop();
    await strata?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('mimirtool uploads every block and /check says complete', async () => {
    assert.ok(blocks.length >= 12, `promtool made ${blocks.length} blocks of 2 h`);
    assert.ok(backfill.ok, backfill.output);
    assert.match(backfill.output, new RegExp(`succeeded=${blocks.length} already_exists=0 failed=0`));
    for (const b of blocks) assert.deepEqual(await check(b.slice(-26)), { status: 200, body: '{"result":"complete"}' });
    const meta = JSON.parse(readFileSync(join(strata.dir, 'data', 'bucket', TENANT, blocks[0].slice(-26), 'meta.json'), 'utf8')) as {
      thanos: { source: string };
      compaction: { sources: string[] };
    };
    assert.equal(meta.thanos.source, 'upload');
    assert.deepEqual(meta.compaction.sources, [blocks[0].slice(-26)]);
    const again = await mimirtool(strata.strata.url, TENANT, blocks.slice(0, 1));
    assert.ok(again.ok, again.output);
    assert.match(again.output, /block already exists on the server/);
  });

  test('the backfilled window answers as Prometheus 3 on the same blocks, and with the values written', async () => {
    const range = { start: String(from / 1000), end: String(to / 1000), step: '300' };
    for (const q of [
      'backfill_requests_total',
      'rate(backfill_requests_total[5m])',
      'sum by (job) (increase(backfill_requests_total[1h]))',
      'backfill_temperature_celsius',
      'max_over_time(backfill_temperature_celsius[30m])',
      'backfill_queue_length',
      'count by (__name__) ({__name__=~"backfill_.*"})',
    ]) {
      const params = { query: q, ...range };
      const [s, p] = await Promise.all([query('/prometheus/api/v1/query_range', params), query('/api/v1/query_range', params, prometheus.url)]);
      assert.equal(s.status, 'success', `${q}: ${JSON.stringify(s)}`);
      assert.notDeepEqual(p.data.result, [], `${q}: Prometheus 3 found data`);
      const sorted = (a: Answer) => [...a.data.result].sort((x, y) => (JSON.stringify(x.metric) < JSON.stringify(y.metric) ? -1 : 1));
      assert.deepEqual(sorted(s), sorted(p), q);
    }
    const raw = await query('/prometheus/api/v1/query_range', {
      query: 'backfill_queue_length',
      start: String(from / 1000),
      end: String(to / 1000),
      step: '60',
    });
    const values = raw.data.result[0].values;
    assert.equal(values.length, 24 * 60 + 1, 'one point a minute over 24 h');
    values.forEach(([t, v], i) => assert.deepEqual([t * 1000, Number(v)], [from + i * MIN, i % 7]));
  });

  test('a tenant without compactor_block_upload_enabled is refused with 400 "block upload is disabled"', async () => {
    const r = await mimirtool(strata.strata.url, 'team-off', blocks.slice(0, 1));
    assert.equal(r.ok, false);
    assert.match(r.output, /status="400 Bad Request" body="block upload is disabled\\n"/);
    assert.equal((await check(blocks[0].slice(-26), 'team-off')).status, 400);
  });

  test('a flipped index byte and a truncated chunk file are refused with the reason; nothing of them is queryable', async () => {
    const end = to - 4 * H;
    const file = join(dir, 'bad.om');
    writeFileSync(file, openMetrics(end - 3 * H, end, [{ name: 'backfill_corrupt', type: 'gauge', series: ['job="bad"'], value: (_s, i) => i }]));
    const bad = await createBlocks(file, join(dir, 'bad-blocks'));
    assert.ok(bad.length >= 2, `${bad.length} blocks`);
    const index = join(bad[0], 'index');
    const bytes = readFileSync(index);
    bytes[9] ^= 0xff; // inside the symbol table, which a CRC32C covers
    writeFileSync(index, bytes);
    const chunks = join(bad[1], 'chunks', '000001');
    truncateSync(chunks, statSync(chunks).size - 40);

    const flipped = await mimirtool(strata.strata.url, TENANT, [bad[0]]);
    assert.equal(flipped.ok, false);
    assert.match(flipped.output, /block validation failed: error validating block: index symbols: checksum mismatch/);
    const truncated = await mimirtool(strata.strata.url, TENANT, [bad[1]]);
    assert.equal(truncated.ok, false);
    assert.match(truncated.output, /block validation failed: error validating block: (index: a chunk of series .* references offset|chunk)/);

    for (const b of bad.slice(0, 2)) {
      const ulid = b.slice(-26);
      const c = await check(ulid);
      assert.equal(c.status, 200);
      const answer = JSON.parse(c.body) as { result: string; error: string };
      assert.equal(answer.result, 'failed');
      assert.match(answer.error, /^error validating block: /);
      assert.deepEqual(
        readdirSync(join(strata.dir, 'data', 'bucket', TENANT, ulid)).sort(),
        ['uploading-meta.json', 'validation.json'],
        'only the upload markers stay',
      );
    }
    const r = await query('/prometheus/api/v1/query_range', {
      query: 'backfill_corrupt',
      start: String((end - 3 * H) / 1000),
      end: String(end / 1000),
      step: '60',
    });
    assert.equal(r.status, 'success');
    assert.deepEqual(r.data.result, []);
  });

  test('/check follows an upload: 404 before /start, uploading after it', async () => {
    const file = join(dir, 'later.om');
    writeFileSync(file, openMetrics(to - 90 * MIN, to - 80 * MIN, [{ name: 'backfill_later', type: 'gauge', series: ['job="later"'], value: (_s, i) => i }]));
    const [block] = await createBlocks(file, join(dir, 'later-blocks'));
    const ulid = block.slice(-26);
    assert.deepEqual(await check(ulid), { status: 404, body: "block doesn't exist\n" });
    const meta = JSON.parse(readFileSync(join(block, 'meta.json'), 'utf8')) as Record<string, unknown>;
    const files = [
      { rel_path: 'meta.json' },
      { rel_path: 'index', size_bytes: statSync(join(block, 'index')).size },
      { rel_path: 'chunks/000001', size_bytes: statSync(join(block, 'chunks', '000001')).size },
    ];
    const start = await fetch(`${strata.strata.url}/api/v1/upload/block/${ulid}/start`, {
      method: 'POST',
      headers: { 'X-Scope-OrgID': TENANT },
      body: JSON.stringify({ ...meta, thanos: { labels: {}, downsample: { resolution: 0 }, source: 'promtool', files } }),
    });
    assert.equal(start.status, 200, await start.text());
    assert.deepEqual(await check(ulid), { status: 200, body: '{"result":"uploading"}' });
  });
});
