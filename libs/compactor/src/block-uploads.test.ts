// The block-upload API through its HTTP edge (fastify inject, no Content-Type as mimirtool
// sends), on a filesystem bucket: the happy path, Mimir's refusals, and a corrupt block.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { labelsFromRecord } from '@strata/model';
import { FilesystemBucket } from '@strata/objstore';
import { createHttpServer, createLogger } from '@strata/service';
import { blockFileKey } from '@strata/storegateway';
import { encodeBlockMeta, writeBlock, type BlockMeta } from '@strata/tsdb';
import { Registry } from 'prom-client';
import { BlockUploads, registerBlockUploadApi, type BlockUploadLimits } from './index.ts';

const logger = createLogger('test', 'silent');
const H = 3_600_000;

interface Fixture {
  app: FastifyInstance;
  bucket: FilesystemBucket;
  limits: Map<string, Partial<BlockUploadLimits>>;
  completed: string[];
  root: string;
}

async function withApi(fn: (f: Fixture) => Promise<void>, gate?: Promise<void>): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'strata-block-upload-'));
  const bucket = new FilesystemBucket(join(root, 'bucket'));
  // Validation reads by range: a gate holds it there.
  const validated =
    gate === undefined
      ? bucket
      : Object.assign(Object.create(bucket) as FilesystemBucket, {
          getRange: async (key: string, offset: number, length: number) => {
            await gate;
            return bucket.getRange(key, offset, length);
          },
        });
  const limits = new Map<string, Partial<BlockUploadLimits>>();
  const completed: string[] = [];
  const uploads = new BlockUploads({
    bucket: validated,
    logger,
    registry: new Registry(),
    limits: (tenant) => ({ enabled: true, validationEnabled: true, verifyChunks: true, maxBlockSizeBytes: 0, retentionMs: 0, ...limits.get(tenant) }),
    maxRangeMs: 24 * H,
    maxConcurrentValidations: 1,
    scratchDir: join(root, 'scratch'),
    onComplete: async (tenant, meta) => {
      completed.push(`${tenant}/${meta.ulid}`);
    },
  });
  const app = createHttpServer({ logger, registry: new Registry(), readiness: { notReadyReason: () => undefined } });
  registerBlockUploadApi(app, { uploads, multitenancyEnabled: true, logger });
  await app.ready();
  try {
    await fn({ app, bucket, limits, completed, root });
  } finally {
    await uploads.stop();
    await app.close();
    await rm(root, { recursive: true, force: true });
  }
}

interface LocalBlock {
  dir: string;
  meta: BlockMeta;
  /** meta.json as mimirtool sends it: thanos.files filled from the directory. */
  body: BlockMeta;
}

async function localBlock(root: string, hoursAgo = 10): Promise<LocalBlock> {
  const mint = Math.floor((Date.now() - hoursAgo * H) / (2 * H)) * 2 * H;
  const ts = Array.from({ length: 240 }, (_, i) => mint + i * 15_000);
  const w = await writeBlock({
    dir: join(root, 'local'),
    mint,
    maxt: mint + 2 * H,
    series: ['a', 'b', 'c'].map((job, k) => ({
      labels: labelsFromRecord({ __name__: 'up', job }),
      timestamps: Float64Array.from(ts),
      values: Float64Array.from(ts, (_, i) => k * 1000 + i),
    })),
  });
  assert.ok(w);
  const files = [{ rel_path: 'meta.json' }, { rel_path: 'index', size_bytes: (await stat(join(w.dir, 'index'))).size }];
  for (const n of (await readdir(join(w.dir, 'chunks'))).sort())
    files.push({ rel_path: `chunks/${n}`, size_bytes: (await stat(join(w.dir, 'chunks', n))).size });
  const body: BlockMeta = { ...w.meta, thanos: { labels: {}, downsample: { resolution: 0 }, source: 'promtool', files } };
  return { dir: w.dir, meta: w.meta, body };
}

function call(app: FastifyInstance, method: 'GET' | 'POST', url: string, payload?: string | Uint8Array, tenant = 'team-a') {
  return app.inject({ method, url, headers: { 'x-scope-orgid': tenant }, ...(payload === undefined ? {} : { payload: Buffer.from(payload) }) });
}

