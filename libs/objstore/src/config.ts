// Object store flags, named as Mimir's -blocks-storage.* ones, and the
// factory that turns them into a Bucket. Defaults live here and nowhere else.

import { z } from 'zod';
import { boolFlag } from '@strata/service';
import type { Bucket } from './bucket.ts';
import { BucketConfigError } from './errors.ts';
import { FilesystemBucket } from './filesystem-bucket.ts';
import { S3Bucket } from './s3-bucket.ts';

export const bucketConfigShape = {
  'blocks-storage.backend': z.enum(['filesystem', 's3']).default('filesystem').describe('Where blocks are stored.'),
  'blocks-storage.filesystem.dir': z
    .string()
    .min(1)
    .default('./data/bucket')
    .describe('The bucket directory, shared by ingesters, queriers and the compactor (default <data-dir>/bucket).'),
  'blocks-storage.s3.endpoint': z.string().default('').describe('S3 endpoint, host:port or a URL; empty: AWS S3 in the region.'),
  'blocks-storage.s3.bucket-name': z.string().default('').describe('S3 bucket (required with -blocks-storage.backend=s3).'),
  'blocks-storage.s3.access-key-id': z.string().default('').describe("S3 access key id; empty: the AWS SDK's default credential chain."),
  'blocks-storage.s3.secret-access-key': z.string().default('').describe('S3 secret access key.'),
  'blocks-storage.s3.region': z.string().default('').describe('S3 region of the bucket.'),
  'blocks-storage.s3.insecure': boolFlag(false).describe('Plain HTTP to the S3 endpoint.'),
  // auto: path-style for any endpoint other than AWS' own (MinIO, Ceph, s3rver need it).
  'blocks-storage.s3.bucket-lookup-type': z
    .enum(['auto', 'virtual-hosted', 'path'])
    .default('auto')
    .describe("S3 URL style; auto: path-style except on AWS' own endpoints."),
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
