// A block file in the bucket as a ByteSource: every read is a range request,
// so the block reader fetches only the index header and the postings, series
// and chunks a query needs.

import type { Bucket } from '@strata/objstore';
import type { ByteSource } from '@strata/tsdb';

export class BucketByteSource implements ByteSource {
  private readonly bucket: Bucket;
  readonly key: string;
  private readonly bytes: number;

  constructor(bucket: Bucket, key: string, bytes: number) {
    this.bucket = bucket;
    this.key = key;
    this.bytes = bytes;
  }

  static async open(bucket: Bucket, key: string, size?: number): Promise<BucketByteSource> {
    return new BucketByteSource(bucket, key, size ?? (await bucket.attributes(key)).size);
  }

  async size(): Promise<number> {
    return this.bytes;
  }

  read(offset: number, length: number): Promise<Uint8Array> {
    const n = Math.max(0, Math.min(length, this.bytes - offset));
    if (n === 0) return Promise.resolve(new Uint8Array(0));
    return this.bucket.getRange(this.key, offset, n);
  }
}
