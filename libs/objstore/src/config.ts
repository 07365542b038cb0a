// Object store flags, named as Mimir's -blocks-storage.* ones, and the
// factory that turns them into a Bucket. Defaults live here and nowhere else.

import { z } from 'zod';
import { boolFlag } from '@strata/service';
import type { Bucket } from './bucket.ts';
import { BucketConfigError } from './errors.ts';
import { FilesystemBucket } from './filesystem-bucket.ts';
import { S3Bucket } from './s3-bucket.ts';

export const bucketConfigShape = {
  'blocks-storage.backend': z.enum(['filesystem', 's3']).default('filesystem'),
  'blocks-storage.filesystem.dir': z.string().min(1).default('./data/bucket'),
  /** host:port (or a full URL); empty means AWS S3 in the region. */
  'blocks-storage.s3.endpoint': z.string().default(''),
  'blocks-storage.s3.bucket-name': z.string().default(''),
  'blocks-storage.s3.access-key-id': z.string().default(''),
  'blocks-storage.s3.secret-access-key': z.string().default(''),
  'blocks-storage.s3.region': z.string().default(''),
  /** Plain HTTP to the endpoint. */
  'blocks-storage.s3.insecure': boolFlag(false),
  /** auto: path-style for any endpoint other than AWS' own (MinIO, Ceph, s3rver need it). */
  'blocks-storage.s3.bucket-lookup-type': z.enum(['auto', 'virtual-hosted', 'path']).default('auto'),
};

export type BucketConfig = z.infer<z.ZodObject<typeof bucketConfigShape>>;

export function createBucket(config: BucketConfig): Bucket {
  if (config['blocks-storage.backend'] === 'filesystem') return new FilesystemBucket(config['blocks-storage.filesystem.dir']);
  const bucketName = config['blocks-storage.s3.bucket-name'];
  if (bucketName === '') throw new BucketConfigError('-blocks-storage.s3.bucket-name is required with -blocks-storage.backend=s3');
  const endpoint = config['blocks-storage.s3.endpoint'];
  const lookup = config['blocks-storage.s3.bucket-lookup-type'];
  return new S3Bucket({
    endpoint,
    bucketName,
    region: config['blocks-storage.s3.region'],
    accessKeyId: config['blocks-storage.s3.access-key-id'],
    secretAccessKey: config['blocks-storage.s3.secret-access-key'],
    insecure: config['blocks-storage.s3.insecure'],
    forcePathStyle: lookup === 'path' || (lookup === 'auto' && endpoint !== '' && !/amazonaws\.com/.test(endpoint)),
  });
}
