// Remote write 1.0 native histograms (prompb Histogram, TimeSeries field 4):
// decoding into the model's absolute-count histograms (integer deltas summed,
// float counts as they are) and Prometheus' validity rules (model/histogram
// Validate). Decoding fails only on malformed protobuf; validation says what
// is wrong in a sentence a sender can act on.

import type { HistogramSpan, NativeHistogram } from '@strata/model';
import { badProtobuf } from './errors.ts';
import { ProtoReader, ProtoWriter, WIRE_FIXED64, WIRE_VARINT } from './wire.ts';

export interface DecodedHistogram {
  timestamp: number;
  /** Start (created) timestamp in ms, field 17 (2.0's number, kept in Strata's records); absent or 0: none. */
  startTimestamp?: number;
  /** Whether it came with float counts (count_float): stored in float histogram chunks. */
  float: boolean;
  histogram: NativeHistogram;
}

const HINTS: NativeHistogram['counterResetHint'][] = ['unknown', 'reset', 'not_reset', 'gauge'];
const MSG = 'Histogram';

function zigzag(n: number): number {
  return n % 2 === 1 ? -(n + 1) / 2 : n / 2;
}

function double(r: ProtoReader, end: number, field: number): number {
  const at = r.pos;
  r.fixed64(end, field, MSG);
  return new DataView(r.bytes.buffer, r.bytes.byteOffset + at, 8).getFloat64(0, true);
}

function readSpan(r: ProtoReader, end: number): HistogramSpan {
  let offset = 0;
  let length = 0;
  while (r.pos < end) {
    const tag = r.tag(end, 'BucketSpan');
    if (tag === 8) offset = zigzag(r.uvarint(end, 1, 'BucketSpan'));
    else if (tag === 16) length = r.uvarint(end, 2, 'BucketSpan');
    else r.skip(tag, end, 'BucketSpan');
  }
  if (length > 0xffffffff) throw badProtobuf(`BucketSpan length ${length} overflows uint32`);
  return { offset, length };
}

/** Packed (wire type 2) or single (wire type 0 or 1) repeated values. */
function repeated(r: ProtoReader, tag: number, end: number, field: number, kind: 'sint64' | 'double', out: number[]): void {
  if ((tag & 7) === 2) {
    const e = r.len(end, field, MSG);
    while (r.pos < e) out.push(kind === 'double' ? double(r, e, field) : zigzag(r.uvarint(e, field, MSG)));
  } else {
    out.push(kind === 'double' ? double(r, end, field) : zigzag(r.uvarint(end, field, MSG)));
  }
}

function cumulative(deltas: number[]): number[] {
  let c = 0;
  return deltas.map((d) => (c += d));
}

/** Decodes one Histogram message occupying [r.pos, end). */
export function readHistogram(r: ProtoReader, end: number): DecodedHistogram {
  let countInt = 0;
  let countFloat = 0;
  let float = false;
  let zeroInt = 0;
  let zeroFloat = 0;
  let sum = 0;
  let schema = 0;
  let zeroThreshold = 0;
  let hint = 0;
  let timestamp = 0;
  let startTimestamp = 0;
  const lists: HistogramLists = { negativeSpans: [], positiveSpans: [], nd: [], nc: [], pd: [], pc: [], custom: [] };
  while (r.pos < end) {
    const tag = r.tag(end, MSG);
    switch (tag) {
      case 8:
        countInt = r.uvarint(end, 1, MSG);
        float = false;
        break;
      case 17:
        countFloat = double(r, end, 2);
        float = true;
        break;
      case 25:
        sum = double(r, end, 3);
        break;
      case 32:
        schema = zigzag(r.uvarint(end, 4, MSG));
        break;
      case 41:
        zeroThreshold = double(r, end, 5);
        break;
      case 48:
        zeroInt = r.uvarint(end, 6, MSG);
        break;
      case 57:
        zeroFloat = double(r, end, 7);
        break;
      case 112:
        hint = r.uvarint(end, 14, MSG);
        break;
      case 120:
        timestamp = r.int64(end, 15, MSG);
        break;
      case 136:
        startTimestamp = r.int64(end, 17, MSG);
        break;
      default:
        readListField(r, tag, end, lists);
    }
  }
  const histogram: NativeHistogram = {
    counterResetHint: HINTS[hint] ?? 'unknown',
    schema,
    zeroThreshold,
    zeroCount: float ? zeroFloat : zeroInt,
    count: float ? countFloat : countInt,
    sum,
    positiveSpans: lists.positiveSpans,
    negativeSpans: lists.negativeSpans,
    positiveBuckets: float ? lists.pc : cumulative(lists.pd),
    negativeBuckets: float ? lists.nc : cumulative(lists.nd),
  };
  if (lists.custom.length > 0) histogram.customValues = lists.custom;
  return startTimestamp === 0 ? { timestamp, float, histogram } : { timestamp, startTimestamp, float, histogram };
}

