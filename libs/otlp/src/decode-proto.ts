// OTLP/HTTP protobuf: decodes an ExportMetricsServiceRequest
// (opentelemetry/proto/collector/metrics/v1/metrics_service.proto and the
// metrics, common and resource protos it uses) with the remote-write wire reader.
// Only what becomes series is kept; exponential histogram points are counted.

import { ProtoReader, RemoteWriteError } from '@strata/remote-write';
import { MAX_VALUE_DEPTH, RawMap, valueAsString, type RawValue } from './any-value.ts';
import { OtlpError } from './errors.ts';
import type {
  ExponentialBuckets,
  ExponentialHistogramDataPoint,
  ExportMetricsRequest,
  HistogramDataPoint,
  KeyValue,
  NumberDataPoint,
  OtlpExemplar,
  OtlpMetric,
  ResourceMetrics,
  ScopeMetrics,
  SummaryDataPoint,
  Temporality,
} from './model.ts';

// Wire type of each field by number (-1: unchecked). Fields not listed are skipped.
const WT_RESOURCE_METRICS = [-1, 2, 2, 2];
const WT_RESOURCE = [-1, 2, 0];
const WT_SCOPE_METRICS = [-1, 2, 2, 2];
const WT_SCOPE = [-1, 2, 2, 2, 0];
const WT_METRIC = [-1, 2, 2, 2, -1, 2, -1, 2, -1, 2, 2, 2, 2];
const WT_SUM = [-1, 2, 0, 0];
const WT_NUMBER_POINT = [-1, -1, 1, 1, 1, 2, 1, 2, 0];
const WT_HISTOGRAM_POINT = [-1, -1, 1, 1, 1, 1, -1, -1, 2, 2, 0, 1, 1];
const WT_SUMMARY_POINT = [-1, -1, 1, 1, 1, 1, 2, 2, 0];
const WT_QUANTILE = [-1, 1, 1];
const WT_EXEMPLAR = [-1, -1, 1, 1, 2, 2, 1, 2];
const WT_KEY_VALUE = [-1, 2, 2];
const WT_ANY_VALUE = [-1, 2, 0, 0, 1, 2, 2, 2];

/** Decodes an ExportMetricsServiceRequest. Throws OtlpError 'bad-protobuf' (bad-input) on malformed input. */
export function decodeExportRequest(body: Uint8Array): ExportMetricsRequest {
  const r = new ProtoReader(body);
  try {
    const resourceMetrics: ResourceMetrics[] = [];
    const end = body.length;
    while (r.pos < end) {
      const tag = r.tag(end, 'ExportMetricsServiceRequest');
      if (tag === 0x0a) resourceMetrics.push(readResourceMetrics(r, r.len(end, 1, 'ExportMetricsServiceRequest')));
      else r.skip(tag, end, 'ExportMetricsServiceRequest', [-1, 2]);
    }
    return { resourceMetrics };
  } catch (err) {
    if (err instanceof RemoteWriteError) throw new OtlpError('bad-protobuf', err.message);
    throw err;
  }
}

function readResourceMetrics(r: ProtoReader, end: number): ResourceMetrics {
  const resource: KeyValue[] = [];
  const scopeMetrics: ScopeMetrics[] = [];
  while (r.pos < end) {
    const tag = r.tag(end, 'ResourceMetrics');
    if (tag === 0x0a) {
      const e = r.len(end, 1, 'ResourceMetrics');
      while (r.pos < e) {
        const t = r.tag(e, 'Resource');
        if (t === 0x0a) resource.push(readKeyValue(r, r.len(e, 1, 'Resource')));
        else r.skip(t, e, 'Resource', WT_RESOURCE);
      }
    } else if (tag === 0x12) {
      scopeMetrics.push(readScopeMetrics(r, r.len(end, 2, 'ResourceMetrics')));
    } else {
      r.skip(tag, end, 'ResourceMetrics', WT_RESOURCE_METRICS);
    }
  }
  return { resource, scopeMetrics };
}

