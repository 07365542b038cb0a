// The distributor's view of a remote write 2.0 request: each series' labels
// resolved from the symbols table, its samples/exemplars/histograms counted and
// its time bounds scanned, plus a view of its bytes for seriesV2ToV1. Samples are
// never materialised. A reference outside the symbols table or an odd number of
// label references fails the whole request (as Prometheus' and Mimir's decoders do).

import type { Label } from '@strata/model';
import { badV2Request } from './errors.ts';
import type { MetricMetadata, MetricType } from './messages.ts';
import {
  TAG_V2_EXEMPLAR_LABELS_REFS_PACKED,
  TAG_V2_EXEMPLAR_LABELS_REFS_VARINT,
  TAG_V2_HISTOGRAM_TIMESTAMP,
  TAG_V2_METADATA_HELP_REF,
  TAG_V2_METADATA_TYPE,
  TAG_V2_METADATA_UNIT_REF,
  TAG_V2_REQUEST_SYMBOLS,
  TAG_V2_REQUEST_TIMESERIES,
  TAG_V2_SAMPLE_TIMESTAMP,
  TAG_V2_SAMPLE_VALUE,
  TAG_V2_TS_CREATED_TIMESTAMP,
  TAG_V2_TS_EXEMPLARS,
  TAG_V2_TS_HISTOGRAMS,
  TAG_V2_TS_LABELS_REFS_PACKED,
  TAG_V2_TS_LABELS_REFS_VARINT,
  TAG_V2_TS_METADATA,
  TAG_V2_TS_SAMPLES,
  V2_METRIC_TYPES,
  WT_V2_EXEMPLAR,
  WT_V2_HISTOGRAM,
  WT_V2_METADATA,
  WT_V2_REQUEST,
  WT_V2_SAMPLE,
  WT_V2_TIMESERIES,
} from './v2-messages.ts';
import { ProtoReader } from './wire.ts';

export interface ParsedSeriesV2 {
  /** Resolved from the symbols table, in the sent order; empty values kept (validation decides). */
  labels: Label[];
  /**
   * The 2.0 TimeSeries message body (a zero-copy view of the request). It is not a
   * 1.0 TimeSeries: seriesV2ToV1 turns it into one before it is routed.
   */
  rawV2: Uint8Array;
  samples: number;
  exemplars: number;
  histograms: number;
  /** Bounds over sample and histogram timestamps (ms); Infinity / -Infinity when there are none. */
  minTimestamp: number;
  maxTimestamp: number;
  /** A label name or value symbol held bytes that are not UTF-8. */
  invalidUtf8: boolean;
  /**
   * The series' metadata as a 1.0 MetricMetadata (family name derived from the
   * metric name, see metricFamilyName); undefined when type, help and unit are all unset.
   */
  metadata: MetricMetadata | undefined;
  /** TimeSeries.created_timestamp (ms) of 2.0-rc.0 to rc.3 senders, 0 when unset; later senders put it on each sample. */
  createdTimestamp: number;
}

export interface ParsedWriteRequestV2 {
  symbols: readonly string[];
  series: ParsedSeriesV2[];
  /** The request bytes and where each symbol's UTF-8 lies in them ([start, end) pairs): the converter copies labels from here. */
  bytes: Uint8Array;
  symbolSpans: readonly number[];
}

const NAME_LABEL = '__name__';

/** Parses a decompressed `io.prometheus.write.v2.Request`. Throws RemoteWriteError (bad-input) on malformed input. */
export function parseWriteRequestV2(buf: Uint8Array): ParsedWriteRequestV2 {
  const r = new ProtoReader(buf);
  const end = buf.length;
  const symbols: string[] = [];
  const symbolSpans: number[] = [];
  let badSymbols: Set<number> | undefined;
  // Series bounds, as [start, end) pairs: protobuf lets `symbols` follow `timeseries`,
  // so references are resolved only once the whole table is known.
  const bounds: number[] = [];
  while (r.pos < end) {
    const tag = r.tag(end, 'Request');
    if (tag === TAG_V2_REQUEST_SYMBOLS) {
      const e = r.len(end, 4, 'Request');
      r.invalidUtf8 = false;
      symbols.push(r.string(r.pos, e));
      symbolSpans.push(r.pos, e);
      if (r.invalidUtf8) (badSymbols ??= new Set()).add(symbols.length - 1);
      r.pos = e;
    } else if (tag === TAG_V2_REQUEST_TIMESERIES) {
      const e = r.len(end, 5, 'Request');
      bounds.push(r.pos, e);
      r.pos = e;
    } else if (tag >>> 3 >= 1 && tag >>> 3 <= 3) {
      // Reserved in 2.0 so that a 1.0 WriteRequest (timeseries = 1, metadata = 3) sent with the 2.0 content type is caught.
      throw badV2Request(
        `field ${tag >>> 3} is reserved in io.prometheus.write.v2.Request; the body looks like a remote write 1.0 prometheus.WriteRequest: send it with Content-Type application/x-protobuf;proto=prometheus.WriteRequest`,
      );
    } else {
      r.skip(tag, end, 'Request', WT_V2_REQUEST);
    }
  }
  const ctx: SeriesContext = { r, symbols, badSymbols, refs: [], index: 0 };
  const series = new Array<ParsedSeriesV2>(bounds.length / 2);
  for (let i = 0; i < bounds.length; i += 2) {
    ctx.index = i / 2;
    r.pos = bounds[i];
    series[i / 2] = parseSeriesV2(ctx, bounds[i + 1]);
  }
  return { symbols, series, bytes: r.bytes, symbolSpans };
}