/** A Histogram message's repeated fields as read: spans, bucket deltas (integer counts) and counts (float), custom bounds. */
interface HistogramLists {
  negativeSpans: HistogramSpan[];
  positiveSpans: HistogramSpan[];
  nd: number[];
  nc: number[];
  pd: number[];
  pc: number[];
  custom: number[];
}

/** The repeated field of `tag` (already read) into its list; any other field is skipped. */
function readListField(r: ProtoReader, tag: number, end: number, lists: HistogramLists): void {
  switch (tag) {
    case 66:
      lists.negativeSpans.push(readSpan(r, r.len(end, 8, MSG)));
      break;
    case 72:
    case 74:
      repeated(r, tag, end, 9, 'sint64', lists.nd);
      break;
    case 81:
    case 82:
      repeated(r, tag, end, 10, 'double', lists.nc);
      break;
    case 90:
      lists.positiveSpans.push(readSpan(r, r.len(end, 11, MSG)));
      break;
    case 96:
    case 98:
      repeated(r, tag, end, 12, 'sint64', lists.pd);
      break;
    case 105:
    case 106:
      repeated(r, tag, end, 13, 'double', lists.pc);
      break;
    case 129:
    case 130:
      repeated(r, tag, end, 16, 'double', lists.custom);
      break;
    default:
      r.skip(tag, end, MSG);
  }
}

/** value.StaleNaN little-endian, as on the wire. */
const STALE_NAN_LE = new Uint8Array([0x02, 0, 0, 0, 0, 0, 0xf0, 0x7f]);

function isStale(v: number): boolean {
  if (v === v) return false;
  const w = new Uint32Array(Float64Array.of(v).buffer);
  return w[0] === 2 && (w[1] === 0x7ff00000 || w[1] === 0x7ff80000);
}

function checkSpans(side: string, spans: readonly HistogramSpan[], buckets: readonly number[]): string | null {
  let need = 0;
  for (let i = 0; i < spans.length; i++) {
    if (i > 0 && spans[i].offset < 0) return `${side} span ${i} has negative offset ${spans[i].offset}`;
    need += spans[i].length;
  }
  if (need !== buckets.length) return `${side} spans need ${need} buckets, have ${buckets.length}`;
  for (let i = 0; i < buckets.length; i++) {
    if (!(buckets[i] >= 0)) return `${side} bucket ${i} has count ${buckets[i]}, counts must not be negative`;
  }
  return null;
}

/**
 * Why the histogram is invalid (Prometheus' rules), or null if it is valid.
 * A stale marker (stale NaN sum) is always valid: only its timestamp counts.
 */
export function validateHistogram(d: DecodedHistogram): string | null {
  const h = d.histogram;
  if (isStale(h.sum)) return null;
  const custom = h.schema === -53;
  if (!custom && !(h.schema >= -4 && h.schema <= 8)) return `histogram schema ${h.schema} is outside -4..8 and not -53 (custom buckets)`;
  if (!(h.zeroThreshold >= 0)) return `histogram zero threshold ${h.zeroThreshold} must be a non-negative number`;
  if (!(h.zeroCount >= 0)) return `histogram zero count ${h.zeroCount} must not be negative`;
  if (!(h.count >= 0)) return `histogram count ${h.count} must not be negative`;
  const neg = checkSpans('negative', h.negativeSpans, h.negativeBuckets);
  if (neg) return neg;
  const pos = checkSpans('positive', h.positiveSpans, h.positiveBuckets);
  if (pos) return pos;
  if (custom) {
    const cv = h.customValues ?? [];
    if (cv.length === 0) return 'histogram with custom buckets (schema -53) needs custom_values';
    for (let i = 0; i < cv.length; i++) {
      if (Number.isNaN(cv[i]) || (i > 0 && !(cv[i] > cv[i - 1]))) return 'histogram custom_values must be strictly increasing';
    }
    if (cv[cv.length - 1] === Infinity) return 'histogram custom_values must not end with +Inf (it is implicit)';
    if (h.negativeSpans.length > 0 || h.negativeBuckets.length > 0) return 'histogram with custom buckets must not have negative buckets';
    if (h.zeroCount !== 0 || h.zeroThreshold !== 0) return 'histogram with custom buckets must have no zero bucket';
    if (h.positiveSpans.length > 0 && h.positiveSpans[0].offset < 0) return 'histogram with custom buckets must not have a negative first span offset';
    let idx = -1;
    for (const s of h.positiveSpans) idx += s.offset + s.length;
    if (idx > cv.length) return `histogram bucket index ${idx} exceeds its ${cv.length} custom bounds`;
  } else if (h.customValues !== undefined && h.customValues.length > 0) {
    return `histogram with exponential schema ${h.schema} must not have custom_values`;
  }
  let total = h.zeroCount;
  for (const c of h.negativeBuckets) total += c;
  for (const c of h.positiveBuckets) total += c;
  if (d.float) {
    if (total > h.count * (1 + 1e-12)) return `histogram count ${h.count} is less than its buckets' total ${total}`;
  } else if (Number.isNaN(h.sum) ? total > h.count : total !== h.count) {
    return `histogram count ${h.count} does not match its buckets' total ${total}`;
  }
  return null;
}

