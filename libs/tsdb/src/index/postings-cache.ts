// Decoded postings lists of block indexes, shared by every index reader of the process, least
// recently used out first under a byte budget. A list is read, checked (CRC32C) and decoded once:
// at 3.3M series the postings of one metric name are 1.5M ids (6 MB) per block, and reading,
// checking and decoding them took ~45 ms per block on every query (the index cache of Mimir's
// store-gateway keeps postings for the same reason). Block files never change, so an entry
// never goes stale; a closed reader's entries age out.

/** What the process keeps, at most (index readers of the ingesters' local blocks and of the bucket store). */
const POSTINGS_CACHE_BYTES = 256 * 1024 * 1024;

export class PostingsCache {
  private readonly maxBytes: number;
  private readonly entries = new Map<string, Uint32Array>();
  private bytes = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get(key: string): Uint32Array | undefined {
    const v = this.entries.get(key);
    if (v !== undefined) {
      // Most recently used last: Map keeps insertion order.
      this.entries.delete(key);
      this.entries.set(key, v);
    }
    return v;
  }

  /** Keeps `ids` unless it alone would take more than a quarter of the budget. */
  set(key: string, ids: Uint32Array): void {
    if (ids.byteLength > this.maxBytes / 4 || this.entries.has(key)) return;
    this.entries.set(key, ids);
    this.bytes += ids.byteLength;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.byteLength;
    }
  }

  get sizeBytes(): number {
    return this.bytes;
  }
}

/** The process' one cache: every block's index reader shares the budget. */
export const postingsCache = new PostingsCache(POSTINGS_CACHE_BYTES);
