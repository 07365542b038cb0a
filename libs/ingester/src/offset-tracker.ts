// Which Kafka offset may be committed: the first record whose samples are not
// all persisted in shipped blocks. A record is persisted once every sample in
// it is older than its tenant's persisted boundary (the head was truncated
// there after the blocks below it reached the bucket). Conservative: a record
// holding one late sample holds the commit back until that sample is shipped.
// Consecutive records of one tenant whose samples lie within a short span of
// data time share an entry, so a busy partition keeps a handful of entries per
// block range, not millions; entries live in typed arrays, no per-record objects.

export class OffsetTracker {
  private offsets = new Float64Array(1024);
  private maxTimes = new Float64Array(1024);
  private tenantOf = new Int32Array(1024);
  /** Newest sample time of an entry's first record: the entry takes records up to groupSpanMs past it. */
  private firstMaxTimes = new Float64Array(1024);
  private head = 0;
  private size = 0;
  private readonly tenantIds = new Map<string, number>();
  private readonly tenantNames: string[] = [];
  /** Next offset to consume (one past the last record tracked). */
  private next = -1;

  private readonly groupSpanMs: number;

  /** groupSpanMs: how much data time one entry may cover (0: one entry per record). */
  constructor(groupSpanMs = 0) {
    this.groupSpanMs = groupSpanMs;
  }

  get pending(): number {
    return this.size;
  }

  /** Records a consumed record: its offset, tenant and newest sample time (-Infinity for none). */
  add(offset: bigint, tenant: string, maxTime: number): void {
    let t = this.tenantIds.get(tenant);
    if (t === undefined) {
      t = this.tenantNames.length;
      this.tenantIds.set(tenant, t);
      this.tenantNames.push(tenant);
    }
    this.next = Number(offset) + 1;
    if (this.size > 0) {
      const last = (this.head + this.size - 1) % this.offsets.length;
      const first = this.firstMaxTimes[last];
      if (this.tenantOf[last] === t && (maxTime === -Infinity || maxTime - first <= this.groupSpanMs || first === -Infinity)) {
        // The entry keeps its first offset; its newest sample is the newest of all its records.
        this.maxTimes[last] = Math.max(this.maxTimes[last], maxTime);
        if (first === -Infinity) this.firstMaxTimes[last] = maxTime;
        return;
      }
    }
    if (this.size === this.offsets.length) this.grow();
    const i = (this.head + this.size) % this.offsets.length;
    this.offsets[i] = Number(offset);
    this.maxTimes[i] = maxTime;
    this.tenantOf[i] = t;
    this.firstMaxTimes[i] = maxTime;
    this.size++;
  }

  /**
   * Drops the persisted records at the front and returns the offset to commit
   * (the first record not persisted, or one past the last record), or null
   * when nothing was consumed yet.
   */
  committable(persistedBefore: (tenant: string) => number): bigint | null {
    const cache = new Map<number, number>();
    while (this.size > 0) {
      const i = this.head;
      const t = this.tenantOf[i];
      let bound = cache.get(t);
      if (bound === undefined) cache.set(t, (bound = persistedBefore(this.tenantNames[t])));
      const maxTime = this.maxTimes[i];
      if (!(maxTime === -Infinity || maxTime < bound)) break;
      this.head = (this.head + 1) % this.offsets.length;
      this.size--;
    }
    if (this.size > 0) return BigInt(this.offsets[this.head]);
    return this.next < 0 ? null : BigInt(this.next);
  }

  private grow(): void {
    const n = this.offsets.length;
    const offsets = new Float64Array(n * 2);
    const maxTimes = new Float64Array(n * 2);
    const tenantOf = new Int32Array(n * 2);
    const firstMaxTimes = new Float64Array(n * 2);
    for (let k = 0; k < this.size; k++) {
      const i = (this.head + k) % n;
      offsets[k] = this.offsets[i];
      maxTimes[k] = this.maxTimes[i];
      tenantOf[k] = this.tenantOf[i];
      firstMaxTimes[k] = this.firstMaxTimes[i];
    }
    this.offsets = offsets;
    this.maxTimes = maxTimes;
    this.tenantOf = tenantOf;
    this.firstMaxTimes = firstMaxTimes;
    this.head = 0;
  }
}