function readScopeMetrics(r: ProtoReader, end: number): ScopeMetrics {
  const scope = { name: '', version: '', attributes: [] as KeyValue[] };
  const metrics: OtlpMetric[] = [];
  let schemaUrl = '';
  while (r.pos < end) {
    const tag = r.tag(end, 'ScopeMetrics');
    if (tag === 0x0a) {
      const e = r.len(end, 1, 'ScopeMetrics');
      while (r.pos < e) {
        const t = r.tag(e, 'InstrumentationScope');
        if (t === 0x0a) scope.name = readString(r, e, 1, 'InstrumentationScope');
        else if (t === 0x12) scope.version = readString(r, e, 2, 'InstrumentationScope');
        else if (t === 0x1a) scope.attributes.push(readKeyValue(r, r.len(e, 3, 'InstrumentationScope')));
        else r.skip(t, e, 'InstrumentationScope', WT_SCOPE);
      }
    } else if (tag === 0x12) {
      metrics.push(readMetric(r, r.len(end, 2, 'ScopeMetrics')));
    } else if (tag === 0x1a) {
      schemaUrl = readString(r, end, 3, 'ScopeMetrics');
    } else {
      r.skip(tag, end, 'ScopeMetrics', WT_SCOPE_METRICS);
    }
  }
  return { scope, schemaUrl, metrics };
}

function readMetric(r: ProtoReader, end: number): OtlpMetric {
  const m: OtlpMetric = {
    name: '',
    description: '',
    unit: '',
    kind: 'empty',
    temporality: 0,
    monotonic: false,
    numberPoints: [],
    histogramPoints: [],
    summaryPoints: [],
    exponentialPoints: [],
    exponentialPointCount: 0,
  };
  while (r.pos < end) {
    const tag = r.tag(end, 'Metric');
    switch (tag) {
      case 0x0a:
        m.name = readString(r, end, 1, 'Metric');
        break;
      case 0x12:
        m.description = readString(r, end, 2, 'Metric');
        break;
      case 0x1a:
        m.unit = readString(r, end, 3, 'Metric');
        break;
      case 0x2a: // gauge
        m.kind = 'gauge';
        readPoints(r, r.len(end, 5, 'Metric'), 'Gauge', (e) => m.numberPoints.push(readNumberPoint(r, e)));
        break;
      case 0x3a: // sum
        m.kind = 'sum';
        readSum(r, r.len(end, 7, 'Metric'), m);
        break;
      case 0x4a: // histogram
        m.kind = 'histogram';
        readExplicitHistogram(r, r.len(end, 9, 'Metric'), m);
        break;
      case 0x52: // exponential_histogram
        m.kind = 'exponential_histogram';
        readExponentialHistogram(r, r.len(end, 10, 'Metric'), m);
        break;
      case 0x5a: // summary
        m.kind = 'summary';
        readPoints(r, r.len(end, 11, 'Metric'), 'Summary', (e) => m.summaryPoints.push(readSummaryPoint(r, e)));
        break;
      default:
        r.skip(tag, end, 'Metric', WT_METRIC);
    }
  }
  return m;
}

function readSum(r: ProtoReader, end: number, m: OtlpMetric): void {
  while (r.pos < end) {
    const t = r.tag(end, 'Sum');
    if (t === 0x0a) m.numberPoints.push(readNumberPoint(r, r.len(end, 1, 'Sum')));
    else if (t === 0x10) m.temporality = temporality(r.uvarint(end, 2, 'Sum'));
    else if (t === 0x18) m.monotonic = r.uvarint(end, 3, 'Sum') !== 0;
    else r.skip(t, end, 'Sum', WT_SUM);
  }
}

