// Remote write 2.0 -> 1.0: each accepted 2.0 series becomes a 1.0 TimeSeries body,
// so Kafka records stay 1.0 WriteRequests (header v=1) and the ingester is unchanged.
// Sample values and exemplar values are copied as bytes, never read as numbers,
// so stale-marker NaN bits survive.

import type { Label } from '@strata/model';
import { TAG_SAMPLE_TIMESTAMP, TAG_SAMPLE_VALUE } from './messages.ts';
import type { ParsedSeriesV2, ParsedWriteRequestV2 } from './parse-v2.ts';
import {
  TAG_V2_TS_LABELS_REFS_PACKED,
  TAG_V2_TS_LABELS_REFS_VARINT,
  TAG_V2_EXEMPLAR_LABELS_REFS_PACKED,
  TAG_V2_EXEMPLAR_LABELS_REFS_VARINT,
  TAG_V2_EXEMPLAR_TIMESTAMP,
  TAG_V2_EXEMPLAR_VALUE,
  TAG_V2_HISTOGRAM_START_TIMESTAMP,
  TAG_V2_SAMPLE_START_TIMESTAMP,
  TAG_V2_SAMPLE_TIMESTAMP,
  TAG_V2_SAMPLE_VALUE,
  TAG_V2_TS_EXEMPLARS,
  TAG_V2_TS_HISTOGRAMS,
  TAG_V2_TS_SAMPLES,
  WT_V2_EXEMPLAR,
  WT_V2_HISTOGRAM,
  WT_V2_SAMPLE,
  WT_V2_TIMESERIES,
} from './v2-messages.ts';
import { ProtoReader, ProtoWriter, WIRE_LEN, WIRE_VARINT, putUvarint, uvarintSize } from './wire.ts';

// 1.0 TimeSeries fields.
const V1_LABELS = 1;
const V1_SAMPLES = 2;
const V1_EXEMPLARS = 3;
const V1_HISTOGRAMS = 4;
// Start timestamps keep 2.0's field numbers in the records (see messages.ts).
const SAMPLE_START_TIMESTAMP = 3;
const HISTOGRAM_START_TIMESTAMP = 17;

// The 2.0 Sample and 1.0 Sample share field numbers and wire types; so do the
// value and timestamp fields of the two Exemplars.
const SAME_SAMPLE_TAGS = TAG_V2_SAMPLE_VALUE === TAG_SAMPLE_VALUE && TAG_V2_SAMPLE_TIMESTAMP === TAG_SAMPLE_TIMESTAMP;
if (!SAME_SAMPLE_TAGS) throw new Error('remote write 1.0 and 2.0 Sample field numbers diverged');

/**
 * A 1.0 TimeSeries body for one parsed 2.0 series: `labels` (by default the series'
 * own, in the order of its references; the distributor passes them sorted and
 * without empty values when they were not), samples,
 * exemplars with their label references resolved, and histograms (the Histogram
 * message is the same in both versions). With `startTimestamps` each sample and
 * histogram keeps its start (created) timestamp in 2.0's field number (an rc.0-rc.3
 * TimeSeries.created_timestamp is given to each of them that has none); without,
 * they carry none. Metadata and unknown fields are not carried.
 * The request must have been parsed by parseWriteRequestV2 (references checked).
 */
