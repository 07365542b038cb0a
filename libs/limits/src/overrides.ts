// Per-tenant limits as read on every request: the flag defaults with the
// runtime config file's overrides for the tenant. Never copy a tenant's limits
// at construction: a reloaded file must apply to the next request.

import type { Registry } from 'prom-client';
import { ReloadingYamlFile, type Logger } from '@strata/service';
import { defaultLimitsFromFlags, type LimitsConfig, type RuntimeConfigFlags } from './config.ts';
import { applyOverrides, runtimeConfigSchema, type RuntimeConfig, type TenantLimits, type TenantOverrides } from './limits.ts';

export interface OverridesOptions {
  defaults: Readonly<TenantLimits>;
  /** The runtime config file; without it every tenant gets the defaults (unless runtimeConfig is given). */
  file?: { path: string; reloadPeriodMs: number; logger: Logger; registry: Registry };
  /** A fixed or test-controlled runtime config, read per call; ignored when `file` is given. */
  runtimeConfig?: () => RuntimeConfig;
}

export class Overrides {
  private readonly defaults: Readonly<TenantLimits>;
  private readonly file: ReloadingYamlFile<RuntimeConfig> | undefined;
  private readonly source: (() => RuntimeConfig | undefined) | undefined;
  private readonly path: string | undefined;
  /** Merged limits of overridden tenants, valid for one runtime config object. */
  private cacheFor: RuntimeConfig | undefined;
  private cache = new Map<string, Readonly<TenantLimits>>();

  constructor(opts: OverridesOptions) {
    this.defaults = Object.freeze({ ...opts.defaults });
    this.path = opts.file?.path;
    if (opts.file) {
      const file = new ReloadingYamlFile<RuntimeConfig>({
        ...opts.file,
        schema: runtimeConfigSchema,
        metricPrefix: 'strata_runtime_config',
        what: 'runtime config',
      });
      this.file = file;
      this.source = () => file.value;
    } else {
      this.source = opts.runtimeConfig;
    }
  }

  /** From the composed flags: defaults from the limit flags, overrides from -runtime-config.file if set. */
  static fromFlags(config: LimitsConfig & RuntimeConfigFlags, deps: { logger: Logger; registry: Registry }): Overrides {
    const path = config['runtime-config.file'];
    return new Overrides({
      defaults: defaultLimitsFromFlags(config),
      file: path === '' ? undefined : { path, reloadPeriodMs: config['runtime-config.reload-period'], ...deps },
    });
  }

  /** Loads the runtime config file (an invalid one fails start) and starts reloading it. */
  async start(): Promise<void> {
    await this.file?.start();
  }

  async stop(): Promise<void> {
    await this.file?.stop();
  }

  /** Re-reads the runtime config file now; returns why it was not applied, if it was not. */
  async reload(): Promise<string | undefined> {
    return this.file?.reload();
  }

  /** What is in force now (the status page): the defaults, and each overridden tenant's overrides as the file gives them. */
  snapshot(): { file: string | undefined; defaults: Readonly<TenantLimits>; overrides: Record<string, TenantOverrides> } {
    const overrides: Record<string, TenantOverrides> = {};
    for (const [tenant, o] of Object.entries(this.source?.()?.overrides ?? {})) if (o) overrides[tenant] = o;
    return { file: this.path, defaults: this.defaults, overrides };
  }

  /** The tenant's limits now. Cheap: call it per request rather than keeping the result. */
  forTenant(tenant: string): Readonly<TenantLimits> {
    const rc = this.source?.();
    if (rc !== this.cacheFor) {
      this.cacheFor = rc;
      this.cache = new Map();
    }
    const o = rc?.overrides?.[tenant];
    if (!o) return this.defaults;
    let merged = this.cache.get(tenant);
    if (merged === undefined) {
      merged = Object.freeze(applyOverrides(this.defaults, o));
      this.cache.set(tenant, merged);
    }
    return merged;
  }
}