function readExplicitHistogram(r: ProtoReader, end: number, m: OtlpMetric): void {
  while (r.pos < end) {
    const t = r.tag(end, 'Histogram');
    if (t === 0x0a) m.histogramPoints.push(readHistogramPoint(r, r.len(end, 1, 'Histogram')));
    else if (t === 0x10) m.temporality = temporality(r.uvarint(end, 2, 'Histogram'));
    else r.skip(t, end, 'Histogram', [-1, 2, 0]);
  }
}

function readExponentialHistogram(r: ProtoReader, end: number, m: OtlpMetric): void {
  while (r.pos < end) {
    const t = r.tag(end, 'ExponentialHistogram');
    if (t === 0x0a) {
      m.exponentialPoints.push(readExponentialPoint(r, r.len(end, 1, 'ExponentialHistogram')));
      m.exponentialPointCount++;
    } else if (t === 0x10) {
      m.temporality = temporality(r.uvarint(end, 2, 'ExponentialHistogram'));
    } else {
      r.skip(t, end, 'ExponentialHistogram', [-1, 2, 0]);
    }
  }
}

/** Messages whose only kept field is `repeated X data_points = 1`. */
function readPoints(r: ProtoReader, end: number, msg: string, read: (end: number) => void): void {
  while (r.pos < end) {
    const t = r.tag(end, msg);
    if (t === 0x0a) read(r.len(end, 1, msg));
    else r.skip(t, end, msg, [-1, 2]);
  }
}

function readNumberPoint(r: ProtoReader, end: number): NumberDataPoint {
  const p: NumberDataPoint = { attributes: [], startTimeUnixNano: 0n, timeUnixNano: 0n, value: 0, exemplars: [], flags: 0 };
  while (r.pos < end) {
    const tag = r.tag(end, 'NumberDataPoint');
    switch (tag) {
      case 0x3a:
        p.attributes.push(readKeyValue(r, r.len(end, 7, 'NumberDataPoint')));
        break;
      case 0x11:
        p.startTimeUnixNano = readFixed64(r, end, 2, 'NumberDataPoint');
        break;
      case 0x19:
        p.timeUnixNano = readFixed64(r, end, 3, 'NumberDataPoint');
        break;
      case 0x21:
        p.value = readDouble(r, end, 4, 'NumberDataPoint');
        break;
      case 0x31:
        p.value = Number(BigInt.asIntN(64, readFixed64(r, end, 6, 'NumberDataPoint')));
        break;
      case 0x2a:
        p.exemplars.push(readExemplar(r, r.len(end, 5, 'NumberDataPoint')));
        break;
      case 0x40:
        p.flags = r.uvarint(end, 8, 'NumberDataPoint');
        break;
      default:
        r.skip(tag, end, 'NumberDataPoint', WT_NUMBER_POINT);
    }
  }
  return p;
}

function readHistogramPoint(r: ProtoReader, end: number): HistogramDataPoint {
  const p: HistogramDataPoint = {
    attributes: [],
    startTimeUnixNano: 0n,
    timeUnixNano: 0n,
    count: 0,
    sum: undefined,
    bucketCounts: [],
    explicitBounds: [],
    exemplars: [],
    flags: 0,
  };
  while (r.pos < end) {
    const tag = r.tag(end, 'HistogramDataPoint');
    switch (tag) {
      case 0x4a:
        p.attributes.push(readKeyValue(r, r.len(end, 9, 'HistogramDataPoint')));
        break;
      case 0x11:
        p.startTimeUnixNano = readFixed64(r, end, 2, 'HistogramDataPoint');
        break;
      case 0x19:
        p.timeUnixNano = readFixed64(r, end, 3, 'HistogramDataPoint');
        break;
      case 0x21:
        p.count = Number(readFixed64(r, end, 4, 'HistogramDataPoint'));
        break;
      case 0x29:
        p.sum = readDouble(r, end, 5, 'HistogramDataPoint');
        break;
      case 0x32: {
        // packed fixed64
        const e = packedEnd(r, end, 6, 'HistogramDataPoint');
        while (r.pos < e) p.bucketCounts.push(Number(readFixed64(r, e, 6, 'HistogramDataPoint')));
        break;
      }
      case 0x31:
        p.bucketCounts.push(Number(readFixed64(r, end, 6, 'HistogramDataPoint')));
        break;
      case 0x3a: {
        // packed double
        const e = packedEnd(r, end, 7, 'HistogramDataPoint');
        while (r.pos < e) p.explicitBounds.push(readDouble(r, e, 7, 'HistogramDataPoint'));
        break;
      }
      case 0x39:
        p.explicitBounds.push(readDouble(r, end, 7, 'HistogramDataPoint'));
        break;
      case 0x42:
        p.exemplars.push(readExemplar(r, r.len(end, 8, 'HistogramDataPoint')));
        break;
      case 0x50:
        p.flags = r.uvarint(end, 10, 'HistogramDataPoint');
        break;
      default:
        r.skip(tag, end, 'HistogramDataPoint', WT_HISTOGRAM_POINT);
    }
  }
  return p;
}

