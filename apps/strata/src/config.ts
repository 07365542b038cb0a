// The one config of the one binary: every lib's flags composed once, parsed
// once. A flag means the same thing under every -target.

import { resolve } from 'node:path';
import { z } from 'zod';
import { kafkaConfigShape } from '@strata/kafka';
import { distributorConfigShape } from '@strata/distributor';
import { ingesterConfigShape } from '@strata/ingester';
import { limitsConfigShape, runtimeConfigShape } from '@strata/limits';
import { bucketConfigShape } from '@strata/objstore';
import { bucketStoreConfigShape } from '@strata/storegateway';
import { compactorConfigShape } from '@strata/compactor';
import { querierConfigShape, resultsCacheConfigShape } from '@strata/querier';
import { ingesterRingConfigShape } from '@strata/ring';
import { haTrackerConfigShape } from '@strata/ha-tracker';
import { authConfigShape, flagsToConfig, isFlagSet, serverConfigShape, type FlagValues } from '@strata/service';
import { tracingConfigShape } from '@strata/tracing';

export const strataConfigShape = {
  /** Comma-separated modules to run: all (the single process), distributor, ingester, querier, compactor. */
  target: z.string().default('all'),
  /** Base of the local paths below when they are not set: bucket/, tsdb/, compactor/ and (with -target=all) kafka/. */
  'data-dir': z.string().min(1).default('./data'),
  ...serverConfigShape,
  ...kafkaConfigShape,
  ...distributorConfigShape,
  ...ingesterConfigShape,
  ...ingesterRingConfigShape,
  ...querierConfigShape,
  ...resultsCacheConfigShape,
  ...bucketConfigShape,
  ...bucketStoreConfigShape,
  ...compactorConfigShape,
  ...limitsConfigShape,
  ...runtimeConfigShape,
  ...authConfigShape,
  ...haTrackerConfigShape,
  ...tracingConfigShape,
};

export type StrataConfig = z.infer<z.ZodObject<typeof strataConfigShape>>;

/** Local paths that live under -data-dir unless given. */
const UNDER_DATA_DIR = {
  'blocks-storage.filesystem.dir': 'bucket',
  'blocks-storage.tsdb.dir': 'tsdb',
  'compactor.data-dir': 'compactor',
} as const;

export interface ParsedConfig {
  config: StrataConfig;
  targets: string[];
  /** Whether the flags name a Kafka to use (otherwise -target=all starts one under -data-dir). */
  externalKafka: boolean;
}

export function parseConfig(values: FlagValues): ParsedConfig {
  const config = flagsToConfig(strataConfigShape, values);
  const dataDir = resolve(config['data-dir']);
  for (const [flag, sub] of Object.entries(UNDER_DATA_DIR) as [keyof typeof UNDER_DATA_DIR, string][]) {
    config[flag] = isFlagSet(values, flag) ? resolve(config[flag]) : resolve(dataDir, sub);
  }
  const targets = config.target.split(',').map((t) => t.trim()).filter((t) => t !== '');
  return { config, targets, externalKafka: isFlagSet(values, 'ingest-storage.kafka.address') };
}