function putZigzag(w: ProtoWriter, v: number): void {
  w.uvarint(v < 0 ? -2 * v - 1 : 2 * v);
}

function writeSpans(w: ProtoWriter, field: number, spans: readonly HistogramSpan[]): void {
  for (const s of spans) {
    const at = w.begin(field);
    if (s.offset !== 0) {
      w.tag(1, WIRE_VARINT);
      putZigzag(w, s.offset);
    }
    if (s.length !== 0) {
      w.tag(2, WIRE_VARINT);
      w.uvarint(s.length);
    }
    w.end(at);
  }
}

function writeDeltas(w: ProtoWriter, field: number, counts: readonly number[]): void {
  if (counts.length === 0) return;
  const at = w.begin(field);
  let prev = 0;
  for (const c of counts) {
    putZigzag(w, c - prev);
    prev = c;
  }
  w.end(at);
}

function writeDoubles(w: ProtoWriter, field: number, values: readonly number[]): void {
  if (values.length === 0) return;
  const at = w.begin(field);
  for (const v of values) w.double(v);
  w.end(at);
}

/**
 * The prompb Histogram message body for `d` (what readHistogram reads back):
 * integer counts as deltas, float counts as they are.
 */
export function encodeHistogram(d: DecodedHistogram): Buffer {
  const h = d.histogram;
  const w = new ProtoWriter(64 + 10 * (h.positiveBuckets.length + h.negativeBuckets.length));
  if (d.float) {
    w.tag(2, WIRE_FIXED64);
    w.double(h.count);
  } else {
    w.tag(1, WIRE_VARINT);
    w.uvarint(h.count);
  }
  w.tag(3, WIRE_FIXED64);
  // A stale marker goes out with Prometheus' exact bits, even if V8 quieted the NaN on the way.
  if (isStale(h.sum)) w.bytes8(STALE_NAN_LE, 0, true);
  else w.double(h.sum);
  w.tag(4, WIRE_VARINT);
  putZigzag(w, h.schema);
  w.tag(5, WIRE_FIXED64);
  w.double(h.zeroThreshold);
  if (d.float) {
    w.tag(7, WIRE_FIXED64);
    w.double(h.zeroCount);
  } else {
    w.tag(6, WIRE_VARINT);
    w.uvarint(h.zeroCount);
  }
  writeSpans(w, 8, h.negativeSpans);
  if (d.float) writeDoubles(w, 10, h.negativeBuckets);
  else writeDeltas(w, 9, h.negativeBuckets);
  writeSpans(w, 11, h.positiveSpans);
  if (d.float) writeDoubles(w, 13, h.positiveBuckets);
  else writeDeltas(w, 12, h.positiveBuckets);
  const hint = HINTS.indexOf(h.counterResetHint);
  if (hint > 0) {
    w.tag(14, WIRE_VARINT);
    w.uvarint(hint);
  }
  w.tag(15, WIRE_VARINT);
  w.int64(d.timestamp);
  writeDoubles(w, 16, h.customValues ?? []);
  if (d.startTimestamp !== undefined && d.startTimestamp !== 0) {
    w.tag(17, WIRE_VARINT);
    w.int64(d.startTimestamp);
  }
  return w.finish();
}

/** Buckets (index, count) of one side, from spans and absolute counts. */
function indexed(spans: readonly HistogramSpan[], counts: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  let idx = 0;
  let k = 0;
  for (let i = 0; i < spans.length; i++) {
    idx += spans[i].offset;
    for (let j = 0; j < spans[i].length; j++) out.push([idx++, counts[k++]]);
  }
  return out;
}

/** Spans and counts for buckets sorted by index (empty buckets kept: they are part of the layout). */
function toSpans(buckets: readonly [number, number][]): { spans: HistogramSpan[]; counts: number[] } {
  const spans: HistogramSpan[] = [];
  const counts: number[] = [];
  let next = 0;
  for (const [idx, c] of buckets) {
    if (spans.length > 0 && idx === next) spans[spans.length - 1].length++;
    else spans.push({ offset: spans.length === 0 ? idx : idx - next, length: 1 });
    counts.push(c);
    next = idx + 1;
  }
  return { spans, counts };
}

