// Kafka record format 3: one partition's float series as a remote write 2.0 Request
// (`io.prometheus.write.v2.Request`: a symbols table, each series' labels as pairs of
// references into it), as Mimir's record format v2. Label names repeat in every series
// and values repeat across a target's series (job, instance, cpu, mode), so each string
// crosses Kafka once per record and each ingester decodes, hashes and compares it once
// per record instead of once per series.
//
// Only series of labels and float samples are symbolized (`symbolizeSeries` answers
// undefined otherwise): a record with exemplars, native histograms or metadata stays a
// 1.0 WriteRequest (format 2), which ingesters keep reading.

import { decodeWriteRequest, type DecodedWriteRequest } from './decode-record.ts';
import { grown } from '@strata/model';
import { LabelPairs, PAIR_PLAIN } from './label-pairs.ts';
import { badProtobuf } from './errors.ts';
import { TAG_TIMESERIES_LABELS, TAG_TIMESERIES_SAMPLES, TAG_SAMPLE_START_TIMESTAMP, TAG_SAMPLE_TIMESTAMP, TAG_SAMPLE_VALUE, WT_SAMPLE } from './messages.ts';
import {
  TAG_V2_REQUEST_SYMBOLS,
  TAG_V2_REQUEST_TIMESERIES,
  TAG_V2_TS_LABELS_REFS_PACKED,
  TAG_V2_TS_LABELS_REFS_VARINT,
  TAG_V2_TS_SAMPLES,
  WT_V2_REQUEST,
  WT_V2_TIMESERIES,
} from './v2-messages.ts';
import { LITTLE_ENDIAN, ProtoReader, ProtoWriter, WIRE_FIXED64, WIRE_VARINT } from './wire.ts';

/** Where a double's high and low 32 bits sit when its bytes are read as two Int32 words. */
const HI_WORD = LITTLE_ENDIAN ? 1 : 0;
const LO_WORD = 1 - HI_WORD;

/**
 * Series a Symbolizer already knows the label pairs of: series i's labels are pair ids
 * ids[runs[i] + 1 .. runs[i] + 1 + ids[runs[i]]) of the table it was given (a count, then
 * the ids), or runs[i] is -1 and its label fields are looked up.
 */
export interface KnownPairs {
  runs: readonly number[];
  ids: Int32Array;
}

/**
 * Writes record format 3 from 1.0 TimeSeries message bodies, one record at a time. The
 * label pairs it meets stay in `pairs` across records (up to their bound), so a record mostly
 * finds its pairs rather than adding them; each record numbers the strings it uses anew.
 */
export class Symbolizer {
  readonly pairs: LabelPairs;
  /** The record a string id was last numbered in, its number there, and the record's ids in number order. */
  private epoch = 0;
  private idEpoch = new Int32Array(1024);
  private idRef = new Int32Array(1024);
  private recordIds = new Int32Array(1024);
  private recordSymbols = 0;
  private body = new Uint8Array(64 * 1024);
  private labelRefs = new Int32Array(64);
  private sampleSpans = new Int32Array(64);
  /** The series being symbolized: its label references in labelRefs, its Sample fields' [start, end) in sampleSpans. */
  private labels = 0;
  private spans = 0;

  constructor(pairs = new LabelPairs()) {
    this.pairs = pairs;
  }

  /**
   * One record value in format 3, or undefined when a series holds anything but labels and
   * float samples (exemplars, native histograms, unknown fields): such a record is written
   * as a 1.0 WriteRequest. Samples are copied byte for byte (2.0's Sample has 1.0's field
   * numbers). Without `known` the pair table may start over first; with it, it must not:
   * the ids in `known` came from it.
   */
  symbolize(series: readonly Uint8Array[], known?: KnownPairs): Buffer | undefined {
    this.beginRecord(known === undefined);
    let len = 0;
    for (let si = 0; si < series.length; si++) {
      const ts = series[si];
      const run = known === undefined ? -1 : known.runs[si];
      this.labels = run >= 0 ? this.knownRefs(known!.ids, run) : 0;
      if (!this.scanFields(ts, run < 0)) return undefined;
      len = this.putSeries(ts, len);
    }
    return this.withSymbols(len);
  }

