// Querier flags (Mimir's names where Mimir has the setting).

import { z } from 'zod';
import { boolFlag, duration } from '@strata/service';

export const querierConfigShape = {
  'querier.ingester-addresses': z
    .string()
    .default('')
    .describe('Every ingester as id=host:port,... (e.g. ingester-zone-a-0=127.0.0.1:9095); with a Redis ring the fallback.'),
  'querier.prefer-availability-zone': z.string().default('a').describe('The zone whose ingester is asked first for each partition.'),
  'querier.ingester-timeout': duration('10s').describe("Deadline of one call to an ingester before the other zone's is asked."),
  'querier.timeout': duration('2m').describe('Query timeout.'),
  'querier.max-samples': z.coerce.number().int().positive().default(50_000_000).describe('Samples one query may hold in memory; over it 422.'),
  'querier.max-fetched-series-per-query': z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe('Series one query may fetch over all its selectors; over it 422; 0: no limit. Unset: one per 4 KiB of -server.memory-limit.')
    .meta({ yaml: 'limits.max_fetched_series_per_query' }),
  'querier.max-fetched-chunk-bytes-per-query': z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe(
      'Chunk bytes one query may fetch over all its selectors, counted encoded (samples a head reads decoded at their encoded size), in ingesters too; over it 422; 0: no limit. Unset: 5% of -server.memory-limit.',
    )
    .meta({ yaml: 'limits.max_fetched_chunk_bytes_per_query' }),
  'querier.max-estimated-memory-per-query': z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe(
      'Bytes one query is estimated to hold (fetched series and samples, then evaluated points), checked as it fetches and evaluates, in ingesters too; over it 422; 0: no limit. Unset: 10% of -server.memory-limit.',
    ),
  'querier.scheduler-address': z
    .string()
    .default('')
    .describe("host:port of the query-scheduler's gRPC server: set, this querier also runs the queries the scheduler hands it.")
    .meta({ yaml: 'frontend_worker.scheduler_address' }),
  'querier.max-concurrent': z.coerce
    .number()
    .int()
    .positive()
    .default(8)
    .describe('Queries this querier takes from the scheduler at once (one worker stream each).'),
  'querier.id': z
    .string()
    .default('')
    .describe("This querier's name at the scheduler (its queue's shuffle shards use it); empty: host name and HTTP port.")
    .meta({ yaml: 'frontend_worker.id' }),
  'querier.lookback-delta': duration('5m').describe('PromQL lookback: how far back an instant selector looks for a sample.'),
  'querier.max-wait-for-offset': duration('10s').describe('Strong read consistency: how long an ingester may take to consume the last produced offset.'),
  'querier.promql-experimental-functions-enabled': boolFlag(false).describe(
    'Enable experimental PromQL functions and modifiers (limit_ratio, sort_by_label, info(), ...).',
  ),
  'querier.promql-duration-expressions-enabled': boolFlag(false).describe('Duration expressions in ranges and offsets ([step()*4], offset 1h+5m).'),
  // Durations yield ms.
  'querier.query-ingesters-within': duration('13h')
    .describe('Ingesters are asked only for data newer than this (0s: always).')
    .meta({ yaml: 'limits.query_ingesters_within' }),
  'querier.query-store-after': duration('12h').describe("The bucket's blocks are asked only for data older than this (0s: always)."),
  'querier.deletion-requests-sync-interval': duration('1m').describe(
    "How old a tenant's delete requests and deletion mark (read from the bucket) may get before they are read again.",
  ),
};

/** Defaults taken from the process' memory budget when the flag is not set (bytes in, value out). */
export const querierBudgetDefaults = {
  'querier.max-fetched-series-per-query': (budget: number) => Math.floor(budget / 4096),
  'querier.max-estimated-memory-per-query': (budget: number) => Math.floor(budget * 0.1),
  'querier.max-fetched-chunk-bytes-per-query': (budget: number) => Math.floor(budget * 0.05),
};

/** The results cache (Mimir's query-frontend flags); off unless a Redis endpoint is given. */
export const resultsCacheConfigShape = {
  'query-frontend.results-cache.redis.endpoint': z.string().default('').describe('Redis host:port of the range-query results cache; empty: no cache.'),
  'query-frontend.split-queries-by-interval': duration('24h').describe('Range queries are split (and cached) at these boundaries.'),
  'query-frontend.max-cache-freshness': duration('10m').describe('Points newer than this are never cached.').meta({ yaml: 'limits.max_cache_freshness' }),
  'query-frontend.results-cache-ttl': duration('168h').describe('Lifetime of cached extents.').meta({ yaml: 'limits.results_cache_ttl' }),
};

export type ResultsCacheConfig = z.infer<z.ZodObject<typeof resultsCacheConfigShape>>;

export type QuerierConfig = z.infer<z.ZodObject<typeof querierConfigShape>>;

export interface IngesterAddress {
  id: string;
  address: string;
}

export function parseIngesterAddresses(flag: string): IngesterAddress[] {
  if (flag.trim() === '') return [];
  return flag.split(',').map((entry) => {
    const eq = entry.indexOf('=');
    if (eq <= 0) throw new Error(`invalid -querier.ingester-addresses entry "${entry}": expected <instance-id>=<host:port>`);
    return { id: entry.slice(0, eq).trim(), address: entry.slice(eq + 1).trim() };
  });
}
