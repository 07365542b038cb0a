// The querier's two sources joined by time, as Mimir's querier does: the
// ingesters (heads and the blocks they keep locally) for the recent window,
// the bucket's blocks for older data; where both answer, identical samples
// count once. Exemplars and metadata live in the ingesters only.

import type {
  ExemplarParams,
  ExemplarQuerier,
  ExemplarSeries,
  LabelValuesParams,
  MetadataParams,
  MetadataQuerier,
  MetricMetadataEntry,
  Querier,
  SelectParams,
  Series,
} from '@strata/model';
import { mergeSeries, mergeStrings } from './merge.ts';

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

  constructor(private readonly opts: StoreAndIngestersOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** The same store and windows over other ingesters (e.g. ones caught up for a strong read). */
  withIngesters(ingesters: StoreAndIngestersOptions['ingesters']): StoreAndIngestersQuerier {
    return new StoreAndIngestersQuerier({ ...this.opts, ingesters });
  }

  async select(p: SelectParams): Promise<Series[]> {
    return mergeSeries(await this.both(p, (q, r) => q.select({ ...p, ...r })));
  }

  async labelNames(p: SelectParams): Promise<string[]> {
    return mergeStrings(await this.both(p, (q, r) => q.labelNames({ ...p, ...r })));
  }

  async labelValues(p: LabelValuesParams): Promise<string[]> {
    return mergeStrings(await this.both(p, (q, r) => q.labelValues({ ...p, ...r })));
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

  private both<T>(p: SelectParams, call: (q: Querier, r: Range) => Promise<T[]>): Promise<T[][]> {
    const { ingesters, store } = this.split(p.mint, p.maxt);
    const calls: Promise<T[]>[] = [];
    if (ingesters) calls.push(call(this.opts.ingesters, ingesters));
    if (store && this.opts.store) calls.push(call(this.opts.store, store));
    return Promise.all(calls);
  }
}
