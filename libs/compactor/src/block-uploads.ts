// Mimir's block-upload API behind the HTTP edge (block-upload-api.ts): /start checks and keeps
// the meta.json as uploading-meta.json, /files puts the index and chunk files under the block's
// prefix, /finish validates them in the background (or publishes at once when the tenant's
// validation is off) and writes meta.json last, /check says where the upload stands. Nothing of an
// upload is visible to readers before meta.json, and meta.json is only written for a sound block.

import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Registry } from 'prom-client';
import type { Bucket } from '@strata/objstore';
import type { Logger } from '@strata/service';
import { BucketByteSource, blockFileKey } from '@strata/storegateway';
import { isUlid, verifyBlock, type BlockMeta } from '@strata/tsdb';
import { BlockUploadError, checkBlockSize, sanitizeUploadMeta, UPLOAD_FILE_PATH } from './block-upload-meta.ts';
import { BlockUploadMetrics } from './block-upload-metrics.ts';
import {
  completeUpload,
  failUpload,
  readUploadState,
  VALIDATION_HEARTBEAT_INTERVAL_MS,
  writeUploadingMeta,
  writeValidation,
  type UploadState,
} from './block-upload-state.ts';

/** The tenant's limits, read per request (the runtime overrides file may change them). */
export interface BlockUploadLimits {
  enabled: boolean;
  validationEnabled: boolean;
  verifyChunks: boolean;
  maxBlockSizeBytes: number;
  /** The compactor's retention for the tenant; 0: none. */
  retentionMs: number;
}

export interface BlockUploadsOptions {
  bucket: Bucket;
  logger: Logger;
  registry?: Registry;
  limits: (tenant: string) => BlockUploadLimits;
  /** The compactor's largest block range (-compactor.block-ranges). */
  maxRangeMs: number;
  /** Validations running at once; one more is 429 (the client retries). 0: no limit. */
  maxConcurrentValidations: number;
  /** Uploaded files are spooled here before they go to the bucket. */
  scratchDir: string;
  /** Called once a block is published (the compactor rewrites the tenant's bucket index). */
  onComplete?: (tenant: string, meta: BlockMeta) => Promise<void>;
  now?: () => number;
  heartbeatIntervalMs?: number;
}

/** GET /check's answer, as Mimir's (`result`: uploading, validating, failed or complete). */
export interface UploadCheck {
  result: 'uploading' | 'validating' | 'failed' | 'complete';
  error?: string;
}

export class BlockUploads {
  private readonly opts: BlockUploadsOptions;
  private readonly now: () => number;
  private readonly metrics: BlockUploadMetrics;
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private spooled = 0;

  constructor(opts: BlockUploadsOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
    this.metrics = new BlockUploadMetrics(opts.registry, () => this.running.size);
  }

  /** Stops running validations; their heartbeat goes stale and a later /finish starts them again. */
  async stop(): Promise<void> {
    for (const v of this.running.values()) v.abort.abort();
    await Promise.all([...this.running.values()].map((v) => v.done));
  }

  /** The tenant's limits, once the block ID and the tenant's permission are checked. */
  checkRequest(tenant: string, ulid: string): BlockUploadLimits {
    if (!isUlid(ulid)) throw new BlockUploadError('bad-input', 'invalid block ID');
    const limits = this.opts.limits(tenant);
    if (!limits.enabled) throw new BlockUploadError('bad-input', 'block upload is disabled');
    return limits;
  }

  async start(tenant: string, ulid: string, body: string): Promise<void> {
    const limits = this.checkRequest(tenant, ulid);
    await this.stateAllowing(tenant, ulid, false);
    const meta = sanitizeUploadMeta(body, ulid, {
      nowMs: this.now(),
      retentionMs: limits.retentionMs,
      maxRangeMs: this.opts.maxRangeMs,
      maxBlockSizeBytes: limits.maxBlockSizeBytes,
    });
    await writeUploadingMeta(this.opts.bucket, tenant, meta);
    this.opts.logger.info({ tenant, block: ulid, minTime: meta.minTime, maxTime: meta.maxTime }, 'block upload started');
  }

