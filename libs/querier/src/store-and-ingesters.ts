// The querier's two sources joined by time, as Mimir's querier does: the
// ingesters (heads and the blocks they keep locally) for the recent window,
// the bucket's blocks for older data; where both answer, identical samples
// count once: each source, bound to the tenant and restricted to its window,
// goes into one MergeQuerier. Exemplars and metadata live in the ingesters only.

import {
  MergeQuerier,
  restrictRange,
  tenantQuerier,
  type BlockQuerier,
  type ExemplarParams,
  type ExemplarQuerier,
  type ExemplarSeries,
  type LabelValuesParams,
  type MetadataParams,
  type MetadataQuerier,
  type MetricMetadataEntry,
  type Querier,
  type SelectParams,
  type Series,
} from '@strata/model';

export interface StoreAndIngestersOptions {
  ingesters: Querier & Partial<ExemplarQuerier & MetadataQuerier>;
  /** The bucket's blocks (a BucketStore); none: ingesters only. */
  store?: Querier;
  /** Ingesters are asked only for data newer than now minus this (0: always). */
  queryIngestersWithinMs: number;
  /** The store is asked only for data older than now minus this (0: always). */
  queryStoreAfterMs: number;
  now?: () => number;
}

interface Range {
  mint: number;
  maxt: number;
}

export class StoreAndIngestersQuerier implements Querier, ExemplarQuerier, MetadataQuerier {
  private readonly now: () => number;

  private readonly opts: StoreAndIngestersOptions;

  constructor(opts: StoreAndIngestersOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
  }

  /** The same store and windows over other ingesters (e.g. ones caught up for a strong read). */
  withIngesters(ingesters: StoreAndIngestersOptions['ingesters']): StoreAndIngestersQuerier {
    return new StoreAndIngestersQuerier({ ...this.opts, ingesters });
  }

  select(p: SelectParams): Promise<Series[]> {
    return this.merged(p).select(p);
  }

  labelNames(p: SelectParams): Promise<string[]> {
    return this.merged(p).labelNames(p);
  }

  labelValues(p: LabelValuesParams): Promise<string[]> {
    return this.merged(p).labelValues(p);
  }

  exemplars(p: ExemplarParams): Promise<ExemplarSeries[]> {
    return this.opts.ingesters.exemplars ? this.opts.ingesters.exemplars(p) : Promise.resolve([]);
  }

  metadata(p: MetadataParams): Promise<MetricMetadataEntry[]> {
    return this.opts.ingesters.metadata ? this.opts.ingesters.metadata(p) : Promise.resolve([]);
  }

  /** The parts of [mint, maxt] each source is asked for (null: not asked). */
  split(mint: number, maxt: number): { ingesters: Range | null; store: Range | null } {
    const now = this.now();
    const within = this.opts.queryIngestersWithinMs;
    const after = this.opts.queryStoreAfterMs;
    const ingMint = within > 0 ? Math.max(mint, now - within) : mint;
    const storeMaxt = after > 0 ? Math.min(maxt, now - after) : maxt;
    return {
      ingesters: ingMint <= maxt ? { mint: ingMint, maxt } : null,
      store: this.opts.store && mint <= storeMaxt ? { mint, maxt: storeMaxt } : null,
    };
  }

  /** The sources this request asks, each within its window. */
  private merged(p: SelectParams): BlockQuerier {
    const { ingesters, store } = this.split(p.mint, p.maxt);
    const sources: BlockQuerier[] = [];
    if (ingesters) sources.push(restrictRange(tenantQuerier(this.opts.ingesters, p.tenant), ingesters.mint, ingesters.maxt));
    if (store && this.opts.store) sources.push(restrictRange(tenantQuerier(this.opts.store, p.tenant), store.mint, store.maxt));
    return new MergeQuerier(sources);
  }
}
