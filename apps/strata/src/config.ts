// The one config of the one binary: every lib's flags (composed in @strata/runtime)
// parsed once, from the command line, STRATA_* variables and -config.file (in that
// order of precedence). A flag means the same thing under every -target.

import { resolve } from 'node:path';
import { distributorBudgetDefaults } from '@strata/distributor';
import { ingesterBudgetDefaults } from '@strata/ingester';
import { querierBudgetDefaults } from '@strata/querier';
import { FLAG_GROUPS, YAML_PATHS, strataConfigShape, type ProcessConfig, type StrataConfig } from '@strata/runtime';
import {
  configFileShape,
  describeBudget,
  flagsToConfig,
  formatBytes,
  memoryBudget,
  isFlagSet,
  readConfigFile,
  type FlagValues,
  type MemoryBudget,
} from '@strata/service';

// The flags and their YAML paths are composed in @strata/runtime, where every module's wiring reads their types.
export { FLAG_GROUPS, YAML_PATHS, strataConfigShape };

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

export interface ParsedConfig extends ProcessConfig {
  targets: string[];
  /** The flags BUDGET_DEFAULTS set. */
  budgetDefaults: string[];
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
  const targets = config.target
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
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
    `${c['ingester.instance-limits.max-series']} series per ingester, ${formatBytes(c['querier.max-estimated-memory-per-query'])}, ` +
    `${c['querier.max-fetched-series-per-query']} series and ${formatBytes(c['querier.max-fetched-chunk-bytes-per-query'])} of chunks per query; ` +
    `${derived}; change with -server.memory-limit`
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