interface SeriesContext {
  r: ProtoReader;
  symbols: readonly string[];
  badSymbols: Set<number> | undefined;
  /** Scratch for one series' label references, reused across series. */
  refs: number[];
  index: number;
}

function parseSeriesV2(ctx: SeriesContext, end: number): ParsedSeriesV2 {
  const r = ctx.r;
  const start = r.pos;
  const refs = ctx.refs;
  refs.length = 0;
  let samples = 0;
  let exemplars = 0;
  let histograms = 0;
  let minTimestamp = Infinity;
  let maxTimestamp = -Infinity;
  let metadataStart = -1;
  let metadataEnd = -1;
  let createdTimestamp = 0;
  while (r.pos < end) {
    const tag = r.tag(end, 'TimeSeries');
    switch (tag) {
      case TAG_V2_TS_LABELS_REFS_PACKED:
        readPackedRefs(ctx, r.len(end, 1, 'TimeSeries'));
        break;
      case TAG_V2_TS_LABELS_REFS_VARINT:
        refs.push(readRef(ctx, end, 'TimeSeries'));
        break;
      case TAG_V2_TS_SAMPLES: {
        const t = sampleTimestamp(r, r.len(end, 2, 'TimeSeries'));
        if (t < minTimestamp) minTimestamp = t;
        if (t > maxTimestamp) maxTimestamp = t;
        samples++;
        break;
      }
      case TAG_V2_TS_HISTOGRAMS: {
        const t = histogramTimestamp(r, r.len(end, 3, 'TimeSeries'));
        if (t < minTimestamp) minTimestamp = t;
        if (t > maxTimestamp) maxTimestamp = t;
        histograms++;
        break;
      }
      case TAG_V2_TS_EXEMPLARS:
        checkExemplar(ctx, r.len(end, 4, 'TimeSeries'), exemplars);
        exemplars++;
        break;
      case TAG_V2_TS_METADATA:
        // Read after the loop: the metric name it is keyed by may come later in the message.
        metadataEnd = r.len(end, 5, 'TimeSeries');
        metadataStart = r.pos;
        r.pos = metadataEnd;
        break;
      case TAG_V2_TS_CREATED_TIMESTAMP:
        createdTimestamp = r.int64(end, 6, 'TimeSeries');
        break;
      default:
        r.skip(tag, end, 'TimeSeries', WT_V2_TIMESERIES);
    }
  }
  const labels = resolveLabels(ctx);
  let metadata: MetricMetadata | undefined;
  if (metadataStart >= 0) {
    r.pos = metadataStart;
    metadata = readMetadataV2(ctx, metadataEnd, metricNameOf(labels));
    r.pos = end;
  }
  return {
    labels,
    rawV2: r.bytes.subarray(start, end),
    samples,
    exemplars,
    histograms,
    minTimestamp,
    maxTimestamp,
    invalidUtf8: ctx.badSymbols !== undefined && refsInvalidUtf8(ctx.refs, ctx.badSymbols),
    metadata,
    createdTimestamp,
  };
}

function readPackedRefs(ctx: SeriesContext, end: number): void {
  const r = ctx.r;
  while (r.pos < end) ctx.refs.push(readRef(ctx, end, 'TimeSeries'));
}

/** The timestamp of the Sample message at [r.pos, end) (its value is only stepped over). */
function sampleTimestamp(r: ProtoReader, end: number): number {
  let t = 0;
  while (r.pos < end) {
    const st = r.tag(end, 'Sample');
    if (st === TAG_V2_SAMPLE_VALUE) r.fixed64(end, 1, 'Sample');
    else if (st === TAG_V2_SAMPLE_TIMESTAMP) t = r.int64(end, 2, 'Sample');
    else r.skip(st, end, 'Sample', WT_V2_SAMPLE);
  }
  return t;
}

/** The timestamp of the Histogram message at [r.pos, end). */
function histogramTimestamp(r: ProtoReader, end: number): number {
  let t = 0;
  while (r.pos < end) {
    const ht = r.tag(end, 'Histogram');
    if (ht === TAG_V2_HISTOGRAM_TIMESTAMP) t = r.int64(end, 15, 'Histogram');
    else r.skip(ht, end, 'Histogram', WT_V2_HISTOGRAM);
  }
  return t;
}