  /** One file of the block, streamed from `body`; `contentLength` is -1 when the request did not say. */
  async uploadFile(tenant: string, ulid: string, path: string, body: Readable, contentLength: number): Promise<void> {
    this.checkRequest(tenant, ulid);
    if (path === '') throw new BlockUploadError('bad-input', 'missing or invalid file path');
    if (path === 'meta.json' || path.endsWith('/meta.json')) throw new BlockUploadError('bad-input', 'meta.json is not allowed');
    if (!UPLOAD_FILE_PATH.test(path)) throw new BlockUploadError('bad-input', `invalid path: ${JSON.stringify(path)}`);
    if (contentLength === 0) throw new BlockUploadError('bad-input', 'file cannot be empty');
    const { meta } = await this.stateAllowing(tenant, ulid, true);
    const listed = meta.thanos?.files?.find((f) => f.rel_path === path);
    if (listed === undefined) throw new BlockUploadError('bad-input', 'unexpected file');
    if (contentLength >= 0 && contentLength !== listed.size_bytes) throw new BlockUploadError('bad-input', "file size doesn't match meta.json");
    const spool = join(this.opts.scratchDir, `${tenant}-${ulid}-${++this.spooled}`);
    await mkdir(this.opts.scratchDir, { recursive: true });
    try {
      await pipeline(body, createWriteStream(spool));
      if ((await stat(spool)).size !== listed.size_bytes) throw new BlockUploadError('bad-input', "file size doesn't match meta.json");
      await this.opts.bucket.put(blockFileKey(tenant, ulid, path), { file: spool });
    } finally {
      await rm(spool, { force: true });
    }
  }

  async finish(tenant: string, ulid: string): Promise<void> {
    const limits = this.checkRequest(tenant, ulid);
    const { meta } = await this.stateAllowing(tenant, ulid, true);
    if (!limits.validationEnabled) {
      await this.publish(tenant, meta);
      return;
    }
    const max = this.opts.maxConcurrentValidations;
    if (max > 0 && this.running.size >= max) throw new BlockUploadError('limit', `too many block upload validations in progress, limit is ${max}`);
    if (this.running.has(`${tenant}/${ulid}`)) throw new BlockUploadError('bad-input', 'block validation in progress');
    await writeValidation(this.opts.bucket, tenant, ulid, { LastUpdate: this.now(), Error: '' });
    this.validateInBackground(tenant, meta, limits);
  }

  async check(tenant: string, ulid: string): Promise<UploadCheck> {
    this.checkRequest(tenant, ulid);
    const s = await readUploadState(this.opts.bucket, tenant, ulid, this.now());
    switch (s.state) {
      case 'not-started':
        throw new BlockUploadError('not-found', "block doesn't exist");
      case 'failed':
        return { result: 'failed', error: s.validation.Error };
      default:
        return { result: s.state };
    }
  }

  /** The upload's state when it allows the step, Mimir's refusal otherwise. */
  private async stateAllowing(tenant: string, ulid: string, requireStarted: true): Promise<{ meta: BlockMeta }>;
  private async stateAllowing(tenant: string, ulid: string, requireStarted: false): Promise<UploadState>;
  private async stateAllowing(tenant: string, ulid: string, requireStarted: boolean): Promise<UploadState | { meta: BlockMeta }> {
    const s = await readUploadState(this.opts.bucket, tenant, ulid, this.now());
    switch (s.state) {
      case 'complete':
        throw new BlockUploadError('conflict', 'block already exists');
      case 'validating':
        throw new BlockUploadError('bad-input', 'block validation in progress');
      case 'failed':
        throw new BlockUploadError('bad-input', 'block validation failed');
      case 'not-started':
        if (requireStarted) throw new BlockUploadError('not-found', 'block upload not started');
        return s;
      case 'uploading':
        return s;
    }
  }

  private validateInBackground(tenant: string, meta: BlockMeta, limits: BlockUploadLimits): void {
    const key = `${tenant}/${meta.ulid}`;
    const abort = new AbortController();
    const heartbeat = setInterval(() => {
      writeValidation(this.opts.bucket, tenant, meta.ulid, { LastUpdate: this.now(), Error: '' }).catch((err: Error) => {
        this.opts.logger.warn({ tenant, block: meta.ulid, err: err.message }, 'block upload validation heartbeat failed; stopping it');
        abort.abort();
      });
    }, this.opts.heartbeatIntervalMs ?? VALIDATION_HEARTBEAT_INTERVAL_MS);
    const done = this.validateAndPublish(tenant, meta, limits, abort.signal).finally(() => {
      clearInterval(heartbeat);
      this.running.delete(key);
    });
    this.running.set(key, { abort, done });
  }

