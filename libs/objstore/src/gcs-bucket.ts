// A bucket in Google Cloud Storage (or fake-gcs-server) through @google-cloud/storage.
// Single-request (non-resumable) uploads: GCS makes an object visible only once the
// whole upload is in, so readers never see a part. Whole-object overwrites are
// idempotent for us, so uploads are retried like every other call.

import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { IdempotencyStrategy, Storage, type Bucket as GcsSdkBucket, type StorageOptions } from '@google-cloud/storage';
import { dirPrefix, isFileBody, type Bucket, type ListOptions, type ObjectAttributes, type PutBody } from './bucket.ts';
import { BucketConfigError, ObjectNotFoundError, foundByAttributes } from './errors.ts';

export interface GcsBucketOptions {
  bucketName: string;
  /** A service account's JSON key; '' for application default credentials (or no auth with `endpoint`). */
  serviceAccount: string;
  /** http(s)://host:port of an emulator or private endpoint; '' for Google's own. No auth is sent to it. */
  endpoint: string;
  /** Attempts per request, with exponential backoff (0: unlimited). */
  maxRetries: number;
}

export class GcsBucket implements Bucket {
  readonly name: string;
  private readonly storage: Storage;
  private readonly bucket: GcsSdkBucket;

  constructor(opts: GcsBucketOptions) {
    this.name = `gs://${opts.bucketName}`;
    const options: StorageOptions = {
      // The SDK counts retries after the first attempt; Mimir's flag counts attempts.
      retryOptions: {
        autoRetry: opts.maxRetries !== 1,
        maxRetries: opts.maxRetries === 0 ? Number.MAX_SAFE_INTEGER : Math.max(0, opts.maxRetries - 1),
        idempotencyStrategy: IdempotencyStrategy.RetryAlways,
      },
    };
    if (opts.endpoint !== '') {
      options.apiEndpoint = opts.endpoint;
      options.projectId = 'strata';
    }
    if (opts.serviceAccount !== '') {
      let key: { client_email?: string; private_key?: string; project_id?: string };
      try {
        key = JSON.parse(opts.serviceAccount) as typeof key;
      } catch {
        throw new BucketConfigError('-blocks-storage.gcs.service-account is not JSON; give the content of the service account key file');
      }
      options.credentials = { client_email: key.client_email, private_key: key.private_key };
      if (key.project_id !== undefined) options.projectId = key.project_id;
    }
    this.storage = new Storage(options);
    this.bucket = this.storage.bucket(opts.bucketName);
  }

  async get(key: string): Promise<Uint8Array> {
    try {
      const [data] = await this.bucket.file(key).download({ validation: false });
      return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    } catch (err) {
      throw this.mapError(err, key);
    }
  }

  async getRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    if (length <= 0) {
      await this.attributes(key);
      return new Uint8Array(0);
    }
    try {
      const [data] = await this.bucket.file(key).download({ start: offset, end: offset + length - 1, validation: false });
      return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    } catch (err) {
      // Asking past the end of an object is not an error for us: fewer (no) bytes.
      if (code(err) === 416) return new Uint8Array(0);
      throw this.mapError(err, key);
    }
  }

  async put(key: string, body: PutBody): Promise<void> {
    const file = this.bucket.file(key);
    if (isFileBody(body)) {
      await pipeline(createReadStream(body.file), file.createWriteStream({ resumable: false, validation: false }));
    } else {
      await file.save(Buffer.from(body.buffer, body.byteOffset, body.byteLength), { resumable: false, validation: false });
    }
  }

  async delete(key: string): Promise<void> {
    await this.bucket.file(key).delete({ ignoreNotFound: true });
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<string[]> {
    const p = dirPrefix(prefix);
    const out: string[] = [];
    let pageToken: string | undefined;
    do {
      const [files, next, res] = await this.bucket.getFiles({ prefix: p, delimiter: opts.recursive ? undefined : '/', autoPaginate: false, pageToken });
      for (const f of files) if (f.name !== p) out.push(f.name);
      for (const cp of (res as { prefixes?: string[] } | undefined)?.prefixes ?? []) out.push(cp);
      pageToken = (next as { pageToken?: string } | null)?.pageToken;
    } while (pageToken !== undefined);
    return out.sort();
  }

  exists(key: string): Promise<boolean> {
    return foundByAttributes(this, key);
  }

  async attributes(key: string): Promise<ObjectAttributes> {
    try {
      const [meta] = await this.bucket.file(key).getMetadata();
      return { size: Number(meta.size ?? 0), lastModified: new Date(meta.updated ?? 0) };
    } catch (err) {
      throw this.mapError(err, key);
    }
  }

  async close(): Promise<void> {
    // The SDK holds no connections beyond the agent's keep-alive sockets.
  }

  private mapError(err: unknown, key: string): unknown {
    return code(err) === 404 ? new ObjectNotFoundError(this.name, key) : err;
  }
}

function code(err: unknown): number | undefined {
  const c = (err as { code?: unknown }).code;
  return typeof c === 'number' ? c : undefined;
}
