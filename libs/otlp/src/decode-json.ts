// OTLP/HTTP JSON (the protobuf JSON mapping with OTLP's deviations): field names
// in lowerCamelCase (snake_case accepted too), 64-bit integers as strings or numbers,
// trace and span ids as hex, enums as integers or names. Unknown fields are ignored.

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
  SummaryDataPoint,
  Temporality,
} from './model.ts';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

/** Decodes an ExportMetricsServiceRequest in OTLP/JSON. Throws OtlpError 'bad-json' (bad-input) naming the path. */
export function decodeExportRequestJson(body: Uint8Array | string): ExportMetricsRequest {
  let root: Json;
  try {
    root = JSON.parse(typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as Json;
  } catch (err) {
    throw new OtlpError('bad-json', `OTLP JSON: ${(err as Error).message}`);
  }
  const req = obj(root, '$');
  return { resourceMetrics: list(req, 'resourceMetrics', '$').map((rm, i) => resourceMetrics(obj(rm, `resourceMetrics[${i}]`), `resourceMetrics[${i}]`)) };
}

function resourceMetrics(o: Obj, path: string): ResourceMetrics {
  const resource = field(o, 'resource');
  return {
    resource: resource === undefined || resource === null ? [] : attributes(obj(resource, `${path}.resource`), 'attributes', `${path}.resource`),
    scopeMetrics: list(o, 'scopeMetrics', path).map((sm, i) => {
      const p = `${path}.scopeMetrics[${i}]`;
      const s = obj(sm, p);
      const scope = field(s, 'scope');
      const so = scope === undefined || scope === null ? {} : obj(scope, `${p}.scope`);
      return {
        scope: { name: str(so, 'name', p), version: str(so, 'version', p), attributes: attributes(so, 'attributes', `${p}.scope`) },
        schemaUrl: str(s, 'schemaUrl', p),
        metrics: list(s, 'metrics', p).map((m, j) => metric(obj(m, `${p}.metrics[${j}]`), `${p}.metrics[${j}]`)),
      };
    }),
  };
}

function metric(o: Obj, path: string): OtlpMetric {
  const m: OtlpMetric = {
    name: str(o, 'name', path),
    description: str(o, 'description', path),
    unit: str(o, 'unit', path),
    kind: 'empty',
    temporality: 0,
    monotonic: false,
    numberPoints: [],
    histogramPoints: [],
    summaryPoints: [],
    exponentialPoints: [],
    exponentialPointCount: 0,
  };
  let data: Json | undefined;
  if ((data = field(o, 'gauge')) != null) {
    m.kind = 'gauge';
    m.numberPoints = points(obj(data, `${path}.gauge`), `${path}.gauge`, numberPoint);
  } else if ((data = field(o, 'sum')) != null) {
    const s = obj(data, `${path}.sum`);
    m.kind = 'sum';
    m.numberPoints = points(s, `${path}.sum`, numberPoint);
    m.temporality = temporality(s, `${path}.sum`);
    m.monotonic = bool(s, 'isMonotonic', `${path}.sum`);
  } else if ((data = field(o, 'histogram')) != null) {
    const h = obj(data, `${path}.histogram`);
    m.kind = 'histogram';
    m.histogramPoints = points(h, `${path}.histogram`, histogramPoint);
    m.temporality = temporality(h, `${path}.histogram`);
  } else if ((data = field(o, 'exponentialHistogram')) != null) {
    const h = obj(data, `${path}.exponentialHistogram`);
    m.kind = 'exponential_histogram';
    m.exponentialPoints = points(h, `${path}.exponentialHistogram`, exponentialPoint);
    m.exponentialPointCount = m.exponentialPoints.length;
    m.temporality = temporality(h, `${path}.exponentialHistogram`);
  } else if ((data = field(o, 'summary')) != null) {
    m.kind = 'summary';
    m.summaryPoints = points(obj(data, `${path}.summary`), `${path}.summary`, summaryPoint);
  }
  return m;
}

function points<T>(o: Obj, path: string, read: (o: Obj, path: string) => T): T[] {
  return list(o, 'dataPoints', path).map((p, i) => read(obj(p, `${path}.dataPoints[${i}]`), `${path}.dataPoints[${i}]`));
}

function numberPoint(o: Obj, path: string): NumberDataPoint {
  const asInt = field(o, 'asInt');
  return {
    attributes: attributes(o, 'attributes', path),
    startTimeUnixNano: uint64(o, 'startTimeUnixNano', path),
    timeUnixNano: uint64(o, 'timeUnixNano', path),
    value: asInt != null ? Number(int64(asInt, `${path}.asInt`)) : double(o, 'asDouble', path),
    exemplars: exemplars(o, path),
    flags: Number(uint64(o, 'flags', path)),
  };
}

function histogramPoint(o: Obj, path: string): HistogramDataPoint {
  const sum = field(o, 'sum');
  return {
    attributes: attributes(o, 'attributes', path),
    startTimeUnixNano: uint64(o, 'startTimeUnixNano', path),
    timeUnixNano: uint64(o, 'timeUnixNano', path),
    count: Number(uint64(o, 'count', path)),
    sum: sum == null ? undefined : toDouble(sum, `${path}.sum`),
    bucketCounts: list(o, 'bucketCounts', path).map((c, i) => Number(toUint64(c, `${path}.bucketCounts[${i}]`))),
    explicitBounds: list(o, 'explicitBounds', path).map((b, i) => toDouble(b, `${path}.explicitBounds[${i}]`)),
    exemplars: exemplars(o, path),
    flags: Number(uint64(o, 'flags', path)),
  };
}

function buckets(o: Obj, name: string, path: string): ExponentialBuckets {
  const b = field(o, name);
  if (b == null) return { offset: 0, bucketCounts: [] };
  const bo = obj(b, `${path}.${name}`);
  const offset = field(bo, 'offset');
  return {
    offset: offset == null ? 0 : Number(int64(offset, `${path}.${name}.offset`)),
    bucketCounts: list(bo, 'bucketCounts', `${path}.${name}`).map((c, i) => Number(toUint64(c, `${path}.${name}.bucketCounts[${i}]`))),
  };
}

function exponentialPoint(o: Obj, path: string): ExponentialHistogramDataPoint {
  const sum = field(o, 'sum');
  const scale = field(o, 'scale');
  const zt = field(o, 'zeroThreshold');
  return {
    attributes: attributes(o, 'attributes', path),
    startTimeUnixNano: uint64(o, 'startTimeUnixNano', path),
    timeUnixNano: uint64(o, 'timeUnixNano', path),
    count: Number(uint64(o, 'count', path)),
    sum: sum == null ? undefined : toDouble(sum, `${path}.sum`),
    scale: scale == null ? 0 : Number(int64(scale, `${path}.scale`)),
    zeroCount: Number(uint64(o, 'zeroCount', path)),
    zeroThreshold: zt == null ? 0 : toDouble(zt, `${path}.zeroThreshold`),
    positive: buckets(o, 'positive', path),
    negative: buckets(o, 'negative', path),
    exemplars: exemplars(o, path),
    flags: Number(uint64(o, 'flags', path)),
  };
}

function summaryPoint(o: Obj, path: string): SummaryDataPoint {
  return {
    attributes: attributes(o, 'attributes', path),
    startTimeUnixNano: uint64(o, 'startTimeUnixNano', path),
    timeUnixNano: uint64(o, 'timeUnixNano', path),
    count: Number(uint64(o, 'count', path)),
    sum: double(o, 'sum', path),
    quantileValues: list(o, 'quantileValues', path).map((q, i) => {
      const qo = obj(q, `${path}.quantileValues[${i}]`);
      return { quantile: double(qo, 'quantile', path), value: double(qo, 'value', path) };
    }),
    flags: Number(uint64(o, 'flags', path)),
  };
}

function exemplars(o: Obj, path: string): OtlpExemplar[] {
  return list(o, 'exemplars', path).map((x, i) => exemplar(obj(x, `${path}.exemplars[${i}]`), `${path}.exemplars[${i}]`));
}

function exemplar(o: Obj, path: string): OtlpExemplar {
  const asInt = field(o, 'asInt');
  return {
    filteredAttributes: attributes(o, 'filteredAttributes', path),
    timeUnixNano: uint64(o, 'timeUnixNano', path),
    value: asInt != null ? Number(int64(asInt, `${path}.asInt`)) : double(o, 'asDouble', path),
    spanId: hexId(o, 'spanId', 8, path),
    traceId: hexId(o, 'traceId', 16, path),
  };
}

function attributes(o: Obj, name: string, path: string): KeyValue[] {
  return list(o, name, path).map((kv, i) => {
    const p = `${path}.${name}[${i}]`;
    const k = obj(kv, p);
    const v = field(k, 'value');
    return { key: str(k, 'key', p), value: valueAsString(v == null ? null : anyValue(obj(v, `${p}.value`), `${p}.value`, 0)) };
  });
}

function anyValue(o: Obj, path: string, depth: number): RawValue {
  if (depth > MAX_VALUE_DEPTH) throw bad(path, `attribute value nested deeper than ${MAX_VALUE_DEPTH} levels`);
  let v: Json | undefined;
  if ((v = field(o, 'stringValue')) != null) return typeof v === 'string' ? v : typeErr(path, 'stringValue', 'a string');
  if ((v = field(o, 'boolValue')) != null) return typeof v === 'boolean' ? v : typeErr(path, 'boolValue', 'a boolean');
  if ((v = field(o, 'intValue')) != null) return int64(v, `${path}.intValue`);
  if ((v = field(o, 'doubleValue')) != null) return toDouble(v, `${path}.doubleValue`);
  if ((v = field(o, 'bytesValue')) != null) {
    if (typeof v !== 'string') typeErr(path, 'bytesValue', 'a base64 string');
    return new Uint8Array(Buffer.from(v as string, 'base64'));
  }
  if ((v = field(o, 'arrayValue')) != null) {
    const a = obj(v, `${path}.arrayValue`);
    return list(a, 'values', `${path}.arrayValue`).map((x, i) =>
      anyValue(obj(x, `${path}.arrayValue.values[${i}]`), `${path}.arrayValue.values[${i}]`, depth + 1),
    );
  }
  if ((v = field(o, 'kvlistValue')) != null) {
    const kl = obj(v, `${path}.kvlistValue`);
    return new RawMap(
      list(kl, 'values', `${path}.kvlistValue`).map((kv, i): [string, RawValue] => {
        const p = `${path}.kvlistValue.values[${i}]`;
        const k = obj(kv, p);
        const x = field(k, 'value');
        return [str(k, 'key', p), x == null ? null : anyValue(obj(x, `${p}.value`), `${p}.value`, depth + 1)];
      }),
    );
  }
  return null;
}

// --- field access: lowerCamelCase, or the proto's snake_case name.

function field(o: Obj, camel: string): Json | undefined {
  if (Object.prototype.hasOwnProperty.call(o, camel)) return o[camel];
  const snake = camel.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
  return snake !== camel && Object.prototype.hasOwnProperty.call(o, snake) ? o[snake] : undefined;
}

function obj(v: Json | undefined, path: string): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw bad(path, 'expected an object');
  return v;
}