async function upload(
  app: FastifyInstance,
  b: LocalBlock,
  opts: { tenant?: string; corrupt?: (rel: string, bytes: Buffer) => Buffer; finish?: boolean } = {},
): Promise<void> {
  const id = b.meta.ulid;
  const start = await call(app, 'POST', `/api/v1/upload/block/${id}/start`, JSON.stringify(b.body), opts.tenant);
  assert.equal(start.statusCode, 200, start.body);
  for (const f of b.body.thanos!.files!) {
    if (f.rel_path === 'meta.json') continue;
    let bytes: Buffer = await readFile(join(b.dir, ...f.rel_path.split('/')));
    if (opts.corrupt) bytes = opts.corrupt(f.rel_path, bytes);
    const r = await call(app, 'POST', `/api/v1/upload/block/${id}/files?path=${encodeURIComponent(f.rel_path)}`, bytes, opts.tenant);
    assert.equal(r.statusCode, 200, `${f.rel_path}: ${r.body}`);
  }
  if (opts.finish === false) return;
  const finish = await call(app, 'POST', `/api/v1/upload/block/${id}/finish`, undefined, opts.tenant);
  assert.equal(finish.statusCode, 200, finish.body);
}

async function checkUntilDone(app: FastifyInstance, id: string, tenant = 'team-a'): Promise<{ result: string; error?: string }> {
  for (let i = 0; i < 200; i++) {
    const r = await call(app, 'GET', `/api/v1/upload/block/${id}/check`, undefined, tenant);
    assert.equal(r.statusCode, 200, r.body);
    const answer = r.json<{ result: string; error?: string }>();
    if (answer.result !== 'validating') return answer;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('validation never finished');
}

test('an uploaded block is validated, published with meta.json last and marked as uploaded', () =>
  withApi(async ({ app, bucket, completed, root }) => {
    const b = await localBlock(root);
    const id = b.meta.ulid;
    assert.equal((await call(app, 'GET', `/api/v1/upload/block/${id}/check`)).statusCode, 404);
    await upload(app, b);
    assert.deepEqual(await checkUntilDone(app, id), { result: 'complete' });
    // "complete" as soon as meta.json is there; the upload's own files go right after.
    for (let i = 0; i < 100 && completed.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const meta = JSON.parse(new TextDecoder().decode(await bucket.get(blockFileKey('team-a', id, 'meta.json')))) as BlockMeta;
    assert.equal(meta.thanos?.source, 'upload');
    assert.deepEqual(meta.compaction.sources, [id]);
    assert.equal(meta.minTime, b.meta.minTime);
    assert.deepEqual(
      (await bucket.list(`team-a/${id}/`, { recursive: true })).map((k) => k.slice(`team-a/${id}/`.length)),
      ['chunks/000001', 'index', 'meta.json'],
      'the upload files are gone',
    );
    assert.deepEqual(completed, [`team-a/${id}`]);
    const again = await call(app, 'POST', `/api/v1/upload/block/${id}/start`, JSON.stringify(b.body));
    assert.deepEqual([again.statusCode, again.body], [409, 'block already exists\n']);
    assert.equal((await call(app, 'GET', `/api/v1/upload/block/${id}/check`, undefined, 'team-b')).statusCode, 404, 'another tenant sees nothing');
  }));

test('a tenant without block upload is refused as Mimir refuses it', () =>
  withApi(async ({ app, limits, root }) => {
    limits.set('team-a', { enabled: false });
    const b = await localBlock(root);
    const r = await call(app, 'POST', `/api/v1/upload/block/${b.meta.ulid}/start`, JSON.stringify(b.body));
    assert.deepEqual([r.statusCode, r.body], [400, 'block upload is disabled\n']);
    assert.deepEqual(await readdir(join(root, 'bucket')).catch(() => []), [], 'nothing written');
  }));

test("/start refuses a meta.json Mimir would refuse, with Mimir's status and reason", () =>
  withApi(async ({ app, limits, root }) => {
    const b = await localBlock(root);
    const id = b.meta.ulid;
    const start = (body: unknown, block = id) =>
      call(app, 'POST', `/api/v1/upload/block/${block}/start`, typeof body === 'string' ? body : JSON.stringify(body));
    const cases: [unknown, number, RegExp][] = [
      ['{', 400, /^malformed request body$/],
      [{ ...b.body, ulid: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }, 400, /does not match the block ID/],
      [{ ...b.body, version: 2 }, 400, /^version must be 1$/],
      [{ ...b.body, thanos: { ...b.body.thanos, labels: { cluster: 'eu' } } }, 400, /^unsupported external label: cluster$/],
      [{ ...b.body, thanos: { ...b.body.thanos, downsample: { resolution: 300_000 } } }, 400, /^block contains downsampled data$/],
      [{ ...b.body, thanos: { ...b.body.thanos, files: [{ rel_path: 'tombstones', size_bytes: 10 }] } }, 400, /^file with invalid path: tombstones$/],
      [{ ...b.body, maxTime: b.body.minTime - 1 }, 400, /^invalid minTime\/maxTime/],
      [{ ...b.body, maxTime: Date.now() + H }, 400, /^block time\(s\) greater than the present/],
      [{ ...b.body, minTime: b.body.minTime - 23 * H }, 422, /crosses boundary|larger than max/],
    ];
    for (const [body, status, reason] of cases) {
      const r = await start(body);
      assert.equal(r.statusCode, status, `${JSON.stringify(body).slice(0, 80)}: ${r.body}`);
      assert.match(r.body.trim(), reason);
    }
    assert.deepEqual([(await start(b.body, 'not-a-ulid')).statusCode, (await start(b.body, 'not-a-ulid')).body], [400, 'invalid block ID\n']);
    assert.equal((await start('x'.repeat(1024 * 1024 + 1))).statusCode, 413);
    limits.set('team-a', { retentionMs: 5 * H });
    assert.match((await start(b.body)).body, /older than retention period/);
    limits.set('team-a', { maxBlockSizeBytes: 100 });
    assert.deepEqual([(await start(b.body)).statusCode, (await start(b.body)).body], [400, 'block exceeds the maximum block size limit of 100 bytes\n']);
  }));

test('/files accepts only the files meta.json lists, at their sizes, after /start', () =>
  withApi(async ({ app, root }) => {
    const b = await localBlock(root);
    const id = b.meta.ulid;
    const file = (path: string, bytes: Uint8Array) => call(app, 'POST', `/api/v1/upload/block/${id}/files?path=${encodeURIComponent(path)}`, bytes);
    const index = await readFile(join(b.dir, 'index'));
    assert.deepEqual([(await file('index', index)).statusCode, (await file('index', index)).body], [404, 'block upload not started\n']);
    assert.equal((await call(app, 'POST', `/api/v1/upload/block/${id}/start`, JSON.stringify(b.body))).statusCode, 200);
    assert.equal((await call(app, 'GET', `/api/v1/upload/block/${id}/check`)).json<{ result: string }>().result, 'uploading');
    assert.equal((await file('meta.json', index)).body, 'meta.json is not allowed\n');
    assert.equal((await file('../x', index)).body, 'invalid path: "../x"\n');
    assert.equal((await file('chunks/000002', index)).body, 'unexpected file\n');
    assert.equal((await file('index', index.subarray(1))).body, "file size doesn't match meta.json\n");
    assert.equal((await file('index', new Uint8Array(0))).body, 'file cannot be empty\n');
    assert.equal((await file('index', index)).statusCode, 200);
  }));

test('a corrupt block fails validation with the reason, and only its upload markers stay', () =>
  withApi(async ({ app, bucket, completed, root }) => {
    const b = await localBlock(root);
    const id = b.meta.ulid;
    await upload(app, b, {
      corrupt: (rel, bytes) => {
        if (rel !== 'index') return bytes;
        const copy = Buffer.from(bytes);
        copy[9] ^= 0xff;
        return copy;
      },
    });
    const answer = await checkUntilDone(app, id);
    assert.equal(answer.result, 'failed');
    assert.match(answer.error ?? '', /^error validating block: index symbols: checksum mismatch/);
    assert.ok(!(answer.error ?? '').includes('\n'), 'one line');
    assert.deepEqual(
      (await bucket.list(`team-a/${id}/`, { recursive: true })).map((k) => k.slice(`team-a/${id}/`.length)),
      ['uploading-meta.json', 'validation.json'],
      'the data files are gone, no meta.json',
    );
    assert.deepEqual(completed, []);
    const again = await call(app, 'POST', `/api/v1/upload/block/${id}/finish`);
    assert.deepEqual([again.statusCode, again.body], [400, 'block validation failed\n']);
  }));

test('with validation off, /finish publishes the block at once', () =>
  withApi(async ({ app, bucket, limits, root }) => {
    limits.set('team-a', { validationEnabled: false });
    const b = await localBlock(root);
    await upload(app, b);
    assert.ok(await bucket.exists(blockFileKey('team-a', b.meta.ulid, 'meta.json')));
    assert.deepEqual(await checkUntilDone(app, b.meta.ulid), { result: 'complete' });
    assert.equal(encodeBlockMeta(b.meta).includes('"upload"'), false, 'the local meta is not touched');
  }));

test('one validation at a time: another /finish is 429 until it is done', async () => {
  let open = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  await withApi(async ({ app, root }) => {
    const [a, b] = [await localBlock(root, 10), await localBlock(root, 14)];
    await upload(app, a);
    await upload(app, b, { finish: false });
    assert.equal((await call(app, 'GET', `/api/v1/upload/block/${a.meta.ulid}/check`)).json<{ result: string }>().result, 'validating');
    const busy = await call(app, 'POST', `/api/v1/upload/block/${b.meta.ulid}/finish`);
    assert.deepEqual([busy.statusCode, busy.body], [429, 'too many block upload validations in progress, limit is 1\n']);
    const twice = await call(app, 'POST', `/api/v1/upload/block/${a.meta.ulid}/finish`);
    assert.deepEqual([twice.statusCode, twice.body], [400, 'block validation in progress\n']);
    open();
    assert.deepEqual(await checkUntilDone(app, a.meta.ulid), { result: 'complete' });
    // The slot frees once the first validation has wound up, just after "complete": retry as mimirtool does.
    let status = 429;
    for (let i = 0; i < 100 && status === 429; i++) {
      status = (await call(app, 'POST', `/api/v1/upload/block/${b.meta.ulid}/finish`)).statusCode;
      if (status === 429) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(status, 200);
    assert.deepEqual(await checkUntilDone(app, b.meta.ulid), { result: 'complete' });
  }, gate);
});

test('a validation whose heartbeat went stale (its process died) is "uploading" again and /finish restarts it', () =>
  withApi(async ({ app, bucket, root }) => {
    const b = await localBlock(root);
    const id = b.meta.ulid;
    await upload(app, b, { finish: false });
    const stale = { LastUpdate: Date.now() - 6 * 60_000, Error: '' };
    await bucket.put(blockFileKey('team-a', id, 'validation.json'), new TextEncoder().encode(JSON.stringify(stale)));
    assert.deepEqual((await call(app, 'GET', `/api/v1/upload/block/${id}/check`)).json(), { result: 'uploading' });
    await bucket.put(blockFileKey('team-a', id, 'validation.json'), new TextEncoder().encode(JSON.stringify({ ...stale, LastUpdate: Date.now() })));
    assert.equal(
      (await call(app, 'POST', `/api/v1/upload/block/${id}/finish`)).body,
      'block validation in progress\n',
      'a fresh heartbeat: another process validates',
    );
    await bucket.put(blockFileKey('team-a', id, 'validation.json'), new TextEncoder().encode(JSON.stringify(stale)));
    assert.equal((await call(app, 'POST', `/api/v1/upload/block/${id}/finish`)).statusCode, 200);
    assert.deepEqual(await checkUntilDone(app, id), { result: 'complete' });
  }));
