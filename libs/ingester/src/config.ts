// Ingester flags (Mimir's names where Mimir has the setting).

import { z } from 'zod';

export const ingesterConfigShape = {
  'ingester.ring.instance-id': z.string().default('ingester-zone-a-0'),
  'ingester.max-lag-records-for-ready': z.coerce.number().int().nonnegative().default(100),
};

export type IngesterConfig = z.infer<z.ZodObject<typeof ingesterConfigShape>>;
