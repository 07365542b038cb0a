// An immutable view of one partition ring desc, built once per change: the
// merged sorted token list of all partitions (any state) and lookups on it.
// A series token walks clockwise to the first token of a partition it may
// write to (dskit's ActivePartitionForKey), so PENDING and INACTIVE
// partitions keep their place on the ring without receiving writes.

import { RingError } from './errors.ts';
import { ownersOf, type OwnerDesc, type PartitionDesc, type PartitionRingDesc, type PartitionState } from './partition-ring-desc.ts';
import { partitionTokens } from './tokens.ts';

/** Partition ids are kept below 2^20 so (token, id) packs exactly into one double for sorting. */
const MAX_PARTITION_ID = (1 << 20) - 1;

export class NoWritablePartitionError extends RingError {
  constructor(message: string) {
    super('no-active-partition', 'unavailable', message);
  }
}

/** Picks the partition of a series token among the partitions a writer may use. */
export interface PartitionLookup {
  partitionFor(token: number): number;
  /** The partition ids this lookup writes to, sorted. */
  readonly partitions: readonly number[];
  /** Why a partition takes no writes now (an owner over an instance limit: `<owner>: <reason>`); undefined when it does. */
  refusal(partition: number): string | undefined;
}

export class PartitionRing {
  private readonly tokens: Uint32Array;
  private readonly owner: Int32Array;
  private readonly sorted: PartitionDesc[];
  private readonly lookups = new Map<number, PartitionLookup>();

  readonly desc: PartitionRingDesc;

  private constructor(desc: PartitionRingDesc) {
    this.desc = desc;
    this.sorted = Object.values(desc.partitions).sort((a, b) => a.id - b.id);
    const n = this.sorted.length;
    const packed = new Float64Array(n * partitionTokens(0).length);
    let k = 0;
    for (const p of this.sorted) {
      if (!Number.isInteger(p.id) || p.id < 0 || p.id > MAX_PARTITION_ID) throw new Error(`invalid partition id ${p.id} in the ring`);
      for (const t of partitionTokens(p.id)) packed[k++] = t * (MAX_PARTITION_ID + 1) + p.id;
    }
    packed.sort();
    this.tokens = new Uint32Array(k);
    this.owner = new Int32Array(k);
    for (let i = 0; i < k; i++) {
      const id = packed[i] % (MAX_PARTITION_ID + 1);
      this.owner[i] = id;
      this.tokens[i] = (packed[i] - id) / (MAX_PARTITION_ID + 1);
    }
  }

  static fromDesc(desc: PartitionRingDesc): PartitionRing {
    return new PartitionRing(desc);
  }

  /** The ring of partitions 0..count-1, all ACTIVE: what writers use before any ring exists. */
  static allActive(count: number, now = 0): PartitionRing {
    const partitions: Record<string, PartitionDesc> = {};
    for (let id = 0; id < count; id++) partitions[id] = { id, state: 'ACTIVE', stateTimestamp: now };
    return new PartitionRing({ partitions, owners: {} });
  }

  get isEmpty(): boolean {
    return this.sorted.length === 0;
  }

  /** Every partition, sorted by id. */
  partitions(): readonly PartitionDesc[] {
    return this.sorted;
  }

  partitionIds(state?: PartitionState): number[] {
    return this.sorted.filter((p) => state === undefined || p.state === state).map((p) => p.id);
  }

  state(id: number): PartitionState | undefined {
    return this.desc.partitions[id]?.state;
  }

  owners(partition: number): OwnerDesc[] {
    return ownersOf(this.desc, partition);
  }

  allOwners(): OwnerDesc[] {
    return Object.values(this.desc.owners).sort((a, b) => a.id.localeCompare(b.id));
  }

  /**
   * The lookup a distributor writes with: ACTIVE partitions only, and of
   * those only ids below `partitionLimit` (Kafka's partition count: a ring
   * partition the topic does not have cannot take writes). Cached per limit.
   */
  writer(partitionLimit = Number.MAX_SAFE_INTEGER): PartitionLookup {
    let l = this.lookups.get(partitionLimit);
    if (!l) {
      l = this.lookup((p) => p.state === 'ACTIVE' && p.id < partitionLimit);
      this.lookups.set(partitionLimit, l);
    }
    return l;
  }

  /** A lookup over the partitions `accept` admits; it throws NoWritablePartitionError when none does. */
  lookup(accept: (p: PartitionDesc) => boolean): PartitionLookup {
    const ok = new Uint8Array(this.sorted.length === 0 ? 0 : this.sorted[this.sorted.length - 1].id + 1);
    const partitions: number[] = [];
    for (const p of this.sorted) {
      if (accept(p)) {
        ok[p.id] = 1;
        partitions.push(p.id);
      }
    }
    const { tokens, owner } = this;
    const n = tokens.length;
    const describe = () => this.describeStates();
    const refusals = new Map<number, string>();
    for (const o of this.allOwners()) if (o.overLimit !== undefined && !refusals.has(o.partition)) refusals.set(o.partition, `${o.id}: ${o.overLimit}`);
    return {
      partitions,
      refusal: (partition) => refusals.get(partition),
      partitionFor(token: number): number {
        if (partitions.length === 0) {
          throw new NoWritablePartitionError(
            `no ACTIVE partition in the ring to write to (${describe()}); retry once an ingester has made its partition ACTIVE`,
          );
        }
        if (partitions.length === 1) return partitions[0];
        const start = lowerBound(tokens, token >>> 0);
        for (let i = 0; i < n; i++) {
          const id = owner[(start + i) % n];
          if (ok[id] === 1) return id;
        }
        throw new Error('unreachable: a writable partition has no token');
      },
    };
  }

  /**
   * The share of the token space each partition would receive as the only
   * writable set `ids` (for the status page): the sum of the ranges ending at
   * its tokens, after skipping partitions outside `ids`.
   */
  ownership(ids: readonly number[]): Map<number, number> {
    const want = new Set(ids);
    const out = new Map<number, number>(ids.map((id) => [id, 0]));
    const n = this.tokens.length;
    if (want.size === 0 || n === 0) return out;
    // Walk backwards from each writable token to the previous writable token.
    let prev = -1;
    for (let i = n - 1; i >= 0 && prev < 0; i--) if (want.has(this.owner[i])) prev = this.tokens[i];
    for (let i = 0; i < n; i++) {
      if (!want.has(this.owner[i])) continue;
      const t = this.tokens[i];
      const span = t > prev ? t - prev : 2 ** 32 - prev + t;
      out.set(this.owner[i], out.get(this.owner[i])! + span / 2 ** 32);
      prev = t;
    }
    return out;
  }

  describeStates(): string {
    const count = { PENDING: 0, ACTIVE: 0, INACTIVE: 0 };
    for (const p of this.sorted) count[p.state]++;
    return `${count.ACTIVE} ACTIVE, ${count.PENDING} PENDING, ${count.INACTIVE} INACTIVE`;
  }
}

/** First index whose token is >= t, or 0 when t is past the last token (the ring wraps). */
function lowerBound(tokens: Uint32Array, t: number): number {
  let lo = 0;
  let hi = tokens.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (tokens[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo === tokens.length ? 0 : lo;
}
