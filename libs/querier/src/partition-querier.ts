// Reads the recent window from ingesters: one healthy ingester per partition,
// the preferred zone first, the other zone on error or timeout. If no replica
// of a partition answers, the query fails and says which partition and why.
// A view with minimum offsets (read-after-write) first has each chosen
// ingester wait until it consumed its partition up to that offset. A query
// whose signal fired is not failed over: nobody waits for the answer.

import {
  mergeSeriesSets,
  mergeStringSets,
  throwIfAborted,
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
import { StrataError, type ErrorKind } from '@strata/errors';
import type { Logger } from '@strata/service';
import { mergeExemplars, mergeMetadata } from './merge-exemplars.ts';

/** An ingester that can wait until it consumed its partition up to an offset. */
export interface OffsetWaiter {
  waitForOffset(offset: bigint, timeoutMs: number): Promise<bigint>;
}

export interface IngesterReplica {
  id: string;
  zone: string;
  partition: number;
  querier: Querier & Partial<ExemplarQuerier & MetadataQuerier>;
  /** Needed for strong read consistency. */
  waiter?: OffsetWaiter;
}

export interface PartitionQuerierOptions {
  replicas: IngesterReplica[];
  preferredZone?: string;
  logger: Logger;
}

/** No replica of a partition answered: `unavailable`, the query may succeed once a zone is back. */
/** Errors that are the ingester's answer about the query, not about its own health. */
const ANSWERED_KINDS = new Set<ErrorKind>(['bad-input', 'unprocessable', 'limit', 'too-large']);

export class PartitionUnavailableError extends StrataError {
  constructor(message: string) {
    super('partition-unavailable', 'unavailable', message);
  }
}

type ReadableQuerier = Querier & ExemplarQuerier & MetadataQuerier;

export class PartitionQuerier implements ReadableQuerier {
  private byPartition = new Map<number, IngesterReplica[]>();

  private readonly opts: PartitionQuerierOptions;

  constructor(opts: PartitionQuerierOptions) {
    this.opts = opts;
    this.setReplicas(opts.replicas);
  }

  /** Replaces the ingesters (ring discovery); a query already running keeps the set it started with. */
  setReplicas(replicas: readonly IngesterReplica[]): void {
    const byPartition = new Map<number, IngesterReplica[]>();
    for (const r of replicas) {
      let list = byPartition.get(r.partition);
      if (!list) byPartition.set(r.partition, (list = []));
      list.push(r);
    }
    const preferred = this.opts.preferredZone;
    for (const list of byPartition.values()) {
      list.sort((a, b) => rank(a.zone, preferred) - rank(b.zone, preferred) || a.zone.localeCompare(b.zone));
    }
    this.byPartition = byPartition;
  }

  /** The partitions this querier reads. */
  get partitions(): number[] {
    return [...this.byPartition.keys()];
  }

  select(p: SelectParams): Promise<Series[]> {
    return this.view(undefined).select(p);
  }

  labelNames(p: SelectParams): Promise<string[]> {
    return this.view(undefined).labelNames(p);
  }

  labelValues(p: LabelValuesParams): Promise<string[]> {
    return this.view(undefined).labelValues(p);
  }

  exemplars(p: ExemplarParams): Promise<ExemplarSeries[]> {
    return this.view(undefined).exemplars(p);
  }

  metadata(p: MetadataParams): Promise<MetricMetadataEntry[]> {
    return this.view(undefined).metadata(p);
  }

  /**
   * A querier for one request that reads only from ingesters that consumed
   * each partition up to `minOffsets` (waiting at most maxWaitMs per ingester).
   */
  withMinOffsets(minOffsets: Map<number, bigint>, maxWaitMs: number): ReadableQuerier {
    return this.view({ minOffsets, maxWaitMs, waited: new Map() });
  }

  private view(consistency: Consistency | undefined): ReadableQuerier {
    const each = <T>(call: (q: IngesterReplica['querier']) => Promise<T>, signal?: AbortSignal) => this.eachPartition(call, consistency, signal);
    return {
      select: async (p) => mergeSeriesSets(await each((q) => q.select(p), p.signal)),
      labelNames: async (p) => mergeStringSets(await each((q) => q.labelNames(p), p.signal)),
      labelValues: async (p) => mergeStringSets(await each((q) => q.labelValues(p), p.signal)),
      exemplars: async (p) => mergeExemplars(await each((q) => (q.exemplars ? q.exemplars(p) : Promise.resolve([])))),
      metadata: async (p) => mergeMetadata(await each((q) => (q.metadata ? q.metadata(p) : Promise.resolve([])))),
    };
  }

  private eachPartition<T>(
    call: (q: IngesterReplica['querier']) => Promise<T>,
    consistency: Consistency | undefined,
    signal: AbortSignal | undefined,
  ): Promise<T[]> {
    return Promise.all([...this.byPartition].map(([partition, replicas]) => this.firstHealthy(partition, replicas, call, consistency, signal)));
  }

  private async firstHealthy<T>(
    partition: number,
    replicas: IngesterReplica[],
    call: (q: IngesterReplica['querier']) => Promise<T>,
    consistency: Consistency | undefined,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    const failures: string[] = [];
    for (const r of replicas) {
      try {
        if (consistency) await this.waitConsumed(r, consistency);
        return await call(r.querier);
      } catch (err) {
        throwIfAborted(signal, `reading partition ${partition}`);
        // The other zone holds the same data and would refuse the query alike (a budget, a bad matcher).
        if (err instanceof StrataError && ANSWERED_KINDS.has(err.kind)) throw err;
        failures.push((err as Error).message);
        this.opts.logger.debug({ ingester: r.id, err: (err as Error).message }, 'ingester query failed; trying the next zone');
      }
    }
    throw new PartitionUnavailableError(
      `no ingester of partition ${partition} answered (${failures.join('; ')}); check that at least one zone's ingester for this partition is up and ready`,
    );
  }

  /** Waits (once per ingester and request) until the ingester consumed its partition's minimum offset. */
  private waitConsumed(r: IngesterReplica, c: Consistency): Promise<unknown> {
    const min = c.minOffsets.get(r.partition);
    if (min === undefined || min < 0n) return Promise.resolve();
    let waited = c.waited.get(r.id);
    if (!waited) {
      if (!r.waiter) return Promise.reject(new Error(`${r.id} cannot wait for Kafka offsets (strong read consistency)`));
      waited = r.waiter.waitForOffset(min, c.maxWaitMs);
      // A failed wait is retried by the next call rather than remembered.
      waited.catch(() => c.waited.delete(r.id));
      c.waited.set(r.id, waited);
    }
    return waited;
  }
}

interface Consistency {
  minOffsets: Map<number, bigint>;
  maxWaitMs: number;
  waited: Map<string, Promise<bigint>>;
}

function rank(zone: string, preferred: string | undefined): number {
  return zone === preferred ? 0 : 1;
}
