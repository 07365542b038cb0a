// Query-scheduler flags (Mimir's names).

import { z } from 'zod';

export const querySchedulerConfigShape = {
  'query-scheduler.max-outstanding-requests-per-tenant': z.coerce
    .number()
    .int()
    .nonnegative()
    .default(100)
    .describe('Queries one tenant may have waiting in the scheduler; one more is 429; 0: no limit.'),
};

export type QuerySchedulerConfig = z.infer<z.ZodObject<typeof querySchedulerConfigShape>>;
