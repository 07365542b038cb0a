// Ingester flags (Mimir's names where Mimir has the setting).

import { z } from 'zod';
import { duration } from '@strata/service';

export const ingesterConfigShape = {
  'ingester.ring.instance-id': z
    .string()
    .default('ingester-zone-a-0')
    .describe('This ingester: ingester-zone-<zone>-<partition> (it consumes that Kafka partition).'),
  'ingester.max-lag-records-for-ready': z.coerce
    .number()
    .int()
    .nonnegative()
    .default(100)
    .describe('/ready waits until the ingester is this few records behind its partition end.'),
  // Per-tenant limits the ingester applies (-ingester.out-of-order-time-window,
  // -ingester.max-global-exemplars-per-user) are @strata/limits' flags and runtime overrides.
  // Durations yield ms.
  'blocks-storage.tsdb.dir': z
    .string()
    .min(1)
    .default('./data/tsdb')
    .describe('Local directory of the blocks cut from the heads (one per ingester; default <data-dir>/tsdb).'),
  'blocks-storage.tsdb.block-ranges-period': duration('2h').describe('Block range: the head is cut into aligned blocks of this span.'),
  'blocks-storage.tsdb.retention-period': duration('13h').describe('How long shipped blocks stay on local disk (and are served from it).'),
  'blocks-storage.tsdb.head-compaction-interval': duration('1m').describe('How often due ranges are cut and failed uploads retried.'),
  'ingester.decoded-chunks-cache-size': z.coerce
    .number()
    .int()
    .nonnegative()
    .default(256 * 2 ** 20)
    .describe(
      'Bytes of decoded head samples kept between queries (16 per sample, per series, shared by all tenants; oldest series out first); 0: decode on every read.',
    ),
  'ingester.instance-limits.max-series': z.coerce
    .number()
    .int()
    .nonnegative()
    .default(0)
    .describe(
      'Series in all heads of one ingester past which distributors refuse writes to its partition (503) until blocks are cut; 0: no limit. Unset: half of -server.memory-limit at 2 KiB a series.',
    ),
  'blocks-storage.tsdb.head-compaction-idle-timeout': duration('1h').describe(
    "A tenant's head with no appends for this long is flushed to a block (0s: never).",
  ),
};

/** Bytes a head series is sized at for -ingester.instance-limits.max-series' default (1.5 KB measured at 1M series, docs/benchmarks.md). */
const SERIES_BYTES = 2048;

/** Defaults taken from the process' memory budget when the flag is not set (bytes in, value out). */
export const ingesterBudgetDefaults = {
  'ingester.instance-limits.max-series': (budget: number) => Math.floor((budget * 0.5) / SERIES_BYTES),
};

export type IngesterConfig = z.infer<z.ZodObject<typeof ingesterConfigShape>>;