  /** A new record: string ids numbered anew (string id 0, "", first), the pair table trimmed unless the caller holds ids of it. */
  private beginRecord(trim: boolean): void {
    if (trim) this.pairs.trim();
    if (this.epoch === 0x7fffffff) {
      this.idEpoch.fill(0);
      this.epoch = 0;
    }
    this.epoch++;
    this.recordSymbols = 0;
    this.recordRef(0);
  }

  /** A known series' label references from its run of pair ids in `ids`, written to labelRefs; returns how many. */
  private knownRefs(ids: Int32Array, run: number): number {
    const pairs = this.pairs;
    const count = ids[run];
    let labelRefs = this.labelRefs;
    if (2 * count > labelRefs.length) labelRefs = this.labelRefs = grown(labelRefs, 2 * count);
    let labels = 0;
    for (let k = run + 1; k <= run + count; k++) {
      labelRefs[labels++] = this.recordRef(pairs.nameId[ids[k]]);
      labelRefs[labels++] = this.recordRef(pairs.valueId[ids[k]]);
    }
    return labels;
  }

  /**
   * Walks a 1.0 TimeSeries body: its label pairs looked up (when `lookUp`) into labelRefs after
   * the `labels` there, its Sample fields' byte spans into sampleSpans (`spans`). False when it
   * holds any other field or a pair that is not plain: the record stays a 1.0 WriteRequest.
   */
  private scanFields(ts: Uint8Array, lookUp: boolean): boolean {
    const pairs = this.pairs;
    const n = ts.length;
    let labelRefs = this.labelRefs;
    let sampleSpans = this.sampleSpans;
    let labels = this.labels;
    let spans = 0;
    let pos = 0;
    while (pos < n) {
      const tag = ts[pos];
      const fieldStart = pos;
      const fieldLen = readLength(ts, pos + 1, n);
      if (fieldLen < 0) return false;
      const end = readAt + fieldLen;
      if (tag === TAG_TIMESERIES_LABELS) {
        if (lookUp) {
          if (labels + 2 > labelRefs.length) labelRefs = this.labelRefs = grown(labelRefs, labels + 2);
          const p = pairs.id(ts, readAt, end);
          if ((pairs.flags[p] & PAIR_PLAIN) === 0) return false;
          labelRefs[labels++] = this.recordRef(pairs.nameId[p]);
          labelRefs[labels++] = this.recordRef(pairs.valueId[p]);
        }
      } else if (tag === TAG_TIMESERIES_SAMPLES) {
        if (spans + 2 > sampleSpans.length) sampleSpans = this.sampleSpans = grown(sampleSpans, spans + 2);
        sampleSpans[spans++] = fieldStart;
        sampleSpans[spans++] = end;
      } else {
        return false;
      }
      pos = end;
    }
    this.labels = labels;
    this.spans = spans;
    return true;
  }

  /** The scanned series as a 2.0 TimeSeries at `len` of the body; returns the length after it. */
  private putSeries(ts: Uint8Array, len: number): number {
    const labels = this.labels;
    const spans = this.spans;
    const labelRefs = this.labelRefs;
    const sampleSpans = this.sampleSpans;
    let samplesBytes = 0;
    for (let i = 0; i < spans; i += 2) samplesBytes += sampleSpans[i + 1] - sampleSpans[i];
    let refsBytes = 0;
    for (let i = 0; i < labels; i++) refsBytes += varintSize(labelRefs[i]);
    const tsLen = (labels > 0 ? 1 + varintSize(refsBytes) + refsBytes : 0) + samplesBytes;
    const need = len + 1 + varintSize(tsLen) + tsLen;
    let body = this.body;
    if (need > body.length) body = this.body = grown(body, need);
    body[len++] = TAG_V2_REQUEST_TIMESERIES;
    len = putVarint(body, len, tsLen);
    if (labels > 0) {
      body[len++] = TAG_V2_TS_LABELS_REFS_PACKED;
      len = putVarint(body, len, refsBytes);
      for (let i = 0; i < labels; i++) len = putVarint(body, len, labelRefs[i]);
    }
    // Copied a byte at a time: a sample is a dozen bytes, less than a subarray view costs.
    for (let i = 0; i < spans; i += 2) for (let k = sampleSpans[i], e = sampleSpans[i + 1]; k < e; k++) body[len++] = ts[k];
    return len;
  }

