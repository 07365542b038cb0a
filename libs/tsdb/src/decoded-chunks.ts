// Decoded closed head chunks, kept between queries within a byte budget, and
// the arena that a head read copies samples into.
//
// A closed chunk never changes, so its decoded timestamps and values can be
// reused by every later query that reads it (dashboards re-run the same
// queries every refresh): in the query bench's profile XOR decoding was the
// largest single cost. Timestamps are kept as 32-bit offsets from the chunk's
// first one (a chunk spans at most a block range), 12 bytes per sample.
// Eviction is first in, first out; an evicted chunk is decoded again the next
// time it is read. One cache serves every tenant's head of an ingester, so the
// budget is per process.

/** A decoded chunk: the first timestamp, the others as offsets from it, and the values (bit-exact). */
export interface DecodedChunk {
  base: number;
  offsets: Int32Array;
  values: Float64Array;
}

interface Entry {
  /** The owning series' per-chunk slots: eviction clears the one holding `decoded`. */
  slots: (DecodedChunk | null)[];
  decoded: DecodedChunk;
}

const DECODED_BYTES_PER_SAMPLE = 12;

export class DecodedChunkCache {
  private readonly queue: Entry[] = [];
  private head = 0;
  private bytes = 0;

  readonly maxBytes: number;

  /** maxBytes: decoded bytes kept (12 per sample); 0 keeps none. */
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  get usedBytes(): number {
    return this.bytes;
  }

  /** Remembers that `slots` (a series' per-chunk array) now holds `decoded`; evicts the oldest entries over budget. */
  added(slots: (DecodedChunk | null)[], decoded: DecodedChunk): void {
    this.queue.push({ slots, decoded });
    this.bytes += decoded.values.length * DECODED_BYTES_PER_SAMPLE;
    while (this.bytes > this.maxBytes && this.head < this.queue.length) {
      const e = this.queue[this.head++];
      this.bytes -= e.decoded.values.length * DECODED_BYTES_PER_SAMPLE;
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

const ARENA_SAMPLES = 1 << 16;

/**
 * Where one head read puts its samples: large shared arrays handed out as
 * views, instead of two typed arrays per series (each an off-heap allocation
 * V8 has to account and collect; at 100,000 series that was a third of a
 * query's time in GC). The series of one read live and die together.
 */
export class SampleArena {
  private t = new Float64Array(0);
  private v = new Float64Array(0);
  private used = 0;
  private lastFrom = -1;

  /** Views of n free samples (timestamps, values). */
  take(n: number): { timestamps: Float64Array; values: Float64Array } {
    if (this.used + n > this.t.length) {
      const size = Math.max(n, ARENA_SAMPLES);
      this.t = new Float64Array(size);
      this.v = new Float64Array(size);
      this.used = 0;
    }
    this.lastFrom = this.used;
    this.used += n;
    return { timestamps: this.t.subarray(this.lastFrom, this.used), values: this.v.subarray(this.lastFrom, this.used) };
  }

  /** Gives back what the last take() did not use (it keeps its first n samples). */
  shrinkLast(n: number): void {
    if (this.lastFrom >= 0) this.used = this.lastFrom + n;
  }
}