function readBuckets(r: ProtoReader, end: number): ExponentialBuckets {
  const b: ExponentialBuckets = { offset: 0, bucketCounts: [] };
  while (r.pos < end) {
    const tag = r.tag(end, 'Buckets');
    if (tag === 0x08) {
      const z = r.uvarint(end, 1, 'Buckets');
      b.offset = z % 2 === 1 ? -(z + 1) / 2 : z / 2;
    } else if (tag === 0x12) {
      const e = r.len(end, 2, 'Buckets');
      while (r.pos < e) b.bucketCounts.push(r.uvarint(e, 2, 'Buckets'));
    } else if (tag === 0x10) {
      b.bucketCounts.push(r.uvarint(end, 2, 'Buckets'));
    } else {
      r.skip(tag, end, 'Buckets');
    }
  }
  return b;
}

function readExponentialPoint(r: ProtoReader, end: number): ExponentialHistogramDataPoint {
  const p: ExponentialHistogramDataPoint = {
    attributes: [],
    startTimeUnixNano: 0n,
    timeUnixNano: 0n,
    count: 0,
    sum: undefined,
    scale: 0,
    zeroCount: 0,
    zeroThreshold: 0,
    positive: { offset: 0, bucketCounts: [] },
    negative: { offset: 0, bucketCounts: [] },
    exemplars: [],
    flags: 0,
  };
  const msg = 'ExponentialHistogramDataPoint';
  while (r.pos < end) {
    const tag = r.tag(end, msg);
    switch (tag) {
      case 0x0a:
        p.attributes.push(readKeyValue(r, r.len(end, 1, msg)));
        break;
      case 0x11:
        p.startTimeUnixNano = readFixed64(r, end, 2, msg);
        break;
      case 0x19:
        p.timeUnixNano = readFixed64(r, end, 3, msg);
        break;
      case 0x21:
        p.count = Number(readFixed64(r, end, 4, msg));
        break;
      case 0x29:
        p.sum = readDouble(r, end, 5, msg);
        break;
      case 0x30: {
        const z = r.uvarint(end, 6, msg);
        p.scale = z % 2 === 1 ? -(z + 1) / 2 : z / 2;
        break;
      }
      case 0x39:
        p.zeroCount = Number(readFixed64(r, end, 7, msg));
        break;
      case 0x42:
        p.positive = readBuckets(r, r.len(end, 8, msg));
        break;
      case 0x4a:
        p.negative = readBuckets(r, r.len(end, 9, msg));
        break;
      case 0x50:
        p.flags = r.uvarint(end, 10, msg);
        break;
      case 0x5a:
        p.exemplars.push(readExemplar(r, r.len(end, 11, msg)));
        break;
      case 0x71:
        p.zeroThreshold = readDouble(r, end, 14, msg);
        break;
      default:
        r.skip(tag, end, msg);
    }
  }
  return p;
}

