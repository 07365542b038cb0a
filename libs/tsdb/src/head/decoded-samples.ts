// Decoded head samples, kept between queries within a byte budget, and the
// arena that an uncached head read copies samples into.
//
// A series' in-order float samples only ever grow at the end (appends are in
// time order; out-of-order ones live apart and are merged on read), so their
// decoded form can be kept as one timeline per series and extended by what was
// appended since: a read is then two views into it, with no decoding and no
// copy (in the query bench's profile the copy out of the earlier per-chunk
// cache was a third of a query's time, and the fresh memory it filled most of
// the GC). Samples once written into a timeline never change, so a view stays
// valid whatever happens to the cache later. 16 bytes per sample (timestamp
// and value as float64s) plus room to grow. Eviction is first in, first out,
// by series; an evicted series is decoded again the next time it is read. One
// cache serves every tenant's head of an ingester, so the budget is per process.

const EMPTY = new Float64Array(0);

/**
 * One series' in-order float samples, decoded, oldest first: [0, length) of the
 * arrays is filled (never rewritten), the rest is room for later appends.
 */
export class DecodedSamples {
  timestamps = EMPTY;
  values = EMPTY;
  length = 0;
  /** Set when the cache dropped it (or its series did): its bytes are no longer counted. */
  dropped = false;

  /** The series holding it: eviction clears its reference. */
  readonly owner: DecodedOwner;

  constructor(owner: DecodedOwner) {
    this.owner = owner;
  }

  get bytes(): number {
    return this.timestamps.length * DECODED_BYTES_PER_SAMPLE;
  }

  /** The newest timestamp held; -Infinity when empty. */
  get lastT(): number {
    return this.length === 0 ? -Infinity : this.timestamps[this.length - 1];
  }

  /** Room for `more` samples after the filled ones: new arrays when short (views of the old ones stay as they were). Returns the bytes it grew by. */
  reserve(more: number): number {
    const need = this.length + more;
    if (need <= this.timestamps.length) return 0;
    const before = this.bytes;
    // An eighth more than needed: a live series gains a sample per scrape, and each regrowth copies the timeline.
    const capacity = need + (need >> 3) + 8;
    // One buffer for both: an ArrayBuffer allocation (zero-filled, tracked by the GC) costs more than the copy.
    const buf = new ArrayBuffer(2 * 8 * capacity);
    const t = new Float64Array(buf, 0, capacity);
    const v = new Float64Array(buf, 8 * capacity, capacity);
    t.set(this.timestamps.subarray(0, this.length));
    // Same-type set() copies bytes: staleness markers keep their payload.
    v.set(this.values.subarray(0, this.length));
    this.timestamps = t;
    this.values = v;
    return this.bytes - before;
  }
}

/** What holds a series' decoded samples. */
export interface DecodedOwner {
  decoded: DecodedSamples | null;
}

const DECODED_BYTES_PER_SAMPLE = 16;

export class DecodedSamplesCache {
  private queue: DecodedSamples[] = [];
  private head = 0;
  private bytes = 0;
  /** Dropped timelines still in the queue past head. */
  private dead = 0;

  readonly maxBytes: number;

  /** maxBytes: decoded bytes kept (16 per sample and room to grow); 0 keeps none. */
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  get usedBytes(): number {
    return this.bytes;
  }

  /** A new, empty timeline for `owner`; reserve() gives it room and grew() counts it. */
  create(owner: DecodedOwner): DecodedSamples {
    const d = new DecodedSamples(owner);
    this.queue.push(d);
    return d;
  }

  /** Counts the bytes a timeline's reserve() added, then evicts the oldest over budget (maybe this one: take its views first). */
  grew(d: DecodedSamples, added: number): void {
    if (!d.dropped) this.bytes += added;
    this.evict();
  }

  /** Stops counting a timeline its series no longer holds, and lets its arrays go (views handed out keep theirs). */
  drop(d: DecodedSamples): void {
    if (d.dropped) return;
    d.dropped = true;
    this.bytes -= d.bytes;
    d.timestamps = d.values = EMPTY;
    d.length = 0;
    this.dead++;
  }

  private evict(): void {
    while (this.bytes > this.maxBytes && this.head < this.queue.length) {
      const d = this.queue[this.head++];
      if (d.dropped) {
        this.dead--;
        continue;
      }
      if (d.owner.decoded === d) d.owner.decoded = null;
      this.drop(d);
      this.dead--;
    }
    // Series drop theirs at every head truncation: sweep the queue once most of it is dead.
    if (this.dead > 1024 && this.dead * 2 > this.queue.length - this.head) {
      this.queue = this.queue.slice(this.head).filter((d) => !d.dropped);
      this.head = 0;
      this.dead = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }
}

/** The arena's first arrays hold this many samples, each later pair twice the last, up to ARENA_SAMPLES: a read of one series fills no megabyte. */
const ARENA_FIRST = 256;
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
      const size = Math.max(n, this.t.length === 0 ? ARENA_FIRST : Math.min(2 * this.t.length, ARENA_SAMPLES));
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