function list(o: Obj, name: string, path: string): Json[] {
  const v = field(o, name);
  if (v == null) return [];
  if (!Array.isArray(v)) throw bad(`${path}.${name}`, 'expected an array');
  return v;
}

function str(o: Obj, name: string, path: string): string {
  const v = field(o, name);
  if (v == null) return '';
  return typeof v === 'string' ? v : typeErr(path, name, 'a string');
}

function bool(o: Obj, name: string, path: string): boolean {
  const v = field(o, name);
  if (v == null) return false;
  return typeof v === 'boolean' ? v : typeErr(path, name, 'a boolean');
}

function double(o: Obj, name: string, path: string): number {
  const v = field(o, name);
  return v == null ? 0 : toDouble(v, `${path}.${name}`);
}

function toDouble(v: Json, path: string): number {
  if (typeof v === 'number') return v;
  if (v === 'NaN') return NaN;
  if (v === 'Infinity') return Infinity;
  if (v === '-Infinity') return -Infinity;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  throw bad(path, 'expected a number');
}

function uint64(o: Obj, name: string, path: string): bigint {
  const v = field(o, name);
  return v == null ? 0n : toUint64(v, `${path}.${name}`);
}

function toUint64(v: Json, path: string): bigint {
  const n = int64(v, path);
  if (n < 0n || n >= 1n << 64n) throw bad(path, 'expected an unsigned 64-bit integer');
  return n;
}

