// Querier flags (Mimir's names where Mimir has the setting).

import { z } from 'zod';
import { boolFlag, duration } from '@strata/service';

export const querierConfigShape = {
  /** Comma-separated id=host:port, e.g. ingester-zone-a-0=127.0.0.1:9095,ingester-zone-b-0=127.0.0.1:9096. */
  'querier.ingester-addresses': z.string().default(''),
  'querier.prefer-availability-zone': z.string().default('a'),
  'querier.ingester-timeout': duration('10s'),
  'querier.timeout': duration('2m'),
  'querier.max-samples': z.coerce.number().int().positive().default(50_000_000),
  /** Series one query may fetch over all its selectors; 0 for no limit. */
  'querier.max-fetched-series-per-query': z.coerce.number().int().min(0).default(0),
  'querier.lookback-delta': duration('5m'),
  /** Strong read consistency: how long an ingester may take to consume the last produced offset. */
  'querier.max-wait-for-offset': duration('10s'),
  'querier.promql-experimental-functions-enabled': boolFlag(false),
  /** Duration expressions in ranges and offsets (`[step()*4]`, `offset 1h+5m`), Prometheus' promql-duration-expr. */
  'querier.promql-duration-expressions-enabled': boolFlag(false),
  /** Ingesters are asked only for data newer than this (0s: always); yields ms. */
  'querier.query-ingesters-within': duration('13h'),
  /** The bucket's blocks are asked only for data older than this (0s: always); yields ms. */
  'querier.query-store-after': duration('12h'),
  /** How old a tenant's delete requests and deletion mark (read from the bucket) may get before they are read again; yields ms. */
  'querier.deletion-requests-sync-interval': duration('1m'),
};

/** The results cache (Mimir's query-frontend flags); off unless a Redis endpoint is given. */
export const resultsCacheConfigShape = {
  'query-frontend.results-cache.redis.endpoint': z.string().default(''),
  'query-frontend.split-queries-by-interval': duration('24h'),
  'query-frontend.max-cache-freshness': duration('10m'),
  'query-frontend.results-cache-ttl': duration('168h'),
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
