// Object store flags, named as Mimir's -blocks-storage.* ones, and the
// factory that turns them into a Bucket. Defaults live here and nowhere else.

import { z } from 'zod';
import { boolFlag } from '@strata/service';
import type { Bucket } from './bucket.ts';
import { BucketConfigError } from './errors.ts';
import { FilesystemBucket } from './filesystem-bucket.ts';
import { S3Bucket } from './s3-bucket.ts';
import { GcsBucket } from './gcs-bucket.ts';
import { AzureBucket } from './azure-bucket.ts';

export const bucketConfigShape = {
  'blocks-storage.backend': z.enum(['filesystem', 's3', 'gcs', 'azure']).default('filesystem').describe('Where blocks are stored.'),
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
  'blocks-storage.gcs.bucket-name': z.string().default('').describe('GCS bucket name (required with -blocks-storage.backend=gcs).'),
  'blocks-storage.gcs.service-account': z
    .string()
    .default('')
    .describe("JSON key of a GCS service account (the file's content, a secret); empty: application default credentials."),
  // Not a Mimir flag: Mimir reaches an emulator through STORAGE_EMULATOR_HOST.
  'blocks-storage.gcs.endpoint': z
    .string()
    .default('')
    .describe("For emulators and private endpoints only: the GCS API's http(s)://host:port, reached without auth; empty: Google's own."),
  'blocks-storage.gcs.max-retries': z.coerce
    .number()
    .int()
    .min(0)
    .default(20)
    .describe('Attempts per GCS request, uploads included, with exponential backoff (0: unlimited, 1: no retries).'),
  'blocks-storage.azure.account-name': z.string().default('').describe('Azure storage account name (required with -blocks-storage.backend=azure).'),
  'blocks-storage.azure.account-key': z
    .string()
    .default('')
    .describe('Azure storage account key (a secret), for shared-key auth; empty: a managed identity (or workload identity) of the pod.'),
  'blocks-storage.azure.connection-string': z
    .string()
    .default('')
    .describe('Azure storage connection string (a secret); when set it replaces the account name, key and endpoint flags.'),
  'blocks-storage.azure.user-assigned-id': z
    .string()
    .default('')
    .describe(
      "Client id of the user-assigned managed identity to use when no key is set; empty: the pod's default credential (workload identity, then system-assigned).",
    ),
  'blocks-storage.azure.container-name': z.string().default('').describe('Azure storage container name (required with -blocks-storage.backend=azure).'),
  'blocks-storage.azure.endpoint-suffix': z
    .string()
    .default('')
    .describe('Azure storage endpoint suffix without scheme, after "<account-name>."; empty: blob.core.windows.net.'),
  // Not a Mimir flag: Mimir reaches Azurite through -blocks-storage.azure.connection-string.
  'blocks-storage.azure.endpoint': z
    .string()
    .default('')
    .describe('For emulators and private endpoints only: the blob service URL (http://127.0.0.1:10000/devstoreaccount1); overrides the suffix.'),
  'blocks-storage.azure.max-retries': z.coerce.number().int().min(1).default(20).describe('Attempts per Azure request, with exponential backoff.'),
};

export type BucketConfig = z.infer<z.ZodObject<typeof bucketConfigShape>>;

export function createBucket(config: BucketConfig): Bucket {
  switch (config['blocks-storage.backend']) {
    case 'filesystem':
      return new FilesystemBucket(config['blocks-storage.filesystem.dir']);
    case 's3':
      return createS3Bucket(config);
    case 'gcs':
      return createGcsBucket(config);
    case 'azure':
      return createAzureBucket(config);
  }
}

function createGcsBucket(config: BucketConfig): Bucket {
  const bucketName = config['blocks-storage.gcs.bucket-name'];
  if (bucketName === '') throw new BucketConfigError('-blocks-storage.gcs.bucket-name is required with -blocks-storage.backend=gcs');
  return new GcsBucket({
    bucketName,
    serviceAccount: config['blocks-storage.gcs.service-account'],
    endpoint: config['blocks-storage.gcs.endpoint'],
    maxRetries: config['blocks-storage.gcs.max-retries'],
  });
}

function createAzureBucket(config: BucketConfig): Bucket {
  const connectionString = config['blocks-storage.azure.connection-string'];
  const required = connectionString === '' ? (['account-name', 'container-name'] as const) : (['container-name'] as const);
  for (const flag of required) {
    if (config[`blocks-storage.azure.${flag}`] === '')
      throw new BucketConfigError(`-blocks-storage.azure.${flag} is required with -blocks-storage.backend=azure`);
  }
  return new AzureBucket({
    accountName: config['blocks-storage.azure.account-name'],
    accountKey: config['blocks-storage.azure.account-key'],
    connectionString,
    userAssignedId: config['blocks-storage.azure.user-assigned-id'],
    containerName: config['blocks-storage.azure.container-name'],
    endpointSuffix: config['blocks-storage.azure.endpoint-suffix'],
    endpoint: config['blocks-storage.azure.endpoint'],
    maxRetries: config['blocks-storage.azure.max-retries'],
  });
}

function createS3Bucket(config: BucketConfig): Bucket {
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
