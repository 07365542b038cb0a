// Ingester flags (Mimir's names where Mimir has the setting).

import { z } from 'zod';
import { duration } from '@strata/service';

export const ingesterConfigShape = {
  'ingester.ring.instance-id': z.string().default('ingester-zone-a-0'),
  'ingester.max-lag-records-for-ready': z.coerce.number().int().nonnegative().default(100),
  // Per-tenant limits the ingester applies (-ingester.out-of-order-time-window,
  // -ingester.max-global-exemplars-per-user) are @strata/limits' flags and runtime overrides.
  /** Local directory of the blocks cut from the heads. */
  'blocks-storage.tsdb.dir': z.string().min(1).default('./data/tsdb'),
  /** Block range: the head is cut into blocks of this span (aligned); yields ms. */
  'blocks-storage.tsdb.block-ranges-period': duration('2h'),
  /** How long local blocks are kept (and served) after they were shipped; yields ms. */
  'blocks-storage.tsdb.retention-period': duration('13h'),
  /** How often due ranges are cut and failed uploads retried; yields ms. */
  'blocks-storage.tsdb.head-compaction-interval': duration('1m'),
  /** A tenant's head with no appends for this long is flushed to a block (0s: never); yields ms. */
  'blocks-storage.tsdb.head-compaction-idle-timeout': duration('1h'),
};

export type IngesterConfig = z.infer<z.ZodObject<typeof ingesterConfigShape>>;
