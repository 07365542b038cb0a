// The ingester's view of a record value (a remote write 1.0 WriteRequest): labels
// as byte ranges (decoded on demand), sample values copied byte for byte so NaN
// payloads such as the stale marker survive. Must never turn a value into a JS number on the way.

import type { Label } from '@strata/model';
import {
  TAG_EXEMPLAR_LABELS,
  TAG_EXEMPLAR_TIMESTAMP,
  TAG_EXEMPLAR_VALUE,
  TAG_SAMPLE_START_TIMESTAMP,
  TAG_SAMPLE_TIMESTAMP,
  TAG_SAMPLE_VALUE,
  TAG_TIMESERIES_EXEMPLARS,
  TAG_TIMESERIES_HISTOGRAMS,
  TAG_TIMESERIES_LABELS,
  TAG_TIMESERIES_SAMPLES,
  TAG_WRITE_REQUEST_METADATA,
  TAG_WRITE_REQUEST_TIMESERIES,
  WT_EXEMPLAR,
  WT_SAMPLE,
  WT_TIMESERIES,
  WT_WRITE_REQUEST,
  readLabel,
  readMetadata,
  type MetricMetadata,
} from './messages.ts';
import { readHistogram, type DecodedHistogram } from './histogram.ts';
import { LITTLE_ENDIAN, ProtoReader } from './wire.ts';
import { LabelRanges, RangedLabels } from './label-ranges.ts';

export interface DecodedExemplar {
  labels: Label[];
  value: number;
  timestamp: number;
}

/** One series; its labels are byte ranges of the record, decoded on first use (`labels`). */
export class DecodedSeries extends RangedLabels {
  readonly timestamps: Float64Array;
  readonly values: Float64Array;
  readonly exemplars: DecodedExemplar[];
  readonly histograms: number;
  readonly histogramSamples: DecodedHistogram[];
  /** Each sample's start (created) timestamp, 0 where it has none; undefined when none has one. */
  starts: Float64Array | undefined = undefined;

  constructor(
    reader: ProtoReader,
    ranges: LabelRanges,
    firstLabel: number,
    /**
     * Views into one ArrayBuffer shared by every series of the request (one
     * allocation per request, not two per series); copy them to keep them long.
     */
    timestamps: Float64Array,
    values: Float64Array,
    exemplars: DecodedExemplar[],
    /** Number of native histogram samples (histogramSamples.length). */
    histograms: number,
    /** The native histogram samples as sent, not yet validated (validateHistogram). */
    histogramSamples: DecodedHistogram[] = [],
  ) {
    super(reader, ranges, firstLabel);
    this.timestamps = timestamps;
    this.values = values;
    this.exemplars = exemplars;
    this.histograms = histograms;
    this.histogramSamples = histogramSamples;
  }
}

export interface DecodedWriteRequest {
  timeseries: DecodedSeries[];
  metadata: MetricMetadata[];
}

/** Decodes a WriteRequest in full. Throws RemoteWriteError 'bad-protobuf' on malformed input. */
export function decodeWriteRequest(buf: Uint8Array): DecodedWriteRequest {
  const r = new ProtoReader(buf);
  const end = buf.length;
  // Pass 1: count each series' samples, so all of them fit one ArrayBuffer.
  const counts = countSamples(r, end);
  const samples = sampleStore(r, counts);
  const view = new DataView(samples.src.buffer, samples.src.byteOffset, samples.src.byteLength);

  // Pass 2: decode.
  const timeseries: DecodedSeries[] = [];
  const metadata: MetricMetadata[] = [];
  const ranges = new LabelRanges();
  let seriesIndex = 0;
  let offset = 0;
  r.pos = 0;
  while (r.pos < end) {
    const tag = r.tag(end, 'WriteRequest');
    if (tag === TAG_WRITE_REQUEST_TIMESERIES) {
      const seriesEnd = r.len(end, 1, 'WriteRequest');
      const n = counts[seriesIndex++];
      timeseries.push(readSeries(r, seriesEnd, ranges, samples, offset, n, view));
      offset += n;
    } else if (tag === TAG_WRITE_REQUEST_METADATA) {
      const e = r.len(end, 3, 'WriteRequest');
      metadata.push(readMetadata(r, e));
    } else {
      r.skip(tag, end, 'WriteRequest', WT_WRITE_REQUEST);
    }
  }
  return { timeseries, metadata };
}

/** Each TimeSeries' number of samples, in order. */
function countSamples(r: ProtoReader, end: number): number[] {
  const counts: number[] = [];
  while (r.pos < end) {
    const tag = r.tag(end, 'WriteRequest');
    if (tag === TAG_WRITE_REQUEST_TIMESERIES) {
      const e = r.len(end, 1, 'WriteRequest');
      let n = 0;
      while (r.pos < e) {
        const t = r.tag(e, 'TimeSeries');
        if (t === TAG_TIMESERIES_SAMPLES) n++;
        r.skip(t, e, 'TimeSeries', WT_TIMESERIES);
      }
      counts.push(n);
    } else {
      r.skip(tag, end, 'WriteRequest', WT_WRITE_REQUEST);
    }
  }
  return counts;
}

