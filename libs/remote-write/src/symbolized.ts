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

import { decodeWriteRequest, type DecodedWriteRequest } from './decode.ts';
import { ByteStrings, grown } from '@strata/model';
import { badProtobuf } from './errors.ts';
import { TAG_LABEL_NAME, TAG_LABEL_VALUE, TAG_TIMESERIES_LABELS, TAG_TIMESERIES_SAMPLES, TAG_SAMPLE_TIMESTAMP, TAG_SAMPLE_VALUE, WT_SAMPLE } from './messages.ts';
import { TAG_V2_REQUEST_SYMBOLS, TAG_V2_REQUEST_TIMESERIES, TAG_V2_TS_LABELS_REFS_PACKED, TAG_V2_TS_LABELS_REFS_VARINT, TAG_V2_TS_SAMPLES, WT_V2_REQUEST, WT_V2_TIMESERIES } from './v2-messages.ts';
import { LITTLE_ENDIAN, ProtoReader, ProtoWriter, WIRE_FIXED64, WIRE_VARINT } from './wire.ts';

/** Where a double's high and low 32 bits sit when its bytes are read as two Int32 words. */
const HI_WORD = LITTLE_ENDIAN ? 1 : 0;
const LO_WORD = 1 - HI_WORD;

// symbolizeSeries' state (the distributor encodes one record at a time). The strings and
// label pairs it has met stay known across records, up to a bound, so a record mostly
// finds its pairs rather than adding them; each record numbers the strings it uses anew.
/** Pairs and bytes known at most; past either both tables start over (before a record). */
const MAX_PAIRS = 1 << 18;
const MAX_BYTES = 32 << 20;
/** Label names and values met, by global id (0 is ""). */
const symbols = new ByteStrings();
/** Label messages as sent (a series' labels repeat across series), each with the global ids of its name and value. */
const pairs = new ByteStrings();
let pairName = new Int32Array(1024);
let pairValue = new Int32Array(1024);
/** The record a global id was last numbered in, its number there, and the record's ids in number order. */
let epoch = 0;
let idEpoch = new Int32Array(1024);
let idRef = new Int32Array(1024);
let recordIds = new Int32Array(1024);
let recordSymbols = 0;

/** The record's reference of global symbol id `g`, numbered on first use in the record. */
function recordRef(g: number): number {
  if (g >= idEpoch.length) {
    idEpoch = grown(idEpoch, g + 1);
    idRef = grown(idRef, g + 1);
  }
  if (idEpoch[g] === epoch) return idRef[g];
  if (recordSymbols === recordIds.length) recordIds = grown(recordIds, recordSymbols + 1);
  idEpoch[g] = epoch;
  idRef[g] = recordSymbols;
  recordIds[recordSymbols] = g;
  return recordSymbols++;
}
let body = new Uint8Array(64 * 1024);
let labelRefs = new Int32Array(64);
let sampleSpans = new Int32Array(64);

/**
 * One record value in format 3 from 1.0 TimeSeries message bodies (as the distributor
 * routes them), or undefined when a series holds anything but labels and float samples
 * (exemplars, native histograms, unknown fields): such a record is written as a 1.0
 * WriteRequest. Samples are copied byte for byte (2.0's Sample has 1.0's field numbers).
 */
