// Distributor flags (Mimir's names where Mimir has the setting).

import { z } from 'zod';

export const distributorConfigShape = {
  'distributor.max-recv-msg-size': z.coerce.number().int().positive().default(100 << 20),
  /**
   * Strata's own (Mimir has none): series one push may carry (remote write: TimeSeries; OTLP: the series its
   * points become), counted before decoding; over it 413. Bounds the memory one request takes. 0: no limit.
   */
  'distributor.max-series-per-request': z.coerce.number().int().nonnegative().default(1_000_000),
  /** Push requests handled at once by one distributor, over it: 503 at once (Mimir's default 2000); 0: no limit. */
  'distributor.instance-limits.max-inflight-push-requests': z.coerce.number().int().nonnegative().default(2000),
  /** Bytes of push request bodies (as received) in flight in one distributor, over it: 503 at once; 0: no limit (Mimir's default). */
  'distributor.instance-limits.max-inflight-push-requests-bytes': z.coerce.number().int().nonnegative().default(0),
};

/** The instance limits out of the parsed flags, for the Distributor's options. */
export function instanceLimitsFromConfig(c: DistributorConfig): { maxInflightPushRequests: number; maxInflightPushRequestsBytes: number } {
  return {
    maxInflightPushRequests: c['distributor.instance-limits.max-inflight-push-requests'],
    maxInflightPushRequestsBytes: c['distributor.instance-limits.max-inflight-push-requests-bytes'],
  };
}

export type DistributorConfig = z.infer<z.ZodObject<typeof distributorConfigShape>>;