function readSummaryPoint(r: ProtoReader, end: number): SummaryDataPoint {
  const p: SummaryDataPoint = { attributes: [], startTimeUnixNano: 0n, timeUnixNano: 0n, count: 0, sum: 0, quantileValues: [], flags: 0 };
  while (r.pos < end) {
    const tag = r.tag(end, 'SummaryDataPoint');
    switch (tag) {
      case 0x3a:
        p.attributes.push(readKeyValue(r, r.len(end, 7, 'SummaryDataPoint')));
        break;
      case 0x11:
        p.startTimeUnixNano = readFixed64(r, end, 2, 'SummaryDataPoint');
        break;
      case 0x19:
        p.timeUnixNano = readFixed64(r, end, 3, 'SummaryDataPoint');
        break;
      case 0x21:
        p.count = Number(readFixed64(r, end, 4, 'SummaryDataPoint'));
        break;
      case 0x29:
        p.sum = readDouble(r, end, 5, 'SummaryDataPoint');
        break;
      case 0x32: {
        const e = r.len(end, 6, 'SummaryDataPoint');
        const q = { quantile: 0, value: 0 };
        while (r.pos < e) {
          const t = r.tag(e, 'ValueAtQuantile');
          if (t === 0x09) q.quantile = readDouble(r, e, 1, 'ValueAtQuantile');
          else if (t === 0x11) q.value = readDouble(r, e, 2, 'ValueAtQuantile');
          else r.skip(t, e, 'ValueAtQuantile', WT_QUANTILE);
        }
        p.quantileValues.push(q);
        break;
      }
      case 0x40:
        p.flags = r.uvarint(end, 8, 'SummaryDataPoint');
        break;
      default:
        r.skip(tag, end, 'SummaryDataPoint', WT_SUMMARY_POINT);
    }
  }
  return p;
}

function readExemplar(r: ProtoReader, end: number): OtlpExemplar {
  const x: OtlpExemplar = { filteredAttributes: [], timeUnixNano: 0n, value: 0, spanId: EMPTY, traceId: EMPTY };
  while (r.pos < end) {
    const tag = r.tag(end, 'Exemplar');
    switch (tag) {
      case 0x3a:
        x.filteredAttributes.push(readKeyValue(r, r.len(end, 7, 'Exemplar')));
        break;
      case 0x11:
        x.timeUnixNano = readFixed64(r, end, 2, 'Exemplar');
        break;
      case 0x19:
        x.value = readDouble(r, end, 3, 'Exemplar');
        break;
      case 0x31:
        x.value = Number(BigInt.asIntN(64, readFixed64(r, end, 6, 'Exemplar')));
        break;
      case 0x22:
        x.spanId = readId(r, end, 4, 8, 'span_id');
        break;
      case 0x2a:
        x.traceId = readId(r, end, 5, 16, 'trace_id');
        break;
      default:
        r.skip(tag, end, 'Exemplar', WT_EXEMPLAR);
    }
  }
  return x;
}

const EMPTY = new Uint8Array(0);

function readId(r: ProtoReader, end: number, field: number, size: number, what: string): Uint8Array {
  const at = r.fieldStart;
  const e = r.len(end, field, 'Exemplar');
  const n = e - r.pos;
  if (n !== 0 && n !== size) throw r.fail(`exemplar ${what} is ${n} bytes, must be ${size} (or empty)`, at);
  const id = r.bytes.slice(r.pos, e);
  r.pos = e;
  return id;
}

function readKeyValue(r: ProtoReader, end: number, depth = 0): KeyValue {
  let key = '';
  let value: RawValue = null;
  while (r.pos < end) {
    const tag = r.tag(end, 'KeyValue');
    if (tag === 0x0a) key = readString(r, end, 1, 'KeyValue');
    else if (tag === 0x12) value = readAnyValue(r, r.len(end, 2, 'KeyValue'), depth);
    else r.skip(tag, end, 'KeyValue', WT_KEY_VALUE);
  }
  return { key, value: valueAsString(value) };
}

