// A bucket in S3 or an S3-compatible store (MinIO, Ceph, s3rver) through
// @aws-sdk/client-s3. Range reads use the Range header; uploads of local files
// stream from disk. PutObject is atomic per object in S3 itself.

import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type GetObjectCommandOutput,
} from '@aws-sdk/client-s3';
import { dirPrefix, isFileBody, type Bucket, type ListOptions, type ObjectAttributes, type PutBody } from './bucket.ts';
import { ObjectNotFoundError, foundByAttributes } from './errors.ts';

export interface S3BucketOptions {
  /** host:port (scheme from `insecure`) or a full http(s):// URL; '' for AWS' own endpoint of the region. */
  endpoint: string;
  bucketName: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Plain HTTP to the endpoint. */
  insecure: boolean;
  /** Path-style URLs (endpoint/bucket/key) instead of virtual-hosted (bucket.endpoint/key). */
  forcePathStyle: boolean;
  /** Attempts per request (the SDK retries throttling and 5xx). Default 3. */
  maxAttempts?: number;
}

export class S3Bucket implements Bucket {
  readonly name: string;
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(opts: S3BucketOptions) {
    this.bucket = opts.bucketName;
    this.name = `s3://${opts.bucketName}`;
    let endpoint: string | undefined;
    if (opts.endpoint !== '') endpoint = /^https?:\/\//.test(opts.endpoint) ? opts.endpoint : `${opts.insecure ? 'http' : 'https'}://${opts.endpoint}`;
    this.client = new S3Client({
      endpoint,
      region: opts.region || 'us-east-1',
      forcePathStyle: opts.forcePathStyle,
      maxAttempts: opts.maxAttempts ?? 3,
      // Checksums only where S3 requires them: many S3-compatible stores reject
      // the SDK's default aws-chunked uploads with trailing checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(opts.accessKeyId !== '' ? { credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } } : {}),
    });
  }

  async get(key: string): Promise<Uint8Array> {
    const res = await this.getObject(key);
    return (await res.Body?.transformToByteArray()) ?? new Uint8Array(0);
  }

  async getRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    if (length <= 0) {
      await this.attributes(key);
      return new Uint8Array(0);
    }
    try {
      const res = await this.getObject(key, `bytes=${offset}-${offset + length - 1}`);
      return (await res.Body?.transformToByteArray()) ?? new Uint8Array(0);
    } catch (err) {
      // Asking past the end of an object is not an error for us: fewer (no) bytes.
      if (status(err) === 416) return new Uint8Array(0);
      throw err;
    }
  }

  async put(key: string, body: PutBody): Promise<void> {
    if (isFileBody(body)) {
      const size = (await stat(body.file)).size;
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: createReadStream(body.file), ContentLength: size }));
    } else {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: body.length }));
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      if (status(err) !== 404) throw err;
    }
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<string[]> {
    const p = dirPrefix(prefix);
    const out: string[] = [];
    let token: string | undefined;
    do {
      const res = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: p,
          Delimiter: opts.recursive ? undefined : '/',
          ContinuationToken: token,
        }),
      );
      for (const o of res.Contents ?? []) if (o.Key !== undefined && o.Key !== p) out.push(o.Key);
      for (const c of res.CommonPrefixes ?? []) if (c.Prefix !== undefined) out.push(c.Prefix);
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token !== undefined);
    return out.sort();
  }

  exists(key: string): Promise<boolean> {
    return foundByAttributes(this, key);
  }

  async attributes(key: string): Promise<ObjectAttributes> {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: res.ContentLength ?? 0, lastModified: res.LastModified ?? new Date(0) };
    } catch (err) {
      if (status(err) === 404) throw new ObjectNotFoundError(this.name, key);
      throw err;
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  private async getObject(key: string, range?: string): Promise<GetObjectCommandOutput> {
    try {
      return await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: range }));
    } catch (err) {
      if (status(err) === 404) throw new ObjectNotFoundError(this.name, key);
      throw err;
    }
  }
}

function status(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}
