// Writing OTLP ExportMetricsServiceRequests, protobuf or JSON, for tests, load
// generators and clients. The input mirrors OTLP/JSON's shape (lowerCamelCase,
// one of gauge/sum/histogram/exponentialHistogram/summary per metric).

import { ProtoWriter, WIRE_FIXED64, WIRE_VARINT } from '@strata/remote-write';

export type AttributeInput = string | boolean | number | bigint | Uint8Array | AttributeInput[] | { [key: string]: AttributeInput };
export type AttributesInput = Record<string, AttributeInput>;

export interface ExemplarInput {
  value: number;
  /** Send the value as `as_int` (an integer). */
  asInt?: boolean;
  timeUnixNano: bigint;
  /** Hex: 32 digits. */
  traceId?: string;
  /** Hex: 16 digits. */
  spanId?: string;
  filteredAttributes?: AttributesInput;
}

export interface NumberPointInput {
  attributes?: AttributesInput;
  startTimeUnixNano?: bigint;
  timeUnixNano: bigint;
  value: number;
  asInt?: boolean;
  exemplars?: ExemplarInput[];
  flags?: number;
}

export interface HistogramPointInput {
  attributes?: AttributesInput;
  startTimeUnixNano?: bigint;
  timeUnixNano: bigint;
  count: number;
  sum?: number;
  bucketCounts: number[];
  explicitBounds: number[];
  exemplars?: ExemplarInput[];
  flags?: number;
}

export interface SummaryPointInput {
  attributes?: AttributesInput;
  startTimeUnixNano?: bigint;
  timeUnixNano: bigint;
  count: number;
  sum: number;
  quantileValues: { quantile: number; value: number }[];
  flags?: number;
}

export interface ExponentialPointInput {
  attributes?: AttributesInput;
  startTimeUnixNano?: bigint;
  timeUnixNano: bigint;
  count: number;
  sum?: number;
  scale: number;
  zeroCount?: number;
  zeroThreshold?: number;
  positive?: { offset: number; bucketCounts: number[] };
  negative?: { offset: number; bucketCounts: number[] };
  exemplars?: ExemplarInput[];
  flags?: number;
}

/** 0 unspecified, 1 delta, 2 cumulative. */
export type TemporalityInput = 0 | 1 | 2;

export type MetricInput = { name: string; description?: string; unit?: string } & (
  | { gauge: { dataPoints: NumberPointInput[] } }
  | { sum: { dataPoints: NumberPointInput[]; aggregationTemporality: TemporalityInput; isMonotonic: boolean } }
  | { histogram: { dataPoints: HistogramPointInput[]; aggregationTemporality: TemporalityInput } }
  | { exponentialHistogram: { dataPoints: ExponentialPointInput[]; aggregationTemporality: TemporalityInput } }
  | { summary: { dataPoints: SummaryPointInput[] } }
);

export interface ExportRequestInput {
  resourceMetrics: {
    resource?: AttributesInput;
    scopeMetrics: { scope?: { name: string; version?: string; attributes?: AttributesInput }; schemaUrl?: string; metrics: MetricInput[] }[];
  }[];
}

/** Encodes an ExportMetricsServiceRequest as protobuf (not compressed). */
export function encodeExportRequest(req: ExportRequestInput): Buffer {
  const w = new ProtoWriter(4096);
  for (const rm of req.resourceMetrics) {
    const rms = w.begin(1);
    if (rm.resource !== undefined) {
      const rs = w.begin(1);
      writeAttributes(w, 1, rm.resource);
      w.end(rs);
    }
    for (const sm of rm.scopeMetrics) {
      const sms = w.begin(2);
      if (sm.scope !== undefined) {
        const ss = w.begin(1);
        w.string(1, sm.scope.name);
        if (sm.scope.version !== undefined) w.string(2, sm.scope.version);
        if (sm.scope.attributes !== undefined) writeAttributes(w, 3, sm.scope.attributes);
        w.end(ss);
      }
      for (const m of sm.metrics) writeMetric(w, m);
      if (sm.schemaUrl !== undefined) w.string(3, sm.schemaUrl);
      w.end(sms);
    }
    w.end(rms);
  }
  return w.finish();
}

