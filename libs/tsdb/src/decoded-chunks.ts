// Decoded closed head chunks, kept between queries within a byte budget.
// A closed chunk never changes, so its decoded timestamps and values can be
// reused by every later query that reads it (dashboards re-run the same
// queries every refresh): the profile of the query bench had XOR decoding as
// the largest single cost. Eviction is first in, first out; an evicted chunk is
// decoded again the next time it is read. One cache serves every tenant's head
// of an ingester, so the budget is per process.

/** A decoded chunk: timestamps in [0, n), values in [n, 2n) of one array. */
export type DecodedChunk = Float64Array;

/** Where a decoded chunk is held: its owner's slot array and the chunk's bytes (identity), so eviction can clear it. */
interface Entry {
  slots: (DecodedChunk | null)[];
  decoded: DecodedChunk;
}

export class DecodedChunkCache {
  private readonly queue: Entry[] = [];
  private head = 0;
  private bytes = 0;

  /** maxBytes: decoded bytes kept (16 per sample); 0 keeps none. */
  constructor(readonly maxBytes: number) {}

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  get usedBytes(): number {
    return this.bytes;
  }

  /** Remembers that `slots` (a series' per-chunk array) now holds `decoded`; evicts the oldest entries over budget. */
  added(slots: (DecodedChunk | null)[], decoded: DecodedChunk): void {
    this.queue.push({ slots, decoded });
    this.bytes += decoded.byteLength;
    while (this.bytes > this.maxBytes && this.head < this.queue.length) {
      const e = this.queue[this.head++];
      this.bytes -= e.decoded.byteLength;
      // The chunk may have moved (truncation shifts slots) or gone: find it by identity.
      const i = e.slots.indexOf(e.decoded);
      if (i >= 0) e.slots[i] = null;
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }
}