export function seriesV2ToV1(req: ParsedWriteRequestV2, series: ParsedSeriesV2, labels?: readonly Label[], startTimestamps = false): Buffer {
  const raw = series.rawV2;
  const w = new ProtoWriter(raw.length + (labels ?? series.labels).length * 24 + 16);
  const r = new ProtoReader(raw);
  const end = raw.length;
  if (labels === undefined) {
    // The common case: copy each label's UTF-8 straight from the symbols table, in the order of its references.
    let name = -1;
    while (r.pos < end) {
      const tag = r.tag(end, 'TimeSeries');
      if (tag === TAG_V2_TS_LABELS_REFS_PACKED) {
        const e = r.len(end, 1, 'TimeSeries');
        while (r.pos < e) name = pairRef(req, w, V1_LABELS, name, r.uvarint(e, 1, 'TimeSeries'));
      } else if (tag === TAG_V2_TS_LABELS_REFS_VARINT) {
        name = pairRef(req, w, V1_LABELS, name, r.uvarint(end, 1, 'TimeSeries'));
      } else {
        r.skip(tag, end, 'TimeSeries', WT_V2_TIMESERIES);
      }
    }
    r.pos = 0;
  } else {
    for (const l of labels) writeLabel(w, V1_LABELS, l.name, l.value);
  }
  // Samples whose body holds only value and timestamp are byte-identical in 1.0
  // (same field numbers, TimeSeries.samples = 2 in both): a run of them is copied in one go.
  const created = startTimestamps ? series.createdTimestamp : 0;
  let run = -1;
  while (r.pos < end) {
    const fieldStart = r.pos;
    const tag = r.tag(end, 'TimeSeries');
    if (tag === TAG_V2_TS_SAMPLES) {
      const e = r.len(end, 2, 'TimeSeries');
      const bodyStart = r.pos;
      let plain = true;
      while (r.pos < e) {
        const st = r.tag(e, 'Sample');
        if (st !== TAG_V2_SAMPLE_VALUE && st !== TAG_V2_SAMPLE_TIMESTAMP) plain = false;
        r.skip(st, e, 'Sample', WT_V2_SAMPLE);
      }
      if (plain && created === 0) {
        if (run < 0) run = fieldStart;
        continue;
      }
      run = flushRun(w, raw, run, fieldStart);
      r.pos = bodyStart;
      const start = w.begin(V1_SAMPLES);
      const startTag = startTimestamps ? TAG_V2_SAMPLE_START_TIMESTAMP : -1;
      if (!copyFields(r, w, e, 'Sample', TAG_V2_SAMPLE_VALUE, TAG_V2_SAMPLE_TIMESTAMP, WT_V2_SAMPLE, startTag) && created !== 0) {
        writeStartTimestamp(w, SAMPLE_START_TIMESTAMP, created);
      }
      w.end(start);
      continue;
    }
    run = flushRun(w, raw, run, fieldStart);
    if (tag === TAG_V2_TS_EXEMPLARS) {
      const e = r.len(end, 4, 'TimeSeries');
      writeExemplar(req, r, w, e);
    } else if (tag === TAG_V2_TS_HISTOGRAMS) {
      writeHistogram(r, w, r.len(end, 3, 'TimeSeries'), startTimestamps, created);
    } else {
      r.skip(tag, end, 'TimeSeries', WT_V2_TIMESERIES);
    }
  }
  flushRun(w, raw, run, end);
  return w.finish();
}

function writeExemplar(req: ParsedWriteRequestV2, r: ProtoReader, w: ProtoWriter, end: number): void {
  const start = w.begin(V1_EXEMPLARS);
  // Labels first, resolved pairwise; value and timestamp are copied after them.
  const from = r.pos;
  let name = -1;
  while (r.pos < end) {
    const tag = r.tag(end, 'Exemplar');
    if (tag === TAG_V2_EXEMPLAR_LABELS_REFS_PACKED) {
      const e = r.len(end, 1, 'Exemplar');
      while (r.pos < e) name = pairRef(req, w, 1, name, r.uvarint(e, 1, 'Exemplar'));
    } else if (tag === TAG_V2_EXEMPLAR_LABELS_REFS_VARINT) {
      name = pairRef(req, w, 1, name, r.uvarint(end, 1, 'Exemplar'));
    } else {
      r.skip(tag, end, 'Exemplar', WT_V2_EXEMPLAR);
    }
  }
  r.pos = from;
  copyFields(r, w, end, 'Exemplar', TAG_V2_EXEMPLAR_VALUE, TAG_V2_EXEMPLAR_TIMESTAMP, WT_V2_EXEMPLAR);
  w.end(start);
}

/**
 * Takes one reference of a name/value pair: the first is remembered (returned),
 * the second writes the Label message as field `field` from the symbols' bytes.
 */