function writeMetric(w: ProtoWriter, m: MetricInput): void {
  const ms = w.begin(2);
  w.string(1, m.name);
  if (m.description) w.string(2, m.description);
  if (m.unit) w.string(3, m.unit);
  if ('gauge' in m) {
    const s = w.begin(5);
    for (const p of m.gauge.dataPoints) writeNumberPoint(w, p);
    w.end(s);
  } else if ('sum' in m) {
    const s = w.begin(7);
    for (const p of m.sum.dataPoints) writeNumberPoint(w, p);
    varint(w, 2, m.sum.aggregationTemporality);
    varint(w, 3, m.sum.isMonotonic ? 1 : 0);
    w.end(s);
  } else if ('histogram' in m) {
    const s = w.begin(9);
    for (const p of m.histogram.dataPoints) writeHistogramPoint(w, p);
    varint(w, 2, m.histogram.aggregationTemporality);
    w.end(s);
  } else if ('exponentialHistogram' in m) {
    const s = w.begin(10);
    for (const p of m.exponentialHistogram.dataPoints) {
      const ps = w.begin(1);
      if (p.attributes !== undefined) writeAttributes(w, 1, p.attributes);
      if (p.startTimeUnixNano !== undefined) fixed64(w, 2, p.startTimeUnixNano);
      fixed64(w, 3, p.timeUnixNano);
      fixed64(w, 4, BigInt(p.count));
      if (p.sum !== undefined) {
        w.tag(5, WIRE_FIXED64);
        w.double(p.sum);
      }
      w.tag(6, WIRE_VARINT);
      w.uvarint(zigzag(p.scale));
      if (p.zeroCount !== undefined) fixed64(w, 7, BigInt(p.zeroCount));
      for (const [field, b] of [
        [8, p.positive],
        [9, p.negative],
      ] as const) {
        if (b === undefined) continue;
        const bs = w.begin(field);
        w.tag(1, WIRE_VARINT);
        w.uvarint(zigzag(b.offset));
        const cs = w.begin(2);
        for (const c of b.bucketCounts) w.uvarint(c);
        w.end(cs);
        w.end(bs);
      }
      if (p.flags !== undefined) varint(w, 10, p.flags);
      for (const x of p.exemplars ?? []) writeExemplar(w, 11, x);
      if (p.zeroThreshold !== undefined) {
        w.tag(14, WIRE_FIXED64);
        w.double(p.zeroThreshold);
      }
      w.end(ps);
    }
    varint(w, 2, m.exponentialHistogram.aggregationTemporality);
    w.end(s);
  } else {
    const s = w.begin(11);
    for (const p of m.summary.dataPoints) writeSummaryPoint(w, p);
    w.end(s);
  }
  w.end(ms);
}

function writeNumberPoint(w: ProtoWriter, p: NumberPointInput): void {
  const s = w.begin(1);
  writeAttributes(w, 7, p.attributes);
  if (p.startTimeUnixNano !== undefined) fixed64(w, 2, p.startTimeUnixNano);
  fixed64(w, 3, p.timeUnixNano);
  if (p.asInt) fixed64(w, 6, BigInt.asUintN(64, BigInt(p.value)));
  else double(w, 4, p.value);
  for (const x of p.exemplars ?? []) writeExemplar(w, 5, x);
  if (p.flags) varint(w, 8, p.flags);
  w.end(s);
}

function writeHistogramPoint(w: ProtoWriter, p: HistogramPointInput): void {
  const s = w.begin(1);
  writeAttributes(w, 9, p.attributes);
  if (p.startTimeUnixNano !== undefined) fixed64(w, 2, p.startTimeUnixNano);
  fixed64(w, 3, p.timeUnixNano);
  fixed64(w, 4, BigInt(p.count));
  if (p.sum !== undefined) double(w, 5, p.sum);
  if (p.bucketCounts.length > 0) {
    const bs = w.begin(6);
    for (const c of p.bucketCounts) raw64(w, BigInt(c));
    w.end(bs);
  }
  if (p.explicitBounds.length > 0) {
    const es = w.begin(7);
    for (const b of p.explicitBounds) w.double(b);
    w.end(es);
  }
  for (const x of p.exemplars ?? []) writeExemplar(w, 8, x);
  if (p.flags) varint(w, 10, p.flags);
  w.end(s);
}

