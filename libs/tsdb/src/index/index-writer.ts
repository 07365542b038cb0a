// Writes a block's `index` file in Prometheus' index format v2, laid out as
// Prometheus 2.x writes it: symbols, 16-byte aligned series, label indices,
// postings (all-postings key first), label offset table, postings offset
// table, TOC; every section CRC32C-checked. Series must arrive sorted.

import { compareUtf8 } from '@strata/model';
import { BufferedFileWriter } from '../block/buffered-file.ts';
import { BlockWriteError } from '../block/block-errors.ts';
import { crc32c } from '../encoding/crc32c.ts';
import { Encbuf } from '../encoding/encoding.ts';
import { Turns, forEachInTurns, sortInTurns } from '../in-turns.ts';

export const INDEX_MAGIC = 0xbaaad700;
export const INDEX_FORMAT_V2 = 2;
export const INDEX_TOC_LEN = 6 * 8 + 4;
export const SERIES_ALIGN = 16;

export interface ChunkMeta {
  /** First and last sample timestamps of the chunk (both inclusive). */
  minTime: number;
  maxTime: number;
  /** Segment index << 32 | offset in the segment file. */
  ref: number;
}

export interface IndexSeries {
  /** Label names and values in turn (name, value, name, value, …): a block's series all wait here until the index is written. */
  labels: readonly string[];
  chunks: ChunkMeta[];
}

export interface IndexToc {
  symbols: number;
  series: number;
  labelIndices: number;
  labelIndicesTable: number;
  postings: number;
  postingsTable: number;
}

/** Writes the index for `series` (sorted by labels, in byte order) to `path`. Returns the file size. */
export async function writeIndex(path: string, series: IndexSeries[]): Promise<number> {
  const f = await BufferedFileWriter.create(path);
  try {
    const size = await writeIndexTo(f, series);
    await f.close();
    return size;
  } catch (err) {
    await f.abort();
    throw err;
  }
}

/** Label name → value → the IDs of the series holding that pair, in series order. */
type Postings = Map<string, Map<string, number[]>>;

/** A postings offset table entry: where the postings list of name=value starts. */
interface PostingsEntry {
  name: string;
  value: string;
  offset: number;
}

async function writeIndexTo(f: BufferedFileWriter, series: IndexSeries[]): Promise<number> {
  const toc: IndexToc = { symbols: 0, series: 0, labelIndices: 0, labelIndicesTable: 0, postings: 0, postingsTable: 0 };
  const e = new Encbuf(1 << 16);
  e.putBE32(INDEX_MAGIC);
  e.putByte(INDEX_FORMAT_V2);
  f.write(e.get());

  toc.symbols = f.pos;
  const symbolIndex = await writeSymbols(f, e, series);
  toc.series = f.pos;
  const { postings, all } = await writeSeries(f, e, series, symbolIndex);
  const names = Array.from(postings.keys()).sort(compareUtf8);
  const sortedValues = new Map<string, string[]>();
  // A name like `instance` has a value per target: millions to sort, in turns.
  for (const n of names) sortedValues.set(n, await sortInTurns(Array.from((postings.get(n) as Map<string, number[]>).keys()), compareUtf8));
  toc.labelIndices = f.pos;
  const labelIndexOffsets = await writeLabelIndices(f, e, names, sortedValues, symbolIndex);
  toc.postings = f.pos;
  const table = await writePostings(f, e, names, sortedValues, postings, all);
  toc.labelIndicesTable = f.pos;
  writeLabelIndicesTable(f, e, names, labelIndexOffsets);
  toc.postingsTable = f.pos;
  await writePostingsTable(f, e, table);
  writeToc(f, e, toc);
  return f.pos;
}

/** Symbols: every label name and value, sorted by bytes, referenced by position. Returns each symbol's position. */
async function writeSymbols(f: BufferedFileWriter, e: Encbuf, series: IndexSeries[]): Promise<Map<string, number>> {
  // Prometheus' symbols include "" (from the all-postings key); keeping it makes our index byte-identical.
  const symbolSet = new Set<string>(['']);
  // Every label of every series: millions of set insertions for a big head, so in turns of the event loop.
  await forEachInTurns(series, (s) => {
    for (const symbol of s.labels) symbolSet.add(symbol);
  });
  const symbols = await sortInTurns(Array.from(symbolSet), compareUtf8);
  const symbolIndex = new Map<string, number>();
  e.reset();
  e.putBE32(0); // length, patched below
  e.putBE32(symbols.length);
  const turns = new Turns();
  for (let i = 0; i < symbols.length; i++) {
    if (turns.due()) await turns.next();
    symbolIndex.set(symbols[i], i);
    e.putUvarintStr(symbols[i]);
  }
  writeSection(f, e);
  return symbolIndex;
}

/**
 * Series, each 16-byte aligned; its ID is offset / 16. Postings are gathered on the way (`all`: every ID).
 * The series come sorted and unique (BlockBuilder refuses them otherwise).
 */
async function writeSeries(
  f: BufferedFileWriter,
  e: Encbuf,
  series: IndexSeries[],
  symbolIndex: Map<string, number>,
): Promise<{ postings: Postings; all: number[] }> {
  const postings: Postings = new Map();
  const all: number[] = [];
  const body = new Encbuf(1024);
  const turns = new Turns();
  for (const s of series) {
    if (turns.due()) await turns.next();
    f.pad(SERIES_ALIGN);
    if (f.pos / SERIES_ALIGN > 0xffffffff) throw new BlockWriteError('index series section exceeds 64GiB');
    const id = f.pos / SERIES_ALIGN;
    all.push(id);
    body.reset();
    const flat = s.labels;
    body.putUvarint(flat.length >>> 1);
    for (let i = 0; i < flat.length; i += 2) {
      body.putUvarint(symbolIndex.get(flat[i]) as number);
      body.putUvarint(symbolIndex.get(flat[i + 1]) as number);
      addPosting(postings, flat[i], flat[i + 1], id);
    }
    putChunkMetas(body, s.chunks);
    e.reset();
    e.putUvarint(body.len);
    e.putBytes(body.get());
    e.putBE32(crc32c(body.get()));
    f.write(e.get());
    if (f.needsFlush) await f.flush();
  }
  return { postings, all };
}