function pairRef(req: ParsedWriteRequestV2, w: ProtoWriter, field: number, name: number, ref: number): number {
  if (name < 0) return ref;
  const spans = req.symbolSpans;
  const bytes = req.bytes;
  const ns = spans[2 * name];
  const nl = spans[2 * name + 1] - ns;
  const vs = spans[2 * ref];
  const vl = spans[2 * ref + 1] - vs;
  const body = 2 + uvarintSize(nl) + nl + uvarintSize(vl) + vl;
  w.tag(field, WIRE_LEN);
  w.ensure(10 + body);
  const buf = w.buf;
  let p = putUvarint(buf, w.pos, body);
  buf[p++] = 0x0a; // Label.name
  p = putUvarint(buf, p, nl);
  // Label strings are short: a byte loop beats creating two subarray views per label.
  for (let i = 0; i < nl; i++) buf[p + i] = bytes[ns + i];
  p += nl;
  buf[p++] = 0x12; // Label.value
  p = putUvarint(buf, p, vl);
  for (let i = 0; i < vl; i++) buf[p + i] = bytes[vs + i];
  w.pos = p + vl;
  return -1;
}

/** Writes the pending run of verbatim sample fields [run, upTo), if any; returns the new (empty) run. */
function flushRun(w: ProtoWriter, raw: Uint8Array, run: number, upTo: number): number {
  if (run >= 0) w.raw(raw.subarray(run, upTo));
  return -1;
}

/**
 * Copies the fields tagged `a` or `b` of the message ending at `end` verbatim (tag and payload),
 * and the varint field tagged `c` unless it is 0 (unset); skips the rest. Returns whether a `c` was copied.
 */
function copyFields(r: ProtoReader, w: ProtoWriter, end: number, msg: string, a: number, b: number, wireTypes: readonly number[], c = -1): boolean {
  let copiedC = false;
  while (r.pos < end) {
    const fieldStart = r.pos;
    const tag = r.tag(end, msg);
    if (tag === c) {
      if (r.int64(end, c >>> 3, msg) !== 0) {
        w.raw(r.bytes.subarray(fieldStart, r.pos));
        copiedC = true;
      }
      continue;
    }
    r.skip(tag, end, msg, wireTypes);
    if (tag === a || tag === b) w.raw(r.bytes.subarray(fieldStart, r.pos));
  }
  return copiedC;
}

/**
 * The Histogram message at [r.pos, end) as a 1.0 TimeSeries.histograms field (the message is
 * the same): as sent, less its start timestamp when `startTimestamps` is off, plus `created`
 * as its start timestamp when it has none.
 */
function writeHistogram(r: ProtoReader, w: ProtoWriter, end: number, startTimestamps: boolean, created: number): void {
  const from = r.pos;
  let hasStart = false;
  while (r.pos < end) {
    const tag = r.tag(end, 'Histogram');
    if (tag === TAG_V2_HISTOGRAM_START_TIMESTAMP) hasStart = true;
    r.skip(tag, end, 'Histogram', WT_V2_HISTOGRAM);
  }
  const body = r.bytes.subarray(from, end);
  if (startTimestamps ? hasStart || created === 0 : !hasStart) {
    w.bytes(V1_HISTOGRAMS, body);
    return;
  }
  const start = w.begin(V1_HISTOGRAMS);
  if (startTimestamps) {
    w.raw(body);
    writeStartTimestamp(w, HISTOGRAM_START_TIMESTAMP, created);
  } else {
    r.pos = from;
    while (r.pos < end) {
      const fieldStart = r.pos;
      const tag = r.tag(end, 'Histogram');
      r.skip(tag, end, 'Histogram', WT_V2_HISTOGRAM);
      if (tag !== TAG_V2_HISTOGRAM_START_TIMESTAMP) w.raw(r.bytes.subarray(fieldStart, r.pos));
    }
  }
  w.end(start);
}

function writeStartTimestamp(w: ProtoWriter, field: number, t: number): void {
  w.tag(field, WIRE_VARINT);
  w.int64(t);
}

function writeLabel(w: ProtoWriter, field: number, name: string, value: string): void {
  const start = w.begin(field);
  w.string(1, name);
  w.string(2, value);
  w.end(start);
}
