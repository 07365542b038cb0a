// The one config of the one binary: every lib's flags composed once, parsed
// once, from the command line, STRATA_* variables and -config.file (in that
// order of precedence). A flag means the same thing under every -target.

import { resolve } from 'node:path';
import { z } from 'zod';
import { kafkaConfigShape } from '@strata/kafka';
import { distributorBudgetDefaults, distributorConfigShape } from '@strata/distributor';
import { ingesterBudgetDefaults, ingesterConfigShape } from '@strata/ingester';
import { limitsConfigShape, runtimeConfigShape } from '@strata/limits';
import { bucketConfigShape } from '@strata/objstore';
import { bucketStoreConfigShape } from '@strata/storegateway';
import { compactorConfigShape } from '@strata/compactor';
import { querierBudgetDefaults, querierConfigShape, resultsCacheConfigShape } from '@strata/querier';
import { ingesterRingConfigShape } from '@strata/ring';
import { rulerConfigShape } from '@strata/ruler';
import { haTrackerConfigShape } from '@strata/ha-tracker';
import {
  authConfigShape,
  configFileShape,
  describeBudget,
  flagsToConfig,
  formatBytes,
  memoryBudget,
  isFlagSet,
  logConfigShape,
  readConfigFile,
  serverConfigShape,
  type FlagGroup,
  type FlagValues,
  type MemoryBudget,
} from '@strata/service';
import { tracingConfigShape } from '@strata/tracing';
import { mimirYamlPath } from './config-yaml.ts';

const strataShape = {
  target: z.string().default('all').describe('Comma-separated modules to run: all (the single process), distributor, ingester, querier, compactor, ruler.'),
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
  { name: 'query-frontend', shape: resultsCacheConfigShape },
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

/** Every flag's place in -config.file (Mimir's YAML path); -config.* themselves are flags only. */
export const YAML_PATHS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.keys(strataConfigShape)
    .filter((flag) => !(flag in configFileShape))
    .map((flag) => [flag, mimirYamlPath(flag)]),
);

/** Local paths that live under -data-dir unless given. */
const UNDER_DATA_DIR = {
  'blocks-storage.filesystem.dir': 'bucket',
  'blocks-storage.tsdb.dir': 'tsdb',
  'compactor.data-dir': 'compactor',
} as const;

/**
 * The single process with multi-tenancy off serves one user on one machine:
 * the multi-tenant defaults (10,000 samples/s, 150,000 series) would throttle
 * that one user far below what the machine takes, so these replace them
 * unless the flag (or the config file, or STRATA_*) sets them.
 */
export const SINGLE_TENANT_DEFAULTS = {
  'distributor.ingestion-rate-limit': 10_000_000,
  'distributor.ingestion-burst-size': 10_000_000,
  'ingester.max-global-series-per-user': 0,
} as const;

/** Limits that keep a process alive under load, sized from its memory budget unless set. */
const BUDGET_DEFAULTS: Readonly<Record<string, (budgetBytes: number) => number>> = {
  ...distributorBudgetDefaults,
  ...ingesterBudgetDefaults,
  ...querierBudgetDefaults,
};

export interface ParsedConfig {
  config: StrataConfig;
  /** -server.memory-limit, or what bounds the process when it is 0. */
  budget: MemoryBudget;
  /** The flags BUDGET_DEFAULTS set. */
  budgetDefaults: string[];
  targets: string[];
  /** Whether the flags name a Kafka to use (otherwise -target=all starts one under -data-dir). */
  externalKafka: boolean;
  /** The limit flags SINGLE_TENANT_DEFAULTS replaced (empty in every other mode). */
  singleTenantDefaults: string[];
}