function writeSummaryPoint(w: ProtoWriter, p: SummaryPointInput): void {
  const s = w.begin(1);
  writeAttributes(w, 7, p.attributes);
  if (p.startTimeUnixNano !== undefined) fixed64(w, 2, p.startTimeUnixNano);
  fixed64(w, 3, p.timeUnixNano);
  fixed64(w, 4, BigInt(p.count));
  double(w, 5, p.sum);
  for (const q of p.quantileValues) {
    const qs = w.begin(6);
    double(w, 1, q.quantile);
    double(w, 2, q.value);
    w.end(qs);
  }
  if (p.flags) varint(w, 8, p.flags);
  w.end(s);
}

function writeExemplar(w: ProtoWriter, field: number, x: ExemplarInput): void {
  const s = w.begin(field);
  writeAttributes(w, 7, x.filteredAttributes);
  fixed64(w, 2, x.timeUnixNano);
  if (x.asInt) fixed64(w, 6, BigInt.asUintN(64, BigInt(x.value)));
  else double(w, 3, x.value);
  if (x.spanId) w.bytes(4, Buffer.from(x.spanId, 'hex'));
  if (x.traceId) w.bytes(5, Buffer.from(x.traceId, 'hex'));
  w.end(s);
}

function writeAttributes(w: ProtoWriter, field: number, attrs: AttributesInput | undefined): void {
  for (const [key, value] of Object.entries(attrs ?? {})) {
    const s = w.begin(field);
    w.string(1, key);
    const vs = w.begin(2);
    writeAnyValue(w, value);
    w.end(vs);
    w.end(s);
  }
}

