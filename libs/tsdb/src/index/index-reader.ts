// Reads a block's `index` (format v2, ours or Prometheus') through a ByteSource.
// Keeps the "index header" in memory (TOC, symbols, postings offset table) and
// fetches series and postings with coalesced range reads. Never trusts a
// section whose CRC32C does not match.

import { compareUtf8, matcherFn, matcherSetValues, type Labels, type Matcher } from '@strata/model';
import { BlockFormatError, BlockUnsupportedError } from '../block/block-errors.ts';
import { readExactly, type ByteSource } from '../block/byte-source.ts';
import { crc32c } from '../encoding/crc32c.ts';
import { Decbuf } from '../encoding/encoding.ts';
import { INDEX_FORMAT_V2, INDEX_MAGIC, INDEX_TOC_LEN, SERIES_ALIGN, type ChunkMeta, type IndexToc } from './index-writer.ts';
import { EMPTY_POSTINGS, intersectPostings, subtractPostings, unionPostings } from './postings-list.ts';
import { postingsCache } from './postings-cache.ts';
import { Turns } from '../in-turns.ts';

/** Tells readers apart in the shared postings cache. */
let nextReaderId = 0;

/** Reads closer than this are merged into one. */
const COALESCE_GAP = 16 * 1024;
/** Guess of a series entry's size, for reading several in one go. */
const SERIES_SIZE_GUESS = 512;

export interface IndexSeriesEntry {
  /** Series reference: byte offset / 16. */
  id: number;
  labels: Labels;
  chunks: ChunkMeta[];
}

interface NameEntry {
  /** Sorted (byte order) label values; offsets[i]/ends[i] bound the postings list of values[i]. */
  values: string[];
  offsets: number[];
  ends: number[];
}

export class IndexReader {
  private readonly src: ByteSource;
  readonly size: number;
  readonly version: number;
  readonly toc: IndexToc;
  private readonly symbols: string[];
  private readonly byName: Map<string, NameEntry>;
  private readonly seriesEnd: number;
  private readonly readerId = nextReaderId++;

  private constructor(src: ByteSource, size: number, version: number, toc: IndexToc, symbols: string[], byName: Map<string, NameEntry>, seriesEnd: number) {
    this.src = src;
    this.size = size;
    this.version = version;
    this.toc = toc;
    this.symbols = symbols;
    this.byName = byName;
    this.seriesEnd = seriesEnd;
  }

  static async open(src: ByteSource): Promise<IndexReader> {
    const size = await src.size();
    if (size < 5 + INDEX_TOC_LEN) throw new BlockFormatError(`index: file of ${size} bytes is too small`);
    const header = await readExactly(src, 0, 5, 'index header');
    const magic = ((header[0] << 24) | (header[1] << 16) | (header[2] << 8) | header[3]) >>> 0;
    if (magic !== INDEX_MAGIC) throw new BlockFormatError(`index: bad magic 0x${magic.toString(16)}`);
    const version = header[4];
    if (version !== INDEX_FORMAT_V2) throw new BlockUnsupportedError(`index format version ${version} is not supported (only 2)`);

    const tocBytes = await readExactly(src, size - INDEX_TOC_LEN, INDEX_TOC_LEN, 'index TOC');
    const d = new Decbuf(tocBytes, 0, INDEX_TOC_LEN - 4, 'index TOC');
    checkCrc(tocBytes, 0, INDEX_TOC_LEN - 4, 'index TOC');
    const toc: IndexToc = {
      symbols: d.be64(),
      series: d.be64(),
      labelIndices: d.be64(),
      labelIndicesTable: d.be64(),
      postings: d.be64(),
      postingsTable: d.be64(),
    };
    const limit = size - INDEX_TOC_LEN;
    for (const [k, v] of Object.entries(toc)) {
      if (v > limit) throw new BlockFormatError(`index TOC: ${k} offset ${v} is past the end of the file`);
    }

    const symbols = await readSymbols(src, toc.symbols);
    const byName = await readPostingsOffsetTable(src, toc, limit);
    const after = [toc.labelIndices, toc.postings, toc.labelIndicesTable, toc.postingsTable].filter((o) => o > toc.series);
    const seriesEnd = after.length > 0 ? Math.min(...after) : limit;
    return new IndexReader(src, size, version, toc, symbols, byName, seriesEnd);
  }

