// Writing WriteRequests: framing already-encoded TimeSeries bytes into a Kafka
// record value (the distributor never re-encodes what it only routes), and a plain
// encoder for tests, load generators and clients.

import type { Label } from '@strata/model';
import {
  FIELD_LABELS,
  FIELD_METADATA,
  FIELD_TIMESERIES,
  METRIC_TYPES,
  TAG_HISTOGRAM_START_TIMESTAMP,
  TAG_SAMPLE_START_TIMESTAMP,
  TAG_TIMESERIES_EXEMPLARS,
  TAG_TIMESERIES_HISTOGRAMS,
  TAG_TIMESERIES_LABELS,
  TAG_TIMESERIES_SAMPLES,
  WT_TIMESERIES,
  type MetricMetadata,
} from './messages.ts';
import { ProtoReader, ProtoWriter, WIRE_FIXED64, WIRE_VARINT, putUvarint, uvarintSize } from './wire.ts';

const TAG_TIMESERIES = (FIELD_TIMESERIES << 3) | 2;
const TAG_METADATA = (FIELD_METADATA << 3) | 2;

/**
 * Builds a WriteRequest from raw TimeSeries and MetricMetadata message bodies
 * (ParsedSeries.raw / ParsedMetadata.raw) by framing them: tag, length, bytes.
 */
export function encodeRecordValue(series: readonly Uint8Array[], metadata: readonly Uint8Array[] = []): Buffer {
  let size = 0;
  for (const s of series) size += 1 + uvarintSize(s.length) + s.length;
  for (const m of metadata) size += 1 + uvarintSize(m.length) + m.length;
  const out = Buffer.allocUnsafe(size);
  let pos = 0;
  for (const s of series) {
    out[pos++] = TAG_TIMESERIES;
    pos = putUvarint(out, pos, s.length);
    out.set(s, pos);
    pos += s.length;
  }
  for (const m of metadata) {
    out[pos++] = TAG_METADATA;
    pos = putUvarint(out, pos, m.length);
    out.set(m, pos);
    pos += m.length;
  }
  return out;
}

/**
 * A TimeSeries body with `labels` in place of the ones in `raw`; samples,
 * exemplars, histograms and unknown fields are copied byte for byte. For the
 * distributor's rare rewrites: dropping empty-valued labels, the HA replica label.
 */
export function replaceSeriesLabels(raw: Uint8Array, labels: readonly Label[]): Buffer {
  const w = new ProtoWriter(raw.length + 64);
  writeLabels(w, FIELD_LABELS, labels);
  const r = new ProtoReader(raw);
  const end = raw.length;
  let copyFrom = 0;
  while (r.pos < end) {
    const fieldStart = r.pos;
    const tag = r.tag(end, 'TimeSeries');
    r.skip(tag, end, 'TimeSeries', WT_TIMESERIES);
    if (tag === TAG_TIMESERIES_LABELS) {
      if (fieldStart > copyFrom) w.raw(r.buf.subarray(copyFrom, fieldStart));
      copyFrom = r.pos;
    }
  }
  if (end > copyFrom) w.raw(r.buf.subarray(copyFrom, end));
  return w.finish();
}

/**
 * A TimeSeries body without its exemplars (for a tenant whose exemplar limit is
 * 0); everything else is copied byte for byte. `raw` itself when it has none.
 */
export function withoutExemplars(raw: Uint8Array): Uint8Array {
  const r = new ProtoReader(raw);
  const end = raw.length;
  const kept: Uint8Array[] = [];
  let copyFrom = 0;
  while (r.pos < end) {
    const fieldStart = r.pos;
    const tag = r.tag(end, 'TimeSeries');
    r.skip(tag, end, 'TimeSeries', WT_TIMESERIES);
    if (tag === TAG_TIMESERIES_EXEMPLARS) {
      if (fieldStart > copyFrom) kept.push(raw.subarray(copyFrom, fieldStart));
      copyFrom = r.pos;
    }
  }
  if (copyFrom === 0) return raw;
  if (end > copyFrom) kept.push(raw.subarray(copyFrom, end));
  return Buffer.concat(kept);
}

/**
 * A TimeSeries body without start timestamps (Sample field 3, Histogram field 17), for a tenant
 * that does not ingest them; everything else is copied byte for byte.
 */