  private async validateAndPublish(tenant: string, meta: BlockMeta, limits: BlockUploadLimits, signal: AbortSignal): Promise<void> {
    const started = this.now();
    try {
      await this.validate(tenant, meta, limits, signal);
    } catch (err) {
      if (signal.aborted) {
        this.opts.logger.warn({ tenant, block: meta.ulid }, 'block upload validation stopped; a later finish starts it again');
        return;
      }
      const reason = (err as Error).message;
      this.metrics.failed.inc();
      this.opts.logger.warn({ tenant, block: meta.ulid, reason }, 'uploaded block refused: validation failed');
      await failUpload(this.opts.bucket, tenant, meta.ulid, reason, this.now()).catch((e: Error) =>
        this.opts.logger.error({ tenant, block: meta.ulid, err: e.message }, 'could not record the failed validation'),
      );
      return;
    }
    try {
      await this.publish(tenant, meta);
      this.opts.logger.info({ tenant, block: meta.ulid, validationMs: this.now() - started }, 'uploaded block validated and published');
    } catch (err) {
      this.opts.logger.error({ tenant, block: meta.ulid, err: (err as Error).message }, 'publishing the uploaded block failed');
      await failUpload(this.opts.bucket, tenant, meta.ulid, `publishing the block failed: ${(err as Error).message}`, this.now()).catch(() => undefined);
    }
  }

  /** Mimir's checks of the uploaded files, then the index and (verifyChunks) every chunk. */
  private async validate(tenant: string, meta: BlockMeta, limits: BlockUploadLimits, signal: AbortSignal): Promise<void> {
    const files = meta.thanos?.files ?? [];
    checkBlockSize(files, limits.maxBlockSizeBytes);
    const { bucket } = this.opts;
    const sizes = new Map<string, number>();
    for (const f of files) {
      if (f.rel_path === 'meta.json') continue;
      const attrs = await bucket.attributes(blockFileKey(tenant, meta.ulid, f.rel_path)).catch(() => null);
      if (attrs === null) throw new Error(`failed to stat ${f.rel_path}: not uploaded`);
      if (attrs.size !== f.size_bytes) throw new Error(`file size mismatch for ${f.rel_path}`);
      sizes.set(f.rel_path, attrs.size);
    }
    const index = sizes.get('index');
    if (index === undefined) throw new Error('error validating block: the block has no index file');
    const segments = [...sizes.keys()].filter((p) => p.startsWith('chunks/')).sort();
    segments.forEach((p, i) => {
      if (Number(p.slice('chunks/'.length)) !== i + 1) throw new Error(`error validating block: chunk files are not numbered 000001.. (found ${p})`);
    });
    const source = (rel: string) => new BucketByteSource(bucket, blockFileKey(tenant, meta.ulid, rel), sizes.get(rel) ?? 0);
    try {
      await verifyBlock(
        { index: source('index'), chunkSegments: segments.map(source) },
        { minTime: meta.minTime, maxTime: meta.maxTime, checkChunks: limits.verifyChunks, signal },
      );
    } catch (err) {
      if (signal.aborted) throw err;
      throw new Error(`error validating block: ${(err as Error).message}`, { cause: err });
    }
  }

  private async publish(tenant: string, meta: BlockMeta): Promise<void> {
    await completeUpload(this.opts.bucket, tenant, meta);
    const bytes = (meta.thanos?.files ?? []).reduce((n, f) => n + (f.size_bytes ?? 0), 0);
    this.metrics.blocks.inc();
    this.metrics.bytes.inc(bytes);
    this.metrics.files.inc(meta.thanos?.files?.length ?? 0);
    await this.opts
      .onComplete?.(tenant, meta)
      .catch((err: Error) =>
        this.opts.logger.warn({ tenant, block: meta.ulid, err: err.message }, 'block published; updating the bucket index failed (the next cleanup does it)'),
      );
  }
}