  async close(): Promise<void> {
    await this.src.close?.();
  }

  /** Bytes the index header holds in memory (rough: strings count 2 bytes a char). */
  get headerBytes(): number {
    let n = 0;
    for (const s of this.symbols) n += 2 * s.length + 16;
    for (const [name, e] of this.byName) {
      n += 2 * name.length;
      for (const v of e.values) n += 2 * v.length + 32;
    }
    return n;
  }

  labelNames(): string[] {
    return Array.from(this.byName.keys())
      .filter((n) => n !== '')
      .sort(compareUtf8);
  }

  labelValues(name: string): string[] {
    if (name === '') return [];
    return this.byName.get(name)?.values.slice() ?? [];
  }

  /** IDs of all series in the index. */
  async allPostings(): Promise<Uint32Array> {
    return this.postings('', ['']);
  }

  /** Union of the postings of name=value for each value given (unknown values are skipped). */
  async postings(name: string, values: string[]): Promise<Uint32Array> {
    const e = this.byName.get(name);
    if (!e) return EMPTY_POSTINGS;
    const idx: number[] = [];
    for (const v of values) {
      const i = findValue(e.values, v);
      if (i >= 0) idx.push(i);
    }
    if (idx.length === 0) return EMPTY_POSTINGS;
    const lists: Uint32Array[] = [];
    const missing: { offset: number; end: number }[] = [];
    for (const i of idx) {
      const cached = postingsCache.get(this.cacheKey(e.offsets[i]));
      if (cached !== undefined) lists.push(cached);
      else missing.push({ offset: e.offsets[i], end: e.ends[i] });
    }
    for (const { offset, ids } of await this.readPostingsLists(missing)) {
      postingsCache.set(this.cacheKey(offset), ids);
      lists.push(ids);
    }
    return unionPostings(lists);
  }

  private cacheKey(offset: number): string {
    return `${this.readerId}:${offset}`;
  }

  /**
   * Series IDs matching all matchers, with Prometheus semantics: a matcher that
   * matches the empty string also selects series without that label. No
   * matchers selects every series.
   */
  async postingsForMatchers(matchers: Matcher[]): Promise<Uint32Array> {
    let result: Uint32Array | null = null;
    const subtract: { name: string; values: string[] }[] = [];
    // Positive matchers first: they narrow the set; the rest only remove.
    for (const m of matchers) {
      const fn = matcherFn(m);
      const e = this.byName.get(m.name);
      if (fn('')) {
        if (!e) continue;
        const bad = e.values.filter((v) => !fn(v));
        if (bad.length > 0) subtract.push({ name: m.name, values: bad });
        continue;
      }
      if (!e) return EMPTY_POSTINGS;
      const set = matcherSetValues(m);
      const good = set ? set.filter((v) => findValue(e.values, v) >= 0) : e.values.filter(fn);
      if (good.length === 0) return EMPTY_POSTINGS;
      const p = await this.postings(m.name, good);
      result = result === null ? p : intersectPostings(result, p);
      if (result.length === 0) return EMPTY_POSTINGS;
    }
    if (result === null) result = await this.allPostings();
    for (const s of subtract) {
      result = subtractPostings(result, await this.postings(s.name, s.values));
      if (result.length === 0) break;
    }
    return result;
  }

  /** Label sets and chunk metas of the given series (IDs sorted ascending), in that order. */
  async series(ids: Uint32Array | number[]): Promise<IndexSeriesEntry[]> {
    const out: IndexSeriesEntry[] = [];
    let i = 0;
    while (i < ids.length) {
      // One read covers a run of series that sit close together.
      const start = ids[i] * SERIES_ALIGN;
      let end = Math.min(start + SERIES_SIZE_GUESS, this.seriesEnd);
      let j = i + 1;
      while (j < ids.length && ids[j] * SERIES_ALIGN <= end + COALESCE_GAP && end - start < 8 * 1024 * 1024) {
        end = Math.min(ids[j] * SERIES_ALIGN + SERIES_SIZE_GUESS, this.seriesEnd);
        j++;
      }
      const buf = await this.src.read(start, end - start);
      for (let k = i; k < j; k++) out.push(await this.seriesAt(ids[k], buf, ids[k] * SERIES_ALIGN - start));
      i = j;
    }
    return out;
  }

