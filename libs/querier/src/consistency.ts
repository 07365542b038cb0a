// Read-after-write consistency (X-Read-Consistency: strong): before a query
// reads, fetch every partition's last produced offset and read only from
// ingesters that consumed up to it (each waits, bounded, if behind), joined with
// the bucket's blocks like any other read.

import type { ExemplarQuerier, MetadataQuerier, Querier } from '@strata/model';
import { StrataError } from '@strata/errors';
import { badData } from './errors.ts';
import type { PartitionQuerier } from './partition-querier.ts';
import type { StoreAndIngestersQuerier } from './store-and-ingesters.ts';

export type ReadConsistency = 'strong' | 'eventual';

/** The header value, or an error for a value Strata does not know. */
export function parseReadConsistency(header: string | string[] | undefined): ReadConsistency {
  const v = (Array.isArray(header) ? header[0] : header)?.trim().toLowerCase();
  if (v === undefined || v === '' || v === 'eventual') return 'eventual';
  if (v === 'strong') return 'strong';
  throw badData(`unknown X-Read-Consistency "${v}": use "strong" (read your own writes) or "eventual"`);
}

export interface StrongReadsOptions {
  /** The last produced offset of every partition (a LastProducedOffsetsReader). */
  offsets: { fetch(): Promise<Map<number, bigint>> };
  querier: PartitionQuerier;
  /** How long an ingester may take to catch up before the query fails over or fails. */
  maxWaitMs: number;
  /** The bucket's blocks joined with the ingesters, as eventual reads see them; absent: ingesters only. */
  blocks?: StoreAndIngestersQuerier;
}

export class StrongReads {
  private readonly opts: StrongReadsOptions;

  constructor(opts: StrongReadsOptions) {
    this.opts = opts;
  }

  /** A querier for one request that sees every write acknowledged before this call. */
  async querier(): Promise<Querier & ExemplarQuerier & MetadataQuerier> {
    let offsets: Map<number, bigint>;
    try {
      offsets = await this.opts.offsets.fetch();
    } catch (err) {
      throw new StrataError(
        'strong-read-offsets-unavailable',
        'unavailable',
        `strong read consistency needs the partitions' last produced offsets, and Kafka did not give them: ${(err as Error).message}`,
        { cause: err },
      );
    }
    const ingesters = this.opts.querier.withMinOffsets(offsets, this.opts.maxWaitMs);
    return this.opts.blocks ? this.opts.blocks.withIngesters(ingesters) : ingesters;
  }
}
