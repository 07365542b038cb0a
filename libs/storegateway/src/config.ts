// Flags of reading blocks from the bucket (Mimir's -blocks-storage.bucket-store.*).

import { z } from 'zod';
import { boolFlag, duration } from '@strata/service';

export const bucketStoreConfigShape = {
  // Durations yield ms.
  'blocks-storage.bucket-store.sync-interval': duration('15m').describe("How often a tenant's block list (bucket index or listing) is re-read."),
  'blocks-storage.bucket-store.ignore-deletion-marks-delay': duration('1h')
    .describe('Blocks marked for deletion longer ago than this are no longer queried.')
    .meta({ yaml: 'blocks_storage.bucket_store.ignore_deletion_mark_delay' }),
  'blocks-storage.bucket-store.bucket-index.enabled': boolFlag(true).describe("Read the tenant's bucket-index.json.gz instead of listing the bucket."),
  'blocks-storage.bucket-store.warm-start-period': duration('24h').describe(
    'At start, load index headers of blocks with data this recent before /ready (0s: none).',
  ),
};

export type BucketStoreConfig = z.infer<z.ZodObject<typeof bucketStoreConfigShape>>;