export function withoutStartTimestamps(raw: Uint8Array): Buffer {
  const r = new ProtoReader(raw);
  const w = new ProtoWriter(raw.length);
  const end = raw.length;
  while (r.pos < end) {
    const fieldStart = r.pos;
    const tag = r.tag(end, 'TimeSeries');
    const drop = tag === TAG_TIMESERIES_SAMPLES ? TAG_SAMPLE_START_TIMESTAMP : tag === TAG_TIMESERIES_HISTOGRAMS ? TAG_HISTOGRAM_START_TIMESTAMP : -1;
    if (drop < 0) {
      r.skip(tag, end, 'TimeSeries', WT_TIMESERIES);
      w.raw(raw.subarray(fieldStart, r.pos));
      continue;
    }
    const e = r.len(end, tag >>> 3, 'TimeSeries');
    const msg = tag === TAG_TIMESERIES_SAMPLES ? 'Sample' : 'Histogram';
    const at = w.begin(tag >>> 3);
    while (r.pos < e) {
      const from = r.pos;
      const t = r.tag(e, msg);
      r.skip(t, e, msg);
      if (t !== drop) w.raw(raw.subarray(from, r.pos));
    }
    w.end(at);
  }
  return w.finish();
}

export interface SampleInput {
  value: number;
  /** Milliseconds; a safe integer, may be negative. */
  timestamp: number;
  /** Write Prometheus' stale-marker NaN bits instead of `value` (a JS NaN may lose its payload). */
  stale?: boolean;
  /** Start (created) timestamp in ms, written as field 3 (2.0's Sample.start_timestamp) when not 0. */
  startTimestamp?: number;
}

export interface ExemplarInput {
  labels: Label[];
  value: number;
  timestamp: number;
}

export interface SeriesInput {
  labels: Label[];
  samples: SampleInput[];
  exemplars?: ExemplarInput[];
  /** Native histogram messages, already encoded (Histogram bodies, field 4). */
  histograms?: Uint8Array[];
}

export interface WriteRequestInput {
  timeseries: SeriesInput[];
  metadata?: MetricMetadata[];
}

// Stale-marker NaN, little-endian as on the wire.
const STALE_NAN_LE = new Uint8Array([0x02, 0, 0, 0, 0, 0, 0xf0, 0x7f]);

/** Encodes a WriteRequest (not compressed). Every field is written, defaults included. */
export function encodeWriteRequest(req: WriteRequestInput): Buffer {
  let estimate = 64;
  for (const ts of req.timeseries) estimate += 8 + ts.labels.length * 40 + ts.samples.length * 20;
  const w = new ProtoWriter(estimate);
  for (const ts of req.timeseries) {
    const seriesStart = w.begin(FIELD_TIMESERIES);
    writeLabels(w, 1, ts.labels);
    for (const s of ts.samples) writeSample(w, 2, s);
    for (const e of ts.exemplars ?? []) {
      const start = w.begin(3);
      writeLabels(w, 1, e.labels);
      writeValueAndTimestamp(w, e.value, e.timestamp);
      w.end(start);
    }
    for (const h of ts.histograms ?? []) w.bytes(4, h);
    w.end(seriesStart);
  }
  for (const m of req.metadata ?? []) {
    const start = w.begin(FIELD_METADATA);
    writeMetadataBody(w, m);
    w.end(start);
  }
  return w.finish();
}

/** One MetricMetadata message body (what encodeRecordValue frames as a WriteRequest's metadata). */
export function encodeMetricMetadata(m: MetricMetadata): Buffer {
  const w = new ProtoWriter(32 + m.metricFamilyName.length + m.help.length + m.unit.length);
  writeMetadataBody(w, m);
  return w.finish();
}

function writeMetadataBody(w: ProtoWriter, m: MetricMetadata): void {
  const type = METRIC_TYPES.indexOf(m.type);
  w.tag(1, WIRE_VARINT);
  w.uvarint(type < 0 ? 0 : type);
  w.string(2, m.metricFamilyName);
  w.string(4, m.help);
  w.string(5, m.unit);
}

/** A Sample message (value = 1, timestamp = 2: the same in 1.0 and 2.0) as field `field`. */
export function writeSample(w: ProtoWriter, field: number, s: SampleInput): void {
  const start = w.begin(field);
  w.tag(1, WIRE_FIXED64);
  if (s.stale) w.bytes8(STALE_NAN_LE, 0, true);
  else w.double(s.value);
  w.tag(2, WIRE_VARINT);
  w.int64(s.timestamp);
  if (s.startTimestamp !== undefined && s.startTimestamp !== 0) {
    w.tag(3, WIRE_VARINT);
    w.int64(s.startTimestamp);
  }
  w.end(start);
}

/** An Exemplar's value = 2 and timestamp = 3 (the same in 1.0 and 2.0). */
export function writeValueAndTimestamp(w: ProtoWriter, value: number, timestamp: number): void {
  w.tag(2, WIRE_FIXED64);
  w.double(value);
  w.tag(3, WIRE_VARINT);
  w.int64(timestamp);
}

function writeLabels(w: ProtoWriter, field: number, labels: readonly Label[]): void {
  for (const l of labels) {
    const start = w.begin(field);
    w.string(1, l.name);
    w.string(2, l.value);
    w.end(start);
  }
}
