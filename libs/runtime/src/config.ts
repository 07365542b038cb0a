// The flags of the one binary: every lib's shape composed once, so every module reads
// the same typed config whatever -target runs. Parsing (command line, STRATA_*,
// -config.file, defaults that depend on the process) is the binary's: apps/strata/src/config.ts.

import { z } from 'zod';
import { kafkaConfigShape } from '@strata/kafka';
import { distributorConfigShape } from '@strata/distributor';
import { ingesterConfigShape } from '@strata/ingester';
import { limitsConfigShape, runtimeConfigShape } from '@strata/limits';
import { bucketConfigShape } from '@strata/objstore';
import { bucketStoreConfigShape } from '@strata/storegateway';
import { compactorConfigShape } from '@strata/compactor';
import { querierConfigShape, resultsCacheConfigShape } from '@strata/querier';
import { queryFrontendConfigShape } from '@strata/query-frontend';
import { querySchedulerConfigShape } from '@strata/query-scheduler';
import { ingesterRingConfigShape } from '@strata/ring';
import { rulerConfigShape } from '@strata/ruler';
import { haTrackerConfigShape } from '@strata/ha-tracker';
import { authConfigShape, configFileShape, flagYamlPath, logConfigShape, serverConfigShape, type FlagGroup } from '@strata/service';
import { tracingConfigShape } from '@strata/tracing';

const strataShape = {
  target: z
    .string()
    .default('all')
    .describe('Comma-separated modules to run: all (the single process), distributor, ingester, querier, query-frontend, query-scheduler, compactor, ruler.'),
  'data-dir': z.string().min(1).default('./data').describe('Base of the local paths not set otherwise: bucket/, tsdb/, compactor/ and (-target=all) kafka/.'),
  ...configFileShape,
};

/** Every flag, grouped by the lib whose shape defines it: -help prints them in this order. */
export const FLAG_GROUPS = [
  { name: 'strata', shape: strataShape },
  { name: 'server', shape: { ...serverConfigShape, ...logConfigShape } },
  { name: 'kafka', shape: kafkaConfigShape },
  { name: 'distributor', shape: distributorConfigShape },
  { name: 'ha-tracker', shape: haTrackerConfigShape },
  { name: 'limits', shape: limitsConfigShape },
  { name: 'runtime-config', shape: runtimeConfigShape },
  { name: 'auth', shape: authConfigShape },
  { name: 'ingester', shape: ingesterConfigShape },
  { name: 'ring', shape: ingesterRingConfigShape },
  { name: 'querier', shape: querierConfigShape },
  { name: 'query-frontend', shape: { ...queryFrontendConfigShape, ...resultsCacheConfigShape } },
  { name: 'query-scheduler', shape: querySchedulerConfigShape },
  { name: 'objstore', shape: bucketConfigShape },
  { name: 'storegateway', shape: bucketStoreConfigShape },
  { name: 'compactor', shape: compactorConfigShape },
  { name: 'ruler', shape: rulerConfigShape },
  { name: 'tracing', shape: tracingConfigShape },
] as const satisfies readonly FlagGroup[];

export const strataConfigShape = {
  ...strataShape,
  ...serverConfigShape,
  ...logConfigShape,
  ...kafkaConfigShape,
  ...distributorConfigShape,
  ...ingesterConfigShape,
  ...ingesterRingConfigShape,
  ...querierConfigShape,
  ...resultsCacheConfigShape,
  ...queryFrontendConfigShape,
  ...querySchedulerConfigShape,
  ...bucketConfigShape,
  ...bucketStoreConfigShape,
  ...compactorConfigShape,
  ...rulerConfigShape,
  ...limitsConfigShape,
  ...runtimeConfigShape,
  ...authConfigShape,
  ...haTrackerConfigShape,
  ...tracingConfigShape,
};

export type StrataConfig = z.infer<z.ZodObject<typeof strataConfigShape>>;

/** Every flag's place in -config.file (Mimir's YAML path, declared beside the flag); -config.* themselves are flags only. */
export const YAML_PATHS: Readonly<Record<string, string>> = Object.fromEntries(
  (Object.entries(strataConfigShape) as [string, z.ZodType][])
    .filter(([flag]) => !(flag in configFileShape))
    .map(([flag, schema]) => [flag, flagYamlPath(flag, schema)]),
);