/** One side's buckets at `delta` schemas lower: bucket idx goes to ((idx - 1) >> delta) + 1, counts of a target summed. */
function downscale(spans: readonly HistogramSpan[], counts: readonly number[], delta: number): { spans: HistogramSpan[]; counts: number[] } {
  const merged: [number, number][] = [];
  for (const [idx, c] of indexed(spans, counts)) {
    const t = ((idx - 1) >> delta) + 1;
    const last = merged[merged.length - 1];
    if (last !== undefined && last[0] === t) last[1] += c;
    else merged.push([t, c]);
  }
  return toSpans(merged);
}

/** How many buckets the histogram has (both sides, as spans lay them out). */
export function histogramBucketCount(h: NativeHistogram): number {
  return h.positiveBuckets.length + h.negativeBuckets.length;
}

/**
 * The histogram at the highest schema at most `maxBuckets` buckets fit in
 * (bucket pairs merged per schema step down, as Prometheus' and Mimir's
 * bucket limit does), or null when even schema -4 has more, or custom buckets
 * cannot be merged.
 */
export function reduceResolution(d: DecodedHistogram, maxBuckets: number): DecodedHistogram | null {
  const h = d.histogram;
  if (histogramBucketCount(h) <= maxBuckets) return d;
  if (h.schema === -53) return null;
  for (let schema = h.schema - 1; schema >= -4; schema--) {
    const delta = h.schema - schema;
    const pos = downscale(h.positiveSpans, h.positiveBuckets, delta);
    const neg = downscale(h.negativeSpans, h.negativeBuckets, delta);
    if (pos.counts.length + neg.counts.length <= maxBuckets) {
      return {
        ...d,
        histogram: { ...h, schema, positiveSpans: pos.spans, positiveBuckets: pos.counts, negativeSpans: neg.spans, negativeBuckets: neg.counts },
      };
    }
  }
  return null;
}

export interface SeriesHistogramLimits {
  /** native_histograms_ingestion_enabled: false drops every histogram of the series. */
  enabled: boolean;
  /** max_native_histogram_buckets; 0: no limit. */
  maxBuckets: number;
}

export interface SeriesHistogramOutcome {
  /** The TimeSeries body to route: `raw` itself unless histograms were dropped or reduced. */
  body: Uint8Array;
  /** Why the series is rejected (an invalid histogram or one over the bucket limit even at schema -4). */
  error?: { code: 'invalid' | 'too-many-buckets'; reason: string };
  /** Histograms dropped because ingestion of native histograms is disabled. */
  dropped: number;
  /** Histograms whose resolution was lowered to fit the bucket limit. */
  reduced: number;
}

const TAG_TS_HISTOGRAM = (4 << 3) | 2;

/**
 * Checks the native histograms (field 4) of a remote write 1.0 TimeSeries body:
 * each must be valid; with ingestion disabled they are removed, over the bucket
 * limit their schema is lowered until they fit. Other fields are copied as they are.
 */
export function checkSeriesHistograms(raw: Uint8Array, limits: SeriesHistogramLimits): SeriesHistogramOutcome {
  const r = new ProtoReader(raw);
  const end = raw.length;
  const out: SeriesHistogramOutcome = { body: raw, dropped: 0, reduced: 0 };
  // Rewritten only once something changes: fields before that are copied in one go.
  let w: ProtoWriter | undefined;
  let copiedTo = 0;
  while (r.pos < end) {
    const fieldStart = r.pos;
    const tag = r.tag(end, 'TimeSeries');
    if (tag !== TAG_TS_HISTOGRAM) {
      r.skip(tag, end, 'TimeSeries');
      continue;
    }
    const e = r.len(end, 4, 'TimeSeries');
    const d = readHistogram(r, e);
    r.pos = e;
    const invalid = validateHistogram(d);
    if (invalid !== null) return { ...out, body: raw, error: { code: 'invalid', reason: invalid } };
    let replacement: Uint8Array | null | undefined;
    if (!limits.enabled) {
      replacement = null;
      out.dropped++;
    } else if (limits.maxBuckets > 0 && histogramBucketCount(d.histogram) > limits.maxBuckets && !isStale(d.histogram.sum)) {
      const reduced = reduceResolution(d, limits.maxBuckets);
      if (reduced === null) {
        return {
          ...out,
          body: raw,
          error: {
            code: 'too-many-buckets',
            reason: `histogram has ${histogramBucketCount(d.histogram)} buckets, more than ${limits.maxBuckets} even at the lowest schema`,
          },
        };
      }
      replacement = encodeHistogram(reduced);
      out.reduced++;
    }
    if (replacement === undefined) continue;
    w ??= new ProtoWriter(raw.length + 64);
    w.raw(raw.subarray(copiedTo, fieldStart));
    if (replacement !== null) w.bytes(4, replacement);
    copiedTo = e;
  }
  if (w === undefined) return out;
  w.raw(raw.subarray(copiedTo, end));
  out.body = w.finish();
  return out;
}