  private async seriesAt(id: number, buf: Uint8Array, off: number): Promise<IndexSeriesEntry> {
    let b = buf;
    let p = off;
    let len = tryUvarint(b, p);
    if (len === null || p + len.bytes + len.value + 4 > b.length) {
      // The guess fell short: read this entry on its own.
      const head = await this.src.read(id * SERIES_ALIGN, 10);
      len = tryUvarint(head, 0);
      if (len === null) throw new BlockFormatError(`index: series ${id} has a bad length`);
      b = await readExactly(this.src, id * SERIES_ALIGN, len.bytes + len.value + 4, `index series ${id}`);
      p = 0;
    }
    const bodyStart = p + len.bytes;
    const bodyEnd = bodyStart + len.value;
    checkCrc(b, bodyStart, bodyEnd, `index series ${id}`);
    const d = new Decbuf(b, bodyStart, bodyEnd, `index series ${id}`);
    const nLabels = d.uvarint();
    const labels: Labels = new Array<Labels[number]>(nLabels);
    for (let k = 0; k < nLabels; k++) {
      const name = this.symbol(d.uvarint());
      const value = this.symbol(d.uvarint());
      labels[k] = { name, value };
    }
    const nChunks = d.uvarint();
    const chunks = new Array<ChunkMeta>(nChunks);
    let t0 = 0;
    let ref0 = 0;
    for (let k = 0; k < nChunks; k++) {
      let minTime: number;
      let ref: number;
      if (k === 0) {
        minTime = d.varint();
        const maxTime = minTime + d.uvarint();
        ref = d.uvarint();
        chunks[k] = { minTime, maxTime, ref };
        t0 = maxTime;
      } else {
        minTime = t0 + d.uvarint();
        const maxTime = minTime + d.uvarint();
        ref = ref0 + d.varint();
        chunks[k] = { minTime, maxTime, ref };
        t0 = maxTime;
      }
      ref0 = ref;
    }
    return { id, labels, chunks };
  }

  private symbol(i: number): string {
    const s = this.symbols[i];
    if (s === undefined) throw new BlockFormatError(`index: unknown symbol reference ${i}`);
    return s;
  }

  /** The lists at `ranges`, in offset order, each with its offset. */
  private async readPostingsLists(ranges: { offset: number; end: number }[]): Promise<{ offset: number; ids: Uint32Array }[]> {
    const sorted = ranges.slice().sort((a, b) => a.offset - b.offset);
    const out: { offset: number; ids: Uint32Array }[] = [];
    let i = 0;
    while (i < sorted.length) {
      const start = sorted[i].offset;
      let end = sorted[i].end;
      let j = i + 1;
      while (j < sorted.length && sorted[j].offset <= end + COALESCE_GAP && end - start < 16 * 1024 * 1024) {
        end = Math.max(end, sorted[j].end);
        j++;
      }
      const buf = await this.src.read(start, end - start);
      for (let k = i; k < j; k++) out.push({ offset: sorted[k].offset, ids: await this.postingsAt(sorted[k].offset, buf, sorted[k].offset - start) });
      i = j;
    }
    return out;
  }

  private async postingsAt(offset: number, buf: Uint8Array, p: number): Promise<Uint32Array> {
    let b = buf;
    let at = p;
    let len = p + 4 <= b.length ? be32(b, p) : -1;
    if (len < 0 || at + 4 + len + 4 > b.length) {
      const head = await readExactly(this.src, offset, 4, 'index postings');
      len = be32(head, 0);
      b = await readExactly(this.src, offset, 4 + len + 4, 'index postings');
      at = 0;
    }
    checkCrc(b, at + 4, at + 4 + len, 'index postings');
    const n = be32(b, at + 4);
    if (len !== 4 + 4 * n) throw new BlockFormatError(`index postings at ${offset}: ${len} bytes cannot hold ${n} entries`);
    const ids = new Uint32Array(n);
    let q = at + 8;
    for (let k = 0; k < n; k++, q += 4) ids[k] = be32(b, q);
    return ids;
  }
}