  /** The record value: the symbols first, so a reader resolves references as it meets them, then the body's `len` bytes. */
  private withSymbols(len: number): Buffer {
    const strings = this.pairs.strings;
    let symbolsLen = 0;
    for (let r = 0; r < this.recordSymbols; r++) {
      const n = strings.length(this.recordIds[r]);
      symbolsLen += 1 + varintSize(n) + n;
    }
    const out = Buffer.allocUnsafe(symbolsLen + len);
    let pos = 0;
    for (let r = 0; r < this.recordSymbols; r++) {
      const id = this.recordIds[r];
      out[pos++] = TAG_V2_REQUEST_SYMBOLS;
      pos = putVarint(out, pos, strings.length(id));
      pos = strings.copy(id, out, pos);
    }
    out.set(this.body.subarray(0, len), pos);
    return out;
  }

  /** The record's reference of string id `g`, numbered on first use in the record. */
  private recordRef(g: number): number {
    if (g >= this.idEpoch.length) {
      this.idEpoch = grown(this.idEpoch, g + 1);
      this.idRef = grown(this.idRef, g + 1);
    }
    if (this.idEpoch[g] === this.epoch) return this.idRef[g];
    if (this.recordSymbols === this.recordIds.length) this.recordIds = grown(this.recordIds, this.recordSymbols + 1);
    this.idEpoch[g] = this.epoch;
    this.idRef[g] = this.recordSymbols;
    this.recordIds[this.recordSymbols] = g;
    return this.recordSymbols++;
  }
}

const shared = new Symbolizer();

/** Symbolizer.symbolize on a process-wide symbolizer, for tools and tests (the distributor has its own). */
export function symbolizeSeries(series: readonly Uint8Array[]): Buffer | undefined {
  return shared.symbolize(series);
}

