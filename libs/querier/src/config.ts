// Querier flags (Mimir's names where Mimir has the setting).

import { z } from 'zod';
import { duration } from '@strata/service';

export const querierConfigShape = {
  /** Comma-separated id=host:port, e.g. ingester-zone-a-0=127.0.0.1:9095,ingester-zone-b-0=127.0.0.1:9096. */
  'querier.ingester-addresses': z.string().default(''),
  'querier.prefer-availability-zone': z.string().default('a'),
  'querier.ingester-timeout': duration('10s'),
  'querier.timeout': duration('2m'),
  'querier.max-samples': z.coerce.number().int().positive().default(50_000_000),
  'querier.lookback-delta': duration('5m'),
};

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