function addPosting(postings: Postings, name: string, value: string, id: number): void {
  let byValue = postings.get(name);
  if (!byValue) postings.set(name, (byValue = new Map<string, number[]>()));
  let ids = byValue.get(value);
  if (!ids) byValue.set(value, (ids = []));
  ids.push(id);
}

/** A series' chunk metas: the first with its absolute times and ref, the rest as deltas from the one before. */
function putChunkMetas(body: Encbuf, chunks: ChunkMeta[]): void {
  body.putUvarint(chunks.length);
  let t0 = 0;
  let ref0 = 0;
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks[i];
    if (c.maxTime < c.minTime) throw new BlockWriteError(`chunk maxTime ${c.maxTime} < minTime ${c.minTime}`);
    if (i === 0) {
      body.putVarint(c.minTime);
      body.putUvarint(c.maxTime - c.minTime);
      body.putUvarint(c.ref);
    } else {
      if (c.minTime <= t0) throw new BlockWriteError(`chunk minTime ${c.minTime} is not after the previous chunk's maxTime ${t0}`);
      body.putUvarint(c.minTime - t0);
      body.putUvarint(c.maxTime - c.minTime);
      body.putVarint(c.ref - ref0);
    }
    t0 = c.maxTime;
    ref0 = c.ref;
  }
}

/** Label indices (unused by v2 readers, still written by Prometheus 2.x): one per name. Returns their offsets. */
async function writeLabelIndices(
  f: BufferedFileWriter,
  e: Encbuf,
  names: string[],
  sortedValues: Map<string, string[]>,
  symbolIndex: Map<string, number>,
): Promise<number[]> {
  const labelIndexOffsets: number[] = [];
  const turns = new Turns();
  for (const n of names) {
    f.pad(4);
    labelIndexOffsets.push(f.pos);
    const values = sortedValues.get(n) as string[];
    e.reset();
    e.putBE32(0);
    e.putBE32(1);
    e.putBE32(values.length);
    for (const v of values) {
      if (turns.due()) await turns.next();
      e.putBE32(symbolIndex.get(v) as number);
    }
    writeSection(f, e);
    if (f.needsFlush) await f.flush();
  }
  return labelIndexOffsets;
}

/** Postings lists, 4-byte aligned, in postings offset table order (the all-postings key first). Returns that table. */
async function writePostings(
  f: BufferedFileWriter,
  e: Encbuf,
  names: string[],
  sortedValues: Map<string, string[]>,
  postings: Postings,
  all: number[],
): Promise<PostingsEntry[]> {
  f.pad(4);
  const table: PostingsEntry[] = [];
  writePostingsList(f, e, table, '', '', all);
  const turns = new Turns();
  for (const n of names) {
    const byValue = postings.get(n) as Map<string, number[]>;
    for (const v of sortedValues.get(n) as string[]) {
      if (turns.due()) await turns.next();
      writePostingsList(f, e, table, n, v, byValue.get(v) as number[]);
      if (f.needsFlush) await f.flush();
    }
  }
  return table;
}

function writePostingsList(f: BufferedFileWriter, e: Encbuf, table: PostingsEntry[], name: string, value: string, ids: number[]): void {
  f.pad(4);
  table.push({ name, value, offset: f.pos });
  e.reset();
  e.putBE32(0);
  e.putBE32(ids.length);
  for (const id of ids) e.putBE32(id);
  writeSection(f, e);
}

function writeLabelIndicesTable(f: BufferedFileWriter, e: Encbuf, names: string[], labelIndexOffsets: number[]): void {
  e.reset();
  e.putBE32(0);
  e.putBE32(names.length);
  names.forEach((n, i) => {
    e.putUvarint(1);
    e.putUvarintStr(n);
    e.putUvarint(labelIndexOffsets[i]);
  });
  writeSection(f, e);
}

async function writePostingsTable(f: BufferedFileWriter, e: Encbuf, table: PostingsEntry[]): Promise<void> {
  e.reset();
  e.putBE32(0);
  e.putBE32(table.length);
  const turns = new Turns();
  for (const t of table) {
    if (turns.due()) await turns.next();
    e.putUvarint(2);
    e.putUvarintStr(t.name);
    e.putUvarintStr(t.value);
    e.putUvarint(t.offset);
  }
  writeSection(f, e);
}

function writeToc(f: BufferedFileWriter, e: Encbuf, toc: IndexToc): void {
  e.reset();
  e.putBE64(toc.symbols);
  e.putBE64(toc.series);
  e.putBE64(toc.labelIndices);
  e.putBE64(toc.labelIndicesTable);
  e.putBE64(toc.postings);
  e.putBE64(toc.postingsTable);
  e.putBE32(crc32c(e.get()));
  f.write(e.get());
}

/** `e` holds a 4-byte length placeholder then the body: patch the length, append the body's CRC, write. */
function writeSection(f: BufferedFileWriter, e: Encbuf): void {
  const bodyLen = e.len - 4;
  if (bodyLen > 0xffffffff) throw new BlockWriteError('index section exceeds 4GiB');
  e.setBE32(0, bodyLen);
  e.putBE32(crc32c(e.buf, 4, 4 + bodyLen));
  f.write(e.get());
}
