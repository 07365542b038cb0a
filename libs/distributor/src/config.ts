// Distributor flags (Mimir's names where Mimir has the setting).

import { z } from 'zod';
import { boolFlag } from '@strata/service';

export const distributorConfigShape = {
  'auth.multitenancy-enabled': boolFlag(true),
  'distributor.max-recv-msg-size': z.coerce.number().int().positive().default(100 << 20),
};

export type DistributorConfig = z.infer<z.ZodObject<typeof distributorConfigShape>>;
