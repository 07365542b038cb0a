// Flags of reading blocks from the bucket (Mimir's -blocks-storage.bucket-store.*).

import { z } from 'zod';
import { boolFlag, duration } from '@strata/service';

export const bucketStoreConfigShape = {
  /** How often a tenant's block list (bucket index or listing) is re-read; yields ms. */
  'blocks-storage.bucket-store.sync-interval': duration('15m'),
  /** Blocks marked for deletion longer ago than this are no longer queried; yields ms. */
  'blocks-storage.bucket-store.ignore-deletion-marks-delay': duration('1h'),
  'blocks-storage.bucket-store.bucket-index.enabled': boolFlag(true),
  /** At start, load index headers of blocks with data this recent before reporting ready (0s: none); yields ms. */
  'blocks-storage.bucket-store.warm-start-period': duration('24h'),
};

export type BucketStoreConfig = z.infer<z.ZodObject<typeof bucketStoreConfigShape>>;