function readAnyValue(r: ProtoReader, end: number, depth: number): RawValue {
  if (depth > MAX_VALUE_DEPTH) throw r.fail(`attribute value nested deeper than ${MAX_VALUE_DEPTH} levels`, r.pos);
  let v: RawValue = null;
  while (r.pos < end) {
    const tag = r.tag(end, 'AnyValue');
    switch (tag) {
      case 0x0a:
        v = readString(r, end, 1, 'AnyValue');
        break;
      case 0x10:
        v = r.uvarint(end, 2, 'AnyValue') !== 0;
        break;
      case 0x18:
        v = readInt64Big(r, end, 3, 'AnyValue');
        break;
      case 0x21:
        v = readDouble(r, end, 4, 'AnyValue');
        break;
      case 0x2a: {
        const e = r.len(end, 5, 'AnyValue');
        const items: RawValue[] = [];
        while (r.pos < e) {
          const t = r.tag(e, 'ArrayValue');
          if (t === 0x0a) items.push(readAnyValue(r, r.len(e, 1, 'ArrayValue'), depth + 1));
          else r.skip(t, e, 'ArrayValue', [-1, 2]);
        }
        v = items;
        break;
      }
      case 0x32: {
        const e = r.len(end, 6, 'AnyValue');
        const entries: [string, RawValue][] = [];
        while (r.pos < e) {
          const t = r.tag(e, 'KeyValueList');
          if (t === 0x0a) {
            const ke = r.len(e, 1, 'KeyValueList');
            let k = '';
            let x: RawValue = null;
            while (r.pos < ke) {
              const tt = r.tag(ke, 'KeyValue');
              if (tt === 0x0a) k = readString(r, ke, 1, 'KeyValue');
              else if (tt === 0x12) x = readAnyValue(r, r.len(ke, 2, 'KeyValue'), depth + 1);
              else r.skip(tt, ke, 'KeyValue', WT_KEY_VALUE);
            }
            entries.push([k, x]);
          } else {
            r.skip(t, e, 'KeyValueList', [-1, 2]);
          }
        }
        v = new RawMap(entries);
        break;
      }
      case 0x3a: {
        const e = r.len(end, 7, 'AnyValue');
        v = r.bytes.slice(r.pos, e);
        r.pos = e;
        break;
      }
      default:
        r.skip(tag, end, 'AnyValue', WT_ANY_VALUE);
    }
  }
  return v;
}

function temporality(v: number): Temporality {
  return v === 1 || v === 2 ? v : 0;
}

function readString(r: ProtoReader, end: number, field: number, msg: string): string {
  const e = r.len(end, field, msg);
  const s = r.string(r.pos, e);
  r.pos = e;
  return s;
}

function readFixed64(r: ProtoReader, end: number, field: number, msg: string): bigint {
  const at = r.pos;
  r.fixed64(end, field, msg);
  return r.buf.readBigUInt64LE(at);
}

function readDouble(r: ProtoReader, end: number, field: number, msg: string): number {
  const at = r.pos;
  r.fixed64(end, field, msg);
  return r.buf.readDoubleLE(at);
}

/** The end of a packed run of 8-byte values; its length must be a multiple of 8. */
function packedEnd(r: ProtoReader, end: number, field: number, msg: string): number {
  const at = r.fieldStart;
  const e = r.len(end, field, msg);
  if ((e - r.pos) % 8 !== 0) throw r.fail(`packed field ${field} of ${msg} is ${e - r.pos} bytes, not a multiple of 8`, at);
  return e;
}

/** An int64 varint exactly, as a bigint (attribute values may exceed 2^53). */
function readInt64Big(r: ProtoReader, end: number, field: number, msg: string): bigint {
  const start = r.pos;
  r.uvarint(end, field, msg); // bounds and overflow checks
  let v = 0n;
  let shift = 0n;
  for (let i = start; i < r.pos; i++) {
    v |= BigInt(r.buf[i] & 0x7f) << shift;
    shift += 7n;
  }
  return BigInt.asIntN(64, v);
}
