// Test support (`@strata/tsdb/testing`): one real head per tenant behind the
// Querier seam, for tests that want the head's semantics without an ingester.
// A query never sees another tenant's head. Never imported by production code.

import type { LabelValuesParams, Querier, SelectParams, Series } from '@strata/model';
import { Head, type HeadOptions } from './head/head.ts';
import { RangeHead } from './head/range-head.ts';

export interface TenantHeadsOptions {
  /** Options for a tenant's head, asked once when the head is created. */
  headOptions?: (tenant: string) => HeadOptions;
}

export class TenantHeads implements Querier {
  private readonly heads = new Map<string, Head>();

  private readonly opts: TenantHeadsOptions;

  constructor(opts: TenantHeadsOptions = {}) {
    this.opts = opts;
  }

  head(tenant: string): Head {
    let h = this.heads.get(tenant);
    if (!h) this.heads.set(tenant, (h = new Head(this.opts.headOptions?.(tenant))));
    return h;
  }

  /** The tenant's head if it has one (never creates). */
  get(tenant: string): Head | undefined {
    return this.heads.get(tenant);
  }

  tenants(): string[] {
    return [...this.heads.keys()];
  }

  get numSeries(): number {
    let n = 0;
    for (const h of this.heads.values()) n += h.numSeries;
    return n;
  }

  async select(p: SelectParams): Promise<Series[]> {
    return this.querier(p.tenant)?.select(p) ?? [];
  }

  async labelNames(p: SelectParams): Promise<string[]> {
    return this.querier(p.tenant)?.labelNames(p) ?? [];
  }

  async labelValues(p: LabelValuesParams): Promise<string[]> {
    return this.querier(p.tenant)?.labelValues(p) ?? [];
  }

  private querier(tenant: string): RangeHead | undefined {
    const h = this.heads.get(tenant);
    return h ? new RangeHead(h) : undefined;
  }
}