export function symbolizeSeries(series: readonly Uint8Array[]): Buffer | undefined {
  if (pairs.count === 0 || pairs.count > MAX_PAIRS || pairs.bytesUsed + symbols.bytesUsed > MAX_BYTES || epoch === 0x7fffffff) {
    symbols.reset();
    pairs.reset();
    symbols.id(new Uint8Array(0), 0, 0);
    idEpoch.fill(0);
    epoch = 0;
  }
  epoch++;
  recordSymbols = 0;
  recordRef(0);
  let len = 0;
  for (const ts of series) {
    const n = ts.length;
    let labels = 0;
    let spans = 0;
    let samplesBytes = 0;
    let pos = 0;
    while (pos < n) {
      const tag = ts[pos];
      const fieldStart = pos;
      const fieldLen = readLength(ts, pos + 1, n);
      if (fieldLen < 0) return undefined;
      const end = readAt + fieldLen;
      if (tag === TAG_TIMESERIES_LABELS) {
        if (labels + 2 > labelRefs.length) labelRefs = grown(labelRefs, labels + 2);
        const p = pairs.id(ts, readAt, end);
        if (pairs.added) {
          if (p === pairName.length) {
            pairName = grown(pairName, p + 1);
            pairValue = grown(pairValue, p + 1);
          }
          if (!labelPair(ts, readAt, end, p)) {
            // The pair is in the table without its ids: start over at the next record.
            pairs.reset();
            return undefined;
          }
        }
        labelRefs[labels++] = recordRef(pairName[p]);
        labelRefs[labels++] = recordRef(pairValue[p]);
      } else if (tag === TAG_TIMESERIES_SAMPLES) {
        if (spans + 2 > sampleSpans.length) sampleSpans = grown(sampleSpans, spans + 2);
        sampleSpans[spans++] = fieldStart;
        sampleSpans[spans++] = end;
        samplesBytes += end - fieldStart;
      } else {
        return undefined;
      }
      pos = end;
    }
    let refsBytes = 0;
    for (let i = 0; i < labels; i++) refsBytes += varintSize(labelRefs[i]);
    const tsLen = (labels > 0 ? 1 + varintSize(refsBytes) + refsBytes : 0) + samplesBytes;
    const need = len + 1 + varintSize(tsLen) + tsLen;
    if (need > body.length) body = grown(body, need);
    body[len++] = TAG_V2_REQUEST_TIMESERIES;
    len = putVarint(body, len, tsLen);
    if (labels > 0) {
      body[len++] = TAG_V2_TS_LABELS_REFS_PACKED;
      len = putVarint(body, len, refsBytes);
      for (let i = 0; i < labels; i++) len = putVarint(body, len, labelRefs[i]);
    }
    // Copied a byte at a time: a sample is a dozen bytes, less than a subarray view costs.
    for (let i = 0; i < spans; i += 2) for (let k = sampleSpans[i], e = sampleSpans[i + 1]; k < e; k++) body[len++] = ts[k];
  }
  // The symbols go first so a reader resolves references as it meets them.
  let symbolsLen = 0;
  for (let r = 0; r < recordSymbols; r++) {
    const n = symbols.length(recordIds[r]);
    symbolsLen += 1 + varintSize(n) + n;
  }
  const out = Buffer.allocUnsafe(symbolsLen + len);
  let pos = 0;
  for (let r = 0; r < recordSymbols; r++) {
    const id = recordIds[r];
    out[pos++] = TAG_V2_REQUEST_SYMBOLS;
    pos = putVarint(out, pos, symbols.length(id));
    pos = symbols.copy(id, out, pos);
  }
  out.set(body.subarray(0, len), pos);
  return out;
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

/** Sets pair `p` to the name and value references of a 1.0 Label message at [pos, end); false when it holds another field. */
function labelPair(b: Uint8Array, pos: number, end: number, p: number): boolean {
  let name = 0;
  let value = 0;
  while (pos < end) {
    const tag = b[pos];
    const len = readLength(b, pos + 1, end);
    if (len < 0) return false;
    if (tag === TAG_LABEL_NAME) name = symbols.id(b, readAt, readAt + len);
    else if (tag === TAG_LABEL_VALUE) value = symbols.id(b, readAt, readAt + len);
    else return false;
    pos = readAt + len;
  }
  pairName[p] = name;
  pairValue[p] = value;
  return true;
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
  private words = new Int32Array(2048);
  private values = new Float64Array(this.words.buffer);
  private bounds = new Int32Array(2048);

  /** Throws RemoteWriteError 'bad-protobuf' on malformed input or a reference outside the table. */
  decode(buf: Uint8Array): SymbolizedRecord {
    const r = new ProtoReader(buf);
    const end = buf.length;
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
    if (series > this.refEnd.length) {
      this.refEnd = grown(this.refEnd, series);
      this.sampleEnd = grown(this.sampleEnd, series);
    }
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    let refs = 0;
    let samples = 0;
    for (let i = 0; i < series; i++) {
      r.pos = this.bounds[2 * i];
      const seriesEnd = this.bounds[2 * i + 1];
      while (r.pos < seriesEnd) {
        const tag = r.tag(seriesEnd, MSG_SERIES);
        if (tag === TAG_V2_TS_LABELS_REFS_PACKED) {
          const e = r.len(seriesEnd, 1, MSG_SERIES);
          while (r.pos < e) {
            if (refs === this.refs.length) this.refs = grown(this.refs, refs + 1);
            this.refs[refs++] = symbolRef(r.uvarint(e, 1, MSG_SERIES), symbols, r);
          }
        } else if (tag === TAG_V2_TS_LABELS_REFS_VARINT) {
          if (refs === this.refs.length) this.refs = grown(this.refs, refs + 1);
          this.refs[refs++] = symbolRef(r.uvarint(seriesEnd, 1, MSG_SERIES), symbols, r);
        } else if (tag === TAG_V2_TS_SAMPLES) {
          const e = r.len(seriesEnd, 2, MSG_SERIES);
          if (samples === this.timestamps.length) {
            this.timestamps = grown(this.timestamps, samples + 1);
            this.words = grown(this.words, 2 * samples + 2);
            this.values = new Float64Array(this.words.buffer);
          }
          let hi = 0;
          let lo = 0;
          // Written in place: a timestamp returned from a call that is not inlined is boxed, once per sample.
          this.timestamps[samples] = 0;
          while (r.pos < e) {
            const st = r.tag(e, MSG_SAMPLE);
            if (st === TAG_SAMPLE_VALUE) {
              if (e - r.pos < 8) throw badProtobuf(`truncated fixed64 field 1 of ${MSG_SAMPLE} at byte ${r.pos}`);
              // As two words, never a JS number: NaN payloads such as the stale marker survive.
              lo = view.getInt32(r.pos, true);
              hi = view.getInt32(r.pos + 4, true);
              r.pos += 8;
            } else if (st === TAG_SAMPLE_TIMESTAMP) {
              r.int64Into(this.timestamps, samples, e, 2, MSG_SAMPLE);
            } else {
              r.skip(st, e, MSG_SAMPLE, WT_SAMPLE);
            }
          }
          this.words[2 * samples + HI_WORD] = hi;
          this.words[2 * samples + LO_WORD] = lo;
          samples++;
        } else {
          // Exemplars, histograms and metadata never reach format 3 (symbolizeSeries refuses them).
          if ((tag >>> 3) >= 3 && (tag >>> 3) <= 5) throw badProtobuf(`field ${tag >>> 3} of ${MSG_SERIES} in a format-3 record at byte ${r.fieldStart}`);
          r.skip(tag, seriesEnd, MSG_SERIES, WT_V2_TIMESERIES);
        }
      }
      if ((refs - (i === 0 ? 0 : this.refEnd[i - 1])) % 2 !== 0) throw badProtobuf(`odd number of label references in series ${i} of a format-3 record`);
      this.refEnd[i] = refs;
      this.sampleEnd[i] = samples;
    }
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
    };
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
      w.end(sample);
    }
    w.end(series);
  }
  return w.finish();
}
