// Reads the recent window from ingesters: one healthy ingester per partition,
// the preferred zone first, the other zone on error or timeout. If no replica
// of a partition answers, the query fails and says which partition and why.

import type { LabelValuesParams, Querier, SelectParams, Series } from '@strata/model';
import type { Logger } from '@strata/service';
import { mergeSeries, mergeStrings } from './merge.ts';

export interface IngesterReplica {
  id: string;
  zone: string;
  partition: number;
  querier: Querier;
}

export interface PartitionQuerierOptions {
  replicas: IngesterReplica[];
  preferredZone?: string;
  logger: Logger;
}

export class PartitionUnavailableError extends Error {}

export class PartitionQuerier implements Querier {
  private readonly byPartition = new Map<number, IngesterReplica[]>();

  constructor(private readonly opts: PartitionQuerierOptions) {
    for (const r of opts.replicas) {
      let list = this.byPartition.get(r.partition);
      if (!list) this.byPartition.set(r.partition, (list = []));
      list.push(r);
    }
    const preferred = opts.preferredZone;
    for (const list of this.byPartition.values()) {
      list.sort((a, b) => rank(a.zone, preferred) - rank(b.zone, preferred) || a.zone.localeCompare(b.zone));
    }
  }

  async select(p: SelectParams): Promise<Series[]> {
    return mergeSeries(await this.eachPartition((q) => q.select(p)));
  }

  async labelNames(p: SelectParams): Promise<string[]> {
    return mergeStrings(await this.eachPartition((q) => q.labelNames(p)));
  }

  async labelValues(p: LabelValuesParams): Promise<string[]> {
    return mergeStrings(await this.eachPartition((q) => q.labelValues(p)));
  }

  private eachPartition<T>(call: (q: Querier) => Promise<T>): Promise<T[]> {
    return Promise.all([...this.byPartition].map(([partition, replicas]) => this.firstHealthy(partition, replicas, call)));
  }

  private async firstHealthy<T>(partition: number, replicas: IngesterReplica[], call: (q: Querier) => Promise<T>): Promise<T> {
    const failures: string[] = [];
    for (const r of replicas) {
      try {
        return await call(r.querier);
      } catch (err) {
        failures.push((err as Error).message);
        this.opts.logger.debug({ ingester: r.id, err: (err as Error).message }, 'ingester query failed; trying the next zone');
      }
    }
    throw new PartitionUnavailableError(
      `no ingester of partition ${partition} answered (${failures.join('; ')}); check that at least one zone's ingester for this partition is up and ready`,
    );
  }
}

function rank(zone: string, preferred: string | undefined): number {
  return zone === preferred ? 0 : 1;
}