/** Where a request's samples go: one ArrayBuffer, every timestamp, then every value's 8 bytes. */
interface SampleStore {
  /** The request bytes the values are copied from. */
  src: Uint8Array;
  store: ArrayBuffer;
  total: number;
  timestamps: Float64Array;
  valueBytes: Uint8Array;
  /** Start timestamps, made when the first one is met (most records have none). */
  starts: Float64Array | undefined;
}

function sampleStore(r: ProtoReader, counts: readonly number[]): SampleStore {
  let total = 0;
  for (const n of counts) total += n;
  const store = new ArrayBuffer(total * 16);
  return {
    src: r.buf,
    store,
    total,
    timestamps: new Float64Array(store, 0, total),
    valueBytes: new Uint8Array(store, total * 8, total * 8),
    starts: undefined,
  };
}

/** One TimeSeries message ending at `seriesEnd`: its `n` samples go to the store from index `offset`. */
function readSeries(r: ProtoReader, seriesEnd: number, ranges: LabelRanges, samples: SampleStore, offset: number, n: number, view: DataView): DecodedSeries {
  const firstLabel = ranges.labels;
  ranges.beginSeries();
  const exemplars: DecodedExemplar[] = [];
  const histograms: DecodedHistogram[] = [];
  let i = offset;
  let starts = false;
  while (r.pos < seriesEnd) {
    const fieldStart = r.pos;
    const t = r.tag(seriesEnd, 'TimeSeries');
    switch (t) {
      case TAG_TIMESERIES_LABELS:
        ranges.read(r, r.len(seriesEnd, 1, 'TimeSeries'), fieldStart);
        break;
      case TAG_TIMESERIES_SAMPLES:
        if (readSample(r, r.len(seriesEnd, 2, 'TimeSeries'), samples, i++)) starts = true;
        break;
      case TAG_TIMESERIES_EXEMPLARS:
        exemplars.push(readExemplar(r, r.len(seriesEnd, 3, 'TimeSeries'), view));
        break;
      case TAG_TIMESERIES_HISTOGRAMS:
        histograms.push(readHistogram(r, r.len(seriesEnd, 4, 'TimeSeries')));
        break;
      default:
        r.skip(t, seriesEnd, 'TimeSeries', WT_TIMESERIES);
    }
  }
  const { store, total } = samples;
  const series = new DecodedSeries(
    r,
    ranges,
    firstLabel,
    new Float64Array(store, offset * 8, n),
    new Float64Array(store, (total + offset) * 8, n),
    exemplars,
    histograms.length,
    histograms,
  );
  if (starts) series.starts = samples.starts!.subarray(offset, offset + n);
  return series;
}

/** The Sample message at [r.pos, end) into sample `i` of the store; true when it has a start timestamp. */
function readSample(r: ProtoReader, end: number, samples: SampleStore, i: number): boolean {
  let ts = 0;
  let valueAt = -1;
  let start = 0;
  while (r.pos < end) {
    const st = r.tag(end, 'Sample');
    if (st === TAG_SAMPLE_VALUE) {
      valueAt = r.pos;
      r.fixed64(end, 1, 'Sample');
    } else if (st === TAG_SAMPLE_TIMESTAMP) {
      ts = r.int64(end, 2, 'Sample');
    } else if (st === TAG_SAMPLE_START_TIMESTAMP) {
      start = r.int64(end, 3, 'Sample');
    } else {
      r.skip(st, end, 'Sample', WT_SAMPLE);
    }
  }
  samples.timestamps[i] = ts;
  if (valueAt >= 0) {
    // Byte copy: a JS number round trip may canonicalise NaN payloads.
    const o = i * 8;
    const src = samples.src;
    const dst = samples.valueBytes;
    if (LITTLE_ENDIAN) for (let k = 0; k < 8; k++) dst[o + k] = src[valueAt + k];
    else for (let k = 0; k < 8; k++) dst[o + k] = src[valueAt + 7 - k];
  }
  if (start === 0) return false;
  (samples.starts ??= new Float64Array(samples.total))[i] = start;
  return true;
}

function readExemplar(r: ProtoReader, end: number, view: DataView): DecodedExemplar {
  const labels: Label[] = [];
  let value = 0;
  let timestamp = 0;
  while (r.pos < end) {
    const tag = r.tag(end, 'Exemplar');
    if (tag === TAG_EXEMPLAR_LABELS) {
      const e = r.len(end, 1, 'Exemplar');
      labels.push(readLabel(r, e));
    } else if (tag === TAG_EXEMPLAR_VALUE) {
      const at = r.pos;
      r.fixed64(end, 2, 'Exemplar');
      value = view.getFloat64(at, true);
    } else if (tag === TAG_EXEMPLAR_TIMESTAMP) {
      timestamp = r.int64(end, 3, 'Exemplar');
    } else {
      r.skip(tag, end, 'Exemplar', WT_EXEMPLAR);
    }
  }
  return { labels, value, timestamp };
}