/** The series' label references (name, value, name, ...) resolved from the symbols table, in the sent order. */
function resolveLabels(ctx: SeriesContext): Label[] {
  const refs = ctx.refs;
  if (refs.length % 2 !== 0) {
    throw badV2Request(`timeseries[${ctx.index}] has ${refs.length} label references, an odd number; labels_refs holds name/value pairs`);
  }
  const labels = new Array<Label>(refs.length / 2);
  for (let i = 0; i < refs.length; i += 2) labels[i / 2] = { name: symbol(ctx, refs[i], 'label name'), value: symbol(ctx, refs[i + 1], 'label value') };
  return labels;
}

/** The value of the last __name__ label, or ''. */
function metricNameOf(labels: readonly Label[]): string {
  let name = '';
  for (const l of labels) if (l.name === NAME_LABEL) name = l.value;
  return name;
}

function refsInvalidUtf8(refs: readonly number[], badSymbols: ReadonlySet<number>): boolean {
  for (const ref of refs) if (badSymbols.has(ref)) return true;
  return false;
}

/** Walks one Exemplar so a bad reference fails the request here, not in the converter. */
function checkExemplar(ctx: SeriesContext, end: number, n: number): void {
  const r = ctx.r;
  let count = 0;
  while (r.pos < end) {
    const tag = r.tag(end, 'Exemplar');
    if (tag === TAG_V2_EXEMPLAR_LABELS_REFS_PACKED) {
      const e = r.len(end, 1, 'Exemplar');
      while (r.pos < e) {
        symbol(ctx, readRef(ctx, e, 'Exemplar'), 'exemplar label');
        count++;
      }
    } else if (tag === TAG_V2_EXEMPLAR_LABELS_REFS_VARINT) {
      symbol(ctx, readRef(ctx, end, 'Exemplar'), 'exemplar label');
      count++;
    } else {
      r.skip(tag, end, 'Exemplar', WT_V2_EXEMPLAR);
    }
  }
  if (count % 2 !== 0) {
    throw badV2Request(`exemplar ${n} of timeseries[${ctx.index}] has ${count} label references, an odd number; labels_refs holds name/value pairs`);
  }
}

function readMetadataV2(ctx: SeriesContext, end: number, metricName: string): MetricMetadata | undefined {
  const r = ctx.r;
  let type: MetricType = 'unknown';
  let help = '';
  let unit = '';
  while (r.pos < end) {
    const tag = r.tag(end, 'Metadata');
    if (tag === TAG_V2_METADATA_TYPE) type = V2_METRIC_TYPES[r.int64(end, 1, 'Metadata')] ?? 'unknown';
    else if (tag === TAG_V2_METADATA_HELP_REF) help = symbol(ctx, readRef(ctx, end, 'Metadata'), 'help');
    else if (tag === TAG_V2_METADATA_UNIT_REF) unit = symbol(ctx, readRef(ctx, end, 'Metadata'), 'unit');
    else r.skip(tag, end, 'Metadata', WT_V2_METADATA);
  }
  if (type === 'unknown' && help === '' && unit === '') return undefined;
  const family = metricFamilyName(metricName, type);
  if (family === '') return undefined;
  return { type, metricFamilyName: family, help, unit };
}

function readRef(ctx: SeriesContext, end: number, msg: string): number {
  const r = ctx.r;
  const at = r.pos;
  const v = r.uvarint(end, 1, msg);
  if (v > 0xffffffff) throw r.fail(`symbol reference ${v} in ${msg} does not fit uint32`, at);
  return v;
}

function symbol(ctx: SeriesContext, ref: number, what: string): string {
  const s = ctx.symbols[ref];
  if (s === undefined) {
    throw badV2Request(
      `${what} reference ${ref} in timeseries[${ctx.index}] is out of range: the request has ${ctx.symbols.length} symbols; every reference must index Request.symbols`,
    );
  }
  return s;
}

const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];
const SUMMARY_SUFFIXES = ['_sum', '_count'];

/**
 * The metric family a series belongs to, as 1.0 metadata names it: `foo` for
 * `foo_bucket` / `foo_sum` / `foo_count` of a histogram, `foo_sum` / `foo_count`
 * of a summary; any other type keeps the series' metric name.
 */
export function metricFamilyName(metricName: string, type: MetricType): string {
  const suffixes = type === 'histogram' || type === 'gaugehistogram' ? HISTOGRAM_SUFFIXES : type === 'summary' ? SUMMARY_SUFFIXES : undefined;
  if (suffixes !== undefined) {
    for (const s of suffixes) {
      if (metricName.length > s.length && metricName.endsWith(s)) return metricName.slice(0, -s.length);
    }
  }
  return metricName;
}