async function readSymbols(src: ByteSource, off: number): Promise<string[]> {
  const head = await readExactly(src, off, 4, 'index symbols');
  const len = be32(head, 0);
  const b = await readExactly(src, off, 4 + len + 4, 'index symbols');
  checkCrc(b, 4, 4 + len, 'index symbols');
  const d = new Decbuf(b, 4, 4 + len, 'index symbols');
  const n = d.be32();
  const symbols = new Array<string>(n);
  const turns = new Turns();
  for (let i = 0; i < n; i++) {
    if (turns.due()) await turns.next();
    symbols[i] = d.uvarintStr();
  }
  return symbols;
}

async function readPostingsOffsetTable(src: ByteSource, toc: IndexToc, limit: number): Promise<Map<string, NameEntry>> {
  const off = toc.postingsTable;
  const head = await readExactly(src, off, 4, 'index postings offset table');
  const len = be32(head, 0);
  const b = await readExactly(src, off, 4 + len + 4, 'index postings offset table');
  checkCrc(b, 4, 4 + len, 'index postings offset table');
  const d = new Decbuf(b, 4, 4 + len, 'index postings offset table');
  const n = d.be32();
  const byName = new Map<string, NameEntry>();
  const all: { e: NameEntry; i: number; offset: number }[] = [];
  const turns = new Turns();
  for (let k = 0; k < n; k++) {
    if (turns.due()) await turns.next();
    const keys = d.uvarint();
    if (keys !== 2) throw new BlockFormatError(`index postings offset table: entry with ${keys} keys (want 2)`);
    const name = d.uvarintStr();
    const value = d.uvarintStr();
    const offset = d.uvarint();
    let e = byName.get(name);
    if (!e) byName.set(name, (e = { values: [], offsets: [], ends: [] }));
    const i = e.values.length;
    if (i > 0 && compareUtf8(e.values[i - 1], value) >= 0) {
      throw new BlockFormatError(`index postings offset table: values of ${name} are not sorted`);
    }
    e.values.push(value);
    e.offsets.push(offset);
    e.ends.push(0);
    all.push({ e, i, offset });
  }
  // A list ends where the next one (by file position) starts; the last one
  // before the next section. Lists are re-read exactly if this guess is short.
  all.sort((a, b2) => a.offset - b2.offset);
  const lastStart = all.length > 0 ? all[all.length - 1].offset : toc.postings;
  const after = [toc.labelIndicesTable, toc.postingsTable, limit].filter((o) => o > lastStart);
  const regionEnd = Math.min(...after);
  for (let k = 0; k < all.length; k++) {
    all[k].e.ends[all[k].i] = k + 1 < all.length ? all[k + 1].offset : regionEnd;
  }
  return byName;
}

function findValue(values: string[], v: string): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareUtf8(values[mid], v);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

function be32(b: Uint8Array, p: number): number {
  return ((b[p] << 24) | (b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]) >>> 0;
}

/** Checks the big-endian CRC32C stored right after [start, end). */
function checkCrc(b: Uint8Array, start: number, end: number, what: string): void {
  if (end + 4 > b.length) throw new BlockFormatError(`${what}: checksum missing`);
  const want = be32(b, end);
  const got = crc32c(b, start, end);
  if (want !== got) throw new BlockFormatError(`${what}: checksum mismatch (stored 0x${want.toString(16)}, computed 0x${got.toString(16)})`);
}

function tryUvarint(b: Uint8Array, p: number): { value: number; bytes: number } | null {
  let value = 0;
  let mul = 1;
  for (let k = 0; k < 9 && p + k < b.length; k++) {
    const x = b[p + k];
    value += (x & 0x7f) * mul;
    if (x < 0x80) return { value, bytes: k + 1 };
    mul *= 128;
  }
  return null;
}