/** A 64-bit integer given as a decimal string or as a JSON number (integral). */
function int64(v: Json, path: string): bigint {
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  // A JSON number beyond 2^53 has already lost digits; rounding to the nearest integer is the best left.
  if (typeof v === 'number' && Number.isFinite(v)) return BigInt(Math.round(v));
  throw bad(path, 'expected an integer (a decimal string or a number)');
}

function temporality(o: Obj, path: string): Temporality {
  const v = field(o, 'aggregationTemporality');
  if (v == null) return 0;
  if (v === 1 || v === 'AGGREGATION_TEMPORALITY_DELTA') return 1;
  if (v === 2 || v === 'AGGREGATION_TEMPORALITY_CUMULATIVE') return 2;
  if (v === 0 || v === 'AGGREGATION_TEMPORALITY_UNSPECIFIED') return 0;
  throw bad(`${path}.aggregationTemporality`, 'expected 0, 1, 2 or an AggregationTemporality name');
}

function hexId(o: Obj, name: string, size: number, path: string): Uint8Array {
  const v = field(o, name);
  if (v == null || v === '') return new Uint8Array(0);
  if (typeof v !== 'string' || v.length !== size * 2 || !/^[0-9a-fA-F]+$/.test(v)) {
    throw bad(`${path}.${name}`, `expected ${size * 2} hex digits (OTLP/JSON ids are hex, not base64)`);
  }
  return new Uint8Array(Buffer.from(v, 'hex'));
}

function typeErr(path: string, name: string, what: string): never {
  throw bad(`${path}.${name}`, `expected ${what}`);
}

function bad(path: string, what: string): OtlpError {
  return new OtlpError('bad-json', `OTLP JSON: ${path}: ${what}`);
}
