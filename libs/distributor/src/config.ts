// Distributor flags (Mimir's names where Mimir has the setting).

import { z } from 'zod';

export const distributorConfigShape = {
  'distributor.max-recv-msg-size': z.coerce
    .number()
    .int()
    .positive()
    .default(100 << 20)
    .describe('Largest push body in bytes, compressed and decompressed; over it 413.'),
  // Strata's own (Mimir has none): bounds the memory one request takes, counted before decoding.
  'distributor.max-series-per-request': z.coerce
    .number()
    .int()
    .nonnegative()
    .default(1_000_000)
    .describe('Series one push may carry (OTLP: the series its points become); over it 413; 0: no limit.'),
  'distributor.instance-limits.max-inflight-push-requests': z.coerce
    .number()
    .int()
    .nonnegative()
    .default(2000)
    .describe('Push requests handled at once by one distributor; over it 503 at once; 0: no limit.'),
  'distributor.instance-limits.max-inflight-push-requests-bytes': z.coerce
    .number()
    .int()
    .nonnegative()
    .default(0)
    .describe('Bytes of push bodies (as received) in flight in one distributor; over it 503 at once; 0: no limit. Unset: 5% of -server.memory-limit.'),
};

/** Defaults taken from the process' memory budget when the flag is not set (bytes in, value out). */
export const distributorBudgetDefaults = {
  'distributor.instance-limits.max-inflight-push-requests-bytes': (budget: number) => Math.floor(budget * 0.05),
};

/** The instance limits out of the parsed flags, for the Distributor's options. */
export function instanceLimitsFromConfig(c: DistributorConfig): { maxInflightPushRequests: number; maxInflightPushRequestsBytes: number } {
  return {
    maxInflightPushRequests: c['distributor.instance-limits.max-inflight-push-requests'],
    maxInflightPushRequestsBytes: c['distributor.instance-limits.max-inflight-push-requests-bytes'],
  };
}

export type DistributorConfig = z.infer<z.ZodObject<typeof distributorConfigShape>>;