export function parseConfig(input: FlagValues): ParsedConfig {
  const values = withConfigFile(input);
  const config = flagsToConfig(strataConfigShape, values);
  const dataDir = resolve(config['data-dir']);
  for (const [flag, sub] of Object.entries(UNDER_DATA_DIR) as [keyof typeof UNDER_DATA_DIR, string][]) {
    config[flag] = isFlagSet(values, flag) ? resolve(config[flag]) : resolve(dataDir, sub);
  }
  const targets = config.target.split(',').map((t) => t.trim()).filter((t) => t !== '');
  const singleTenantDefaults: string[] = [];
  if (targets.length === 1 && targets[0] === 'all' && !config['auth.multitenancy-enabled']) {
    for (const [flag, value] of Object.entries(SINGLE_TENANT_DEFAULTS) as [keyof typeof SINGLE_TENANT_DEFAULTS, number][]) {
      if (isFlagSet(values, flag)) continue;
      config[flag] = value;
      singleTenantDefaults.push(flag);
    }
  }
  const budget = memoryBudget(config['server.memory-limit']);
  const budgetDefaults = applyBudgetDefaults(config, values, budget);
  return { config, targets, externalKafka: isFlagSet(values, 'ingest-storage.kafka.address'), singleTenantDefaults, budget, budgetDefaults };
}

function applyBudgetDefaults(config: StrataConfig, values: FlagValues, budget: MemoryBudget): string[] {
  const applied: string[] = [];
  for (const [flag, rule] of Object.entries(BUDGET_DEFAULTS)) {
    if (isFlagSet(values, flag)) continue;
    (config as Record<string, unknown>)[flag] = rule(budget.bytes);
    applied.push(flag);
  }
  return applied;
}

/** The startup line saying what the memory budget sized and how to change it. */
export function budgetLine(parsed: ParsedConfig): string {
  const c = parsed.config;
  const derived = parsed.budgetDefaults.length === 0 ? 'every budget-derived limit set by flags' : `from it (unless set): ${parsed.budgetDefaults.join(', ')}`;
  return (
    `memory budget ${describeBudget(parsed.budget)}: pushes in flight ${formatBytes(c['distributor.instance-limits.max-inflight-push-requests-bytes'])}, ` +
    `${c['ingester.instance-limits.max-series']} series per ingester, ${formatBytes(c['querier.max-estimated-memory-per-query'])} and ` +
    `${c['querier.max-fetched-series-per-query']} series per query; ${derived}; change with -server.memory-limit`
  );
}

/** The values with -config.file's settings below the command line and environment. */
function withConfigFile(values: FlagValues): FlagValues {
  const meta = flagsToConfig(configFileShape, { args: pick(values.args, Object.keys(configFileShape)), env: values.env });
  if (meta['config.file'] === '') return values;
  const file = readConfigFile(meta['config.file'], { yamlPaths: YAML_PATHS, expandEnv: meta['config.expand-env'] });
  return { ...values, file };
}

function pick(rec: Record<string, string>, keys: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(rec).filter(([k]) => keys.includes(k)));
}

/** The startup line saying which per-tenant limits are in force and how to change them. */
export function limitsLine(parsed: ParsedConfig): string {
  const c = parsed.config;
  const show = (n: number, zeroMeans: string) => (n === 0 ? zeroMeans : String(n));
  const why = parsed.singleTenantDefaults.length > 0 ? 'single-tenant single-process defaults' : 'defaults from flags';
  const file = c['runtime-config.file'] === '' ? 'per tenant with -runtime-config.file' : `per tenant in ${c['runtime-config.file']}`;
  return (
    `per-tenant limits (${why}): ingestion rate ${show(c['distributor.ingestion-rate-limit'], '0')} samples/s, burst ${c['distributor.ingestion-burst-size']}, ` +
    `max series ${show(c['ingester.max-global-series-per-user'], 'unlimited')}, max exemplars ${show(c['ingester.max-global-exemplars-per-user'], 'off')}; ` +
    `change with -distributor.ingestion-rate-limit, -distributor.ingestion-burst-size, -ingester.max-global-series-per-user (limits: in -config.file) or ${file}`
  );
}