/** Bytes of a varint below 2^31 (lengths and references). */
function varintSize(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** Writes a varint below 2^31; returns the position after it. */
function putVarint(b: Uint8Array, pos: number, v: number): number {
  while (v >= 0x80) {
    b[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  b[pos++] = v;
  return pos;
}

/** Where the bytes after the last length readLength read start. */
let readAt = 0;

/** A length (varint) at `pos` that fits before `end` (readAt: the position after it), or -1. */
function readLength(b: Uint8Array, pos: number, end: number): number {
  let v = 0;
  for (let shift = 0; shift < 28 && pos < end; shift += 7) {
    const x = b[pos++];
    v |= (x & 0x7f) << shift;
    if (x < 0x80) {
      readAt = pos;
      return v <= end - pos ? v : -1;
    }
  }
  return -1;
}

/**
 * A decoded format-3 record. Symbol i is bytes [symbolStart[i], symbolEnd[i]) of `bytes`
 * (UTF-8; symbolString makes it a string). Series i's labels are refs[refEnd[i-1] ..
 * refEnd[i]) (0 for i = 0), name and value references into the symbols in turn; its
 * samples are [sampleEnd[i-1], sampleEnd[i]) of `timestamps` and `values` (value bits as
 * sent). The arrays are the decoder's own, valid until its next decode.
 */
export interface SymbolizedRecord {
  bytes: Uint8Array;
  symbols: number;
  symbolStart: Int32Array;
  symbolEnd: Int32Array;
  series: number;
  refs: Uint32Array;
  refEnd: Int32Array;
  timestamps: Float64Array;
  values: Float64Array;
  sampleEnd: Int32Array;
  /** Each sample's start (created) timestamp, 0 where it has none; undefined when no sample of the record has one. */
  starts: Float64Array | undefined;
}

const utf8 = new TextDecoder();

/** Symbol `i` of a decoded record as a string. */
export function symbolString(r: SymbolizedRecord, i: number): string {
  return utf8.decode(r.bytes.subarray(r.symbolStart[i], r.symbolEnd[i]));
}

const MSG_REQUEST = 'Request';
const MSG_SERIES = 'TimeSeries';
const MSG_SAMPLE = 'Sample';

/**
 * Decodes format-3 records into arrays it reuses (one decoder per consumer, one record at a
 * time): past the arrays' growth, a record costs one small object, never a string or array.
 */
export class SymbolizedDecoder {
  private refs = new Uint32Array(16 * 1024);
  private refEnd = new Int32Array(1024);
  private sampleEnd = new Int32Array(1024);
  private symbolStart = new Int32Array(1024);
  private symbolEnd = new Int32Array(1024);
  private timestamps = new Float64Array(1024);
  private starts = new Float64Array(0);
  /** A sample of the record being decoded had a start timestamp: from then on every sample writes starts. */
  private anyStart = false;
  private words = new Int32Array(2048);
  private values = new Float64Array(this.words.buffer);
  private bounds = new Int32Array(2048);
  /** The series count readBounds found. */
  private seriesCount = 0;

  /** Throws RemoteWriteError 'bad-protobuf' on malformed input or a reference outside the table. */
  decode(buf: Uint8Array): SymbolizedRecord {
    const r = new ProtoReader(buf);
    const symbols = this.readBounds(r, buf.length);
    const series = this.seriesCount;
    if (series > this.refEnd.length) {
      this.refEnd = grown(this.refEnd, series);
      this.sampleEnd = grown(this.sampleEnd, series);
    }
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.anyStart = false;
    for (let i = 0; i < series; i++) this.readSeries(r, view, i, symbols);
    return {
      bytes: buf,
      symbols,
      symbolStart: this.symbolStart,
      symbolEnd: this.symbolEnd,
      series,
      refs: this.refs,
      refEnd: this.refEnd,
      timestamps: this.timestamps,
      values: this.values,
      sampleEnd: this.sampleEnd,
      starts: this.anyStart ? this.starts : undefined,
    };
  }

  /** The Request's symbols (their spans) and series bounds, in order; returns the symbol count (seriesCount: the series). */
  private readBounds(r: ProtoReader, end: number): number {
    let symbols = 0;
    let series = 0;
    while (r.pos < end) {
      const tag = r.tag(end, MSG_REQUEST);
      if (tag === TAG_V2_REQUEST_SYMBOLS) {
        const e = r.len(end, 4, MSG_REQUEST);
        if (symbols === this.symbolStart.length) {
          this.symbolStart = grown(this.symbolStart, symbols + 1);
          this.symbolEnd = grown(this.symbolEnd, symbols + 1);
        }
        this.symbolStart[symbols] = r.pos;
        this.symbolEnd[symbols] = e;
        symbols++;
        r.pos = e;
      } else if (tag === TAG_V2_REQUEST_TIMESERIES) {
        const e = r.len(end, 5, MSG_REQUEST);
        if (2 * series + 2 > this.bounds.length) this.bounds = grown(this.bounds, 2 * series + 2);
        this.bounds[2 * series] = r.pos;
        this.bounds[2 * series + 1] = e;
        series++;
        r.pos = e;
      } else {
        r.skip(tag, end, MSG_REQUEST, WT_V2_REQUEST);
      }
    }
    this.seriesCount = series;
    return symbols;
  }

  /** Series `i`: its references and samples after series i - 1's, their ends in refEnd[i] and sampleEnd[i]. */
  private readSeries(r: ProtoReader, view: DataView, i: number, symbols: number): void {
    const bytes = r.bytes;
    r.pos = this.bounds[2 * i];
    const seriesEnd = this.bounds[2 * i + 1];
    const firstRef = i === 0 ? 0 : this.refEnd[i - 1];
    let refs = firstRef;
    let samples = i === 0 ? 0 : this.sampleEnd[i - 1];
    while (r.pos < seriesEnd) {
      const tag = r.tag(seriesEnd, MSG_SERIES);
      if (tag === TAG_V2_TS_LABELS_REFS_PACKED) {
        const e = r.len(seriesEnd, 1, MSG_SERIES);
        // A reference per byte at most: room for all of them before the loop.
        if (refs + (e - r.pos) > this.refs.length) this.refs = grown(this.refs, refs + (e - r.pos));
        refs = this.packedRefs(bytes, r, e, refs, symbols);
      } else if (tag === TAG_V2_TS_LABELS_REFS_VARINT) {
        if (refs === this.refs.length) this.refs = grown(this.refs, refs + 1);
        this.refs[refs++] = symbolRef(r.uvarint(seriesEnd, 1, MSG_SERIES), symbols, r);
      } else if (tag === TAG_V2_TS_SAMPLES) {
        const e = r.len(seriesEnd, 2, MSG_SERIES);
        if (samples === this.timestamps.length) this.growSamples(samples + 1);
        if (this.plainSample(bytes, view, r.pos, e, samples)) {
          if (this.anyStart) this.starts[samples] = 0;
        } else {
          this.sample(view, r, e, samples);
        }
        r.pos = e;
        samples++;
      } else {
        // Exemplars, histograms and metadata never reach format 3 (symbolizeSeries refuses them).
        if (tag >>> 3 >= 3 && tag >>> 3 <= 5) throw badProtobuf(`field ${tag >>> 3} of ${MSG_SERIES} in a format-3 record at byte ${r.fieldStart}`);
        r.skip(tag, seriesEnd, MSG_SERIES, WT_V2_TIMESERIES);
      }
    }
    if ((refs - firstRef) % 2 !== 0) throw badProtobuf(`odd number of label references in series ${i} of a format-3 record`);
    this.refEnd[i] = refs;
    this.sampleEnd[i] = samples;
  }

  private growSamples(n: number): void {
    this.timestamps = grown(this.timestamps, n);
    if (this.anyStart) this.starts = grown(this.starts, n);
    this.words = grown(this.words, 2 * n);
    this.values = new Float64Array(this.words.buffer);
  }

  /**
   * The packed references in [r.pos, end) appended to this.refs from `n` (room made by the
   * caller); returns the new count. Read a byte at a time here: a call per varint cost
   * a third of the decoding.
   */
  private packedRefs(b: Uint8Array, r: ProtoReader, end: number, n: number, symbols: number): number {
    const out = this.refs;
    let p = r.pos;
    while (p < end) {
      // References below 2^14 (1 or 2 bytes) are the rule: a table that large is a large record.
      const x = b[p++];
      let v = x;
      if (x >= 0x80) {
        const y = b[p++];
        v = (x & 0x7f) | (y << 7);
        if (y >= 0x80) {
          v = this.longRef(b, r, p - 2, end);
          p = r.pos;
        }
      }
      if (p > end) {
        r.pos = end;
        throw badProtobuf(`truncated label reference in ${MSG_SERIES} at byte ${end}`);
      }
      if (v >= symbols) {
        r.pos = p;
        throw badProtobuf(`label reference ${v} outside the ${symbols} symbols of a format-3 record at byte ${p}`);
      }
      out[n++] = v;
    }
    r.pos = p;
    return n;
  }

  /** A reference of 3 to 5 varint bytes at `p` (r.pos: the byte after it). */
  private longRef(b: Uint8Array, r: ProtoReader, p: number, end: number): number {
    let v = 0;
    for (let shift = 0; shift <= 28; shift += 7) {
      if (p >= end) break;
      const x = b[p++];
      v += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) {
        r.pos = p;
        return v;
      }
    }
    r.pos = p;
    throw badProtobuf(`malformed label reference in ${MSG_SERIES} at byte ${p}`);
  }

  /**
   * A Sample laid out as writers write it (value, then a timestamp of at most 7 varint bytes,
   * nothing else) read into sample `k`; false for any other layout, which sample() reads.
   */
  private plainSample(b: Uint8Array, view: DataView, p: number, end: number, k: number): boolean {
    if (end - p < 11 || b[p] !== TAG_SAMPLE_VALUE || b[p + 9] !== TAG_SAMPLE_TIMESTAMP) return false;
    let q = p + 10;
    let x = b[q++];
    let t = x & 0x7f;
    for (let mul = 128; x >= 0x80; mul *= 128) {
      if (q >= end || q - p > 16) return false;
      x = b[q++];
      t += (x & 0x7f) * mul;
    }
    if (q !== end) return false;
    this.timestamps[k] = t;
    // As two words, never a JS number: NaN payloads such as the stale marker survive.
    this.words[2 * k + LO_WORD] = view.getInt32(p + 1, true);
    this.words[2 * k + HI_WORD] = view.getInt32(p + 5, true);
    return true;
  }

  /** Sample `k` from the Sample message at [r.pos, end), any field order. */
  private sample(view: DataView, r: ProtoReader, end: number, k: number): void {
    let hi = 0;
    let lo = 0;
    // Written in place: a timestamp returned from a call that is not inlined is boxed, once per sample.
    this.timestamps[k] = 0;
    if (this.anyStart) this.starts[k] = 0;
    while (r.pos < end) {
      const st = r.tag(end, MSG_SAMPLE);
      if (st === TAG_SAMPLE_VALUE) {
        if (end - r.pos < 8) throw badProtobuf(`truncated fixed64 field 1 of ${MSG_SAMPLE} at byte ${r.pos}`);
        lo = view.getInt32(r.pos, true);
        hi = view.getInt32(r.pos + 4, true);
        r.pos += 8;
      } else if (st === TAG_SAMPLE_TIMESTAMP) {
        r.int64Into(this.timestamps, k, end, 2, MSG_SAMPLE);
      } else if (st === TAG_SAMPLE_START_TIMESTAMP) {
        this.startAt(k);
        r.int64Into(this.starts, k, end, 3, MSG_SAMPLE);
      } else {
        r.skip(st, end, MSG_SAMPLE, WT_SAMPLE);
      }
    }
    this.words[2 * k + HI_WORD] = hi;
    this.words[2 * k + LO_WORD] = lo;
  }

  /** Sample `k` has a start timestamp: the first of the record makes room and zeroes the samples before it. */
  private startAt(k: number): void {
    if (this.anyStart) return;
    this.anyStart = true;
    if (this.starts.length < this.timestamps.length) this.starts = new Float64Array(this.timestamps.length);
    this.starts.fill(0, 0, k + 1);
  }
}

function symbolRef(ref: number, count: number, r: ProtoReader): number {
  if (ref >= count) throw badProtobuf(`label reference ${ref} outside the ${count} symbols of a format-3 record at byte ${r.fieldStart}`);
  return ref;
}

/**
 * A record value of either format decoded as a 1.0 WriteRequest: for tools and tests that
 * read records (ingesters read format 3 as it is, with SymbolizedDecoder).
 */
export function decodeRecordValue(value: Uint8Array, format: 'write-request' | 'symbolized' = 'write-request'): DecodedWriteRequest {
  return decodeWriteRequest(format === 'symbolized' ? symbolizedToWriteRequest(value) : value);
}

/** A format-3 record value as a 1.0 WriteRequest of the same series, labels and value bits. */
function symbolizedToWriteRequest(buf: Uint8Array): Buffer {
  const r = new SymbolizedDecoder().decode(buf);
  const bytes = new Uint8Array(r.values.buffer, r.values.byteOffset, r.values.byteLength);
  const w = new ProtoWriter(buf.length * 4);
  for (let i = 0, refFrom = 0, from = 0; i < r.series; refFrom = r.refEnd[i], from = r.sampleEnd[i], i++) {
    const series = w.begin(1);
    for (let k = refFrom; k < r.refEnd[i]; k += 2) {
      const label = w.begin(1);
      w.string(1, symbolString(r, r.refs[k]));
      w.string(2, symbolString(r, r.refs[k + 1]));
      w.end(label);
    }
    for (let k = from; k < r.sampleEnd[i]; k++) {
      const sample = w.begin(2);
      w.tag(1, WIRE_FIXED64);
      w.bytes8(bytes, 8 * k, LITTLE_ENDIAN);
      w.tag(2, WIRE_VARINT);
      w.int64(r.timestamps[k]);
      if (r.starts !== undefined && r.starts[k] !== 0) {
        w.tag(3, WIRE_VARINT);
        w.int64(r.starts[k]);
      }
      w.end(sample);
    }
    w.end(series);
  }
  return w.finish();
}
