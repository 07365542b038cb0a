// A format-3 record's symbols table as one head sees it. Records repeat the same label
// names and values, so the head remembers each symbol by its bytes, with the string it
// holds for it and that string's hash: a known symbol costs one byte-hash probe per
// record, with no string made, no string-keyed map probe and nothing left to collect.

import { ByteStrings, grown } from '@strata/model';
import { stringHash } from '@strata/model';

/** Symbols remembered at most (about 40 bytes each besides their bytes); past either bound the table starts over. */
const MAX_SYMBOLS = 1 << 20;
const MAX_BYTES = 64 << 20;

/** A record's symbols bound to a head, by the record's reference (valid until the next record). */
export interface HeadSymbols {
  /** Each symbol as the head's own string where it holds one (series compare by identity first). */
  strings: string[];
  /** Each symbol's stringHash. */
  hashes: Int32Array;
  /** Each symbol's id among the symbols the head remembers: the same bytes, the same id, until `epoch` changes. */
  ids: Int32Array;
}

const utf8 = new TextDecoder();

export class RecordSymbols {
  private readonly known = new ByteStrings();
  private knownStrings: string[] = [];
  private knownHashes = new Int32Array(1024);
  /** The current record's symbols, and each one's id in `known`. */
  private readonly current: HeadSymbols = { strings: [], hashes: new Int32Array(1024), ids: new Int32Array(1024) };
  /** Counts forget(): symbol ids handed out before it mean nothing after it. */
  epoch = 0;

  /**
   * Binds a record's symbols: symbol i is bytes [start[i], end[i]) of `bytes`. A symbol
   * met for the first time is decoded and replaced by the head's copy (`held`) if it has one.
   */
  bind(bytes: Uint8Array, start: Int32Array, end: Int32Array, count: number, held: ReadonlyMap<string, string>): HeadSymbols {
    if (this.known.count > MAX_SYMBOLS || this.known.bytesUsed > MAX_BYTES) this.forget();
    const cur = this.current;
    if (count > cur.ids.length) {
      cur.ids = grown(cur.ids, count);
      cur.hashes = grown(cur.hashes, count);
    }
    for (let i = 0; i < count; i++) {
      const id = this.known.id(bytes, start[i], end[i]);
      if (this.known.added) {
        const decoded = utf8.decode(bytes.subarray(start[i], end[i]));
        const s = held.get(decoded) ?? decoded;
        if (id === this.knownHashes.length) this.knownHashes = grown(this.knownHashes, id + 1);
        this.knownStrings[id] = s;
        this.knownHashes[id] = stringHash(s);
      }
      cur.ids[i] = id;
      cur.strings[i] = this.knownStrings[id];
      cur.hashes[i] = this.knownHashes[id];
    }
    return cur;
  }

  /** Symbol `ref` of the current record is the head's string `s` from now on (a series was just created with it). */
  adopt(ref: number, s: string): void {
    this.current.strings[ref] = s;
    this.knownStrings[this.current.ids[ref]] = s;
  }

  /** Forgets every symbol (the head dropped strings it may still hold). */
  forget(): void {
    this.known.reset();
    this.knownStrings.length = 0;
    this.epoch++;
  }
}