function writeAnyValue(w: ProtoWriter, v: AttributeInput): void {
  if (typeof v === 'string') w.string(1, v);
  else if (typeof v === 'boolean') varint(w, 2, v ? 1 : 0);
  else if (typeof v === 'bigint') {
    w.tag(3, WIRE_VARINT);
    let u = BigInt.asUintN(64, v);
    w.ensure(10);
    while (u >= 0x80n) {
      w.buf[w.pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    w.buf[w.pos++] = Number(u);
  } else if (typeof v === 'number') double(w, 4, v);
  else if (v instanceof Uint8Array) w.bytes(7, v);
  else if (Array.isArray(v)) {
    const s = w.begin(5);
    for (const x of v) {
      const xs = w.begin(1);
      writeAnyValue(w, x);
      w.end(xs);
    }
    w.end(s);
  } else {
    const s = w.begin(6);
    writeAttributes(w, 1, v);
    w.end(s);
  }
}

function varint(w: ProtoWriter, field: number, v: number): void {
  w.tag(field, WIRE_VARINT);
  w.uvarint(v);
}

function double(w: ProtoWriter, field: number, v: number): void {
  w.tag(field, WIRE_FIXED64);
  w.double(v);
}

function fixed64(w: ProtoWriter, field: number, v: bigint): void {
  w.tag(field, WIRE_FIXED64);
  raw64(w, v);
}

function raw64(w: ProtoWriter, v: bigint): void {
  w.ensure(8);
  w.buf.writeBigUInt64LE(BigInt.asUintN(64, v), w.pos);
  w.pos += 8;
}

/** The same request in OTLP/JSON (64-bit integers as strings, ids as hex). */
export function encodeExportRequestJson(req: ExportRequestInput): string {
  return JSON.stringify({
    resourceMetrics: req.resourceMetrics.map((rm) => ({
      resource: rm.resource && { attributes: attributesJson(rm.resource) },
      scopeMetrics: rm.scopeMetrics.map((sm) => ({
        scope: sm.scope && { ...sm.scope, attributes: sm.scope.attributes && attributesJson(sm.scope.attributes) },
        schemaUrl: sm.schemaUrl,
        metrics: sm.metrics.map(metricJson),
      })),
    })),
  });
}

function metricJson(m: MetricInput): unknown {
  const base = { name: m.name, description: m.description, unit: m.unit };
  if ('gauge' in m) return { ...base, gauge: { dataPoints: m.gauge.dataPoints.map(numberPointJson) } };
  if ('sum' in m) {
    const { aggregationTemporality, isMonotonic } = m.sum;
    return { ...base, sum: { dataPoints: m.sum.dataPoints.map(numberPointJson), aggregationTemporality, isMonotonic } };
  }
  if ('histogram' in m) {
    return {
      ...base,
      histogram: {
        aggregationTemporality: m.histogram.aggregationTemporality,
        dataPoints: m.histogram.dataPoints.map((p) => ({
          ...pointJson(p),
          count: String(p.count),
          sum: p.sum === undefined ? undefined : num(p.sum),
          bucketCounts: p.bucketCounts.map(String),
          explicitBounds: p.explicitBounds.map(num),
          exemplars: p.exemplars?.map(exemplarJson),
        })),
      },
    };
  }
  if ('exponentialHistogram' in m) {
    return {
      ...base,
      exponentialHistogram: {
        aggregationTemporality: m.exponentialHistogram.aggregationTemporality,
        dataPoints: m.exponentialHistogram.dataPoints.map((p) => ({
          attributes: p.attributes === undefined ? undefined : attributesJson(p.attributes),
          startTimeUnixNano: p.startTimeUnixNano === undefined ? undefined : String(p.startTimeUnixNano),
          timeUnixNano: String(p.timeUnixNano),
          count: String(p.count),
          sum: p.sum === undefined ? undefined : num(p.sum),
          scale: p.scale,
          zeroCount: p.zeroCount === undefined ? undefined : String(p.zeroCount),
          zeroThreshold: p.zeroThreshold === undefined ? undefined : num(p.zeroThreshold),
          positive: p.positive === undefined ? undefined : { offset: p.positive.offset, bucketCounts: p.positive.bucketCounts.map(String) },
          negative: p.negative === undefined ? undefined : { offset: p.negative.offset, bucketCounts: p.negative.bucketCounts.map(String) },
          exemplars: p.exemplars?.map(exemplarJson),
          flags: p.flags,
        })),
      },
    };
  }
  return {
    ...base,
    summary: {
      dataPoints: m.summary.dataPoints.map((p) => ({
        ...pointJson(p),
        count: String(p.count),
        sum: num(p.sum),
        quantileValues: p.quantileValues.map((q) => ({ quantile: num(q.quantile), value: num(q.value) })),
      })),
    },
  };
}

function pointJson(p: { attributes?: AttributesInput; startTimeUnixNano?: bigint; timeUnixNano: bigint; flags?: number }) {
  return {
    attributes: attributesJson(p.attributes ?? {}),
    startTimeUnixNano: p.startTimeUnixNano === undefined ? undefined : String(p.startTimeUnixNano),
    timeUnixNano: String(p.timeUnixNano),
    flags: p.flags,
  };
}

function numberPointJson(p: NumberPointInput): unknown {
  return { ...pointJson(p), ...(p.asInt ? { asInt: String(p.value) } : { asDouble: num(p.value) }), exemplars: p.exemplars?.map(exemplarJson) };
}

function exemplarJson(x: ExemplarInput): unknown {
  return {
    filteredAttributes: attributesJson(x.filteredAttributes ?? {}),
    timeUnixNano: String(x.timeUnixNano),
    ...(x.asInt ? { asInt: String(x.value) } : { asDouble: num(x.value) }),
    traceId: x.traceId,
    spanId: x.spanId,
  };
}

function num(v: number): number | string {
  if (Number.isFinite(v)) return v;
  return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
}

function attributesJson(attrs: AttributesInput): { key: string; value: unknown }[] {
  return Object.entries(attrs).map(([key, v]) => ({ key, value: anyValueJson(v) }));
}

function anyValueJson(v: AttributeInput): unknown {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'bigint') return { intValue: v.toString() };
  if (typeof v === 'number') return { doubleValue: num(v) };
  if (v instanceof Uint8Array) return { bytesValue: Buffer.from(v).toString('base64') };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValueJson) } };
  return { kvlistValue: { values: attributesJson(v) } };
}

function zigzag(v: number): number {
  return v >= 0 ? v * 2 : -v * 2 - 1;
}
