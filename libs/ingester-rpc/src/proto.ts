// Loads the ingester service definition and converts between wire and model types.

import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ExemplarParams, ExemplarSeries, Labels, Matcher, MatchType, NativeHistogram, SelectParams, Series } from '@strata/model';
import { SampleArena, decodeXorChunkInto, xorChunkNumSamples } from '@strata/tsdb';
import { PROTO_PATH, decodeQueryStreamResponse, encodeQueryStreamResponse } from './stream-codec.ts';
import type { WireChunk, WireExemplarSeries, WireExemplarsQuery, WireHistogram, WireMatcher, WireQuery, WireSeries } from './wire-types.ts';

export function loadIngesterService(): grpc.ServiceClientConstructor {
  const def = protoLoader.loadSync(PROTO_PATH, { keepCase: true, longs: Number, enums: String, defaults: true });
  // The samples of a query cross in QueryStream's responses: those have a codec of their own.
  const service = def['strata.ingester.v1.Ingester'] as Record<string, grpc.MethodDefinition<unknown, unknown>>;
  service.QueryStream = {
    ...service.QueryStream,
    responseSerialize: (msg) => encodeQueryStreamResponse(msg as { series: WireSeries[] }),
    responseDeserialize: decodeQueryStreamResponse,
  };
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    strata: { ingester: { v1: { Ingester: grpc.ServiceClientConstructor } } };
  };
  return pkg.strata.ingester.v1.Ingester;
}

const HINTS = new Set(['unknown', 'reset', 'not_reset', 'gauge']);

function histogramToWire(h: NativeHistogram): WireHistogram {
  return {
    counter_reset_hint: h.counterResetHint,
    schema: h.schema,
    zero_threshold: h.zeroThreshold,
    zero_count: h.zeroCount,
    count: h.count,
    sum: h.sum,
    positive_spans: h.positiveSpans,
    negative_spans: h.negativeSpans,
    positive_buckets: h.positiveBuckets,
    negative_buckets: h.negativeBuckets,
    custom_values: h.customValues ?? [],
  };
}

function histogramFromWire(w: WireHistogram): NativeHistogram {
  const span = (s: { offset: number; length: number }) => ({ offset: s.offset, length: s.length });
  return {
    counterResetHint: (HINTS.has(w.counter_reset_hint) ? w.counter_reset_hint : 'unknown') as NativeHistogram['counterResetHint'],
    schema: w.schema,
    zeroThreshold: w.zero_threshold,
    zeroCount: w.zero_count,
    count: w.count,
    sum: w.sum,
    positiveSpans: w.positive_spans.map(span),
    negativeSpans: w.negative_spans.map(span),
    positiveBuckets: [...w.positive_buckets],
    negativeBuckets: [...w.negative_buckets],
    ...(w.schema === -53 ? { customValues: [...w.custom_values] } : {}),
  };
}

const TO_WIRE: Record<MatchType, WireMatcher['type']> = {
  '=': 'EQUAL',
  '!=': 'NOT_EQUAL',
  '=~': 'REGEX_MATCH',
  '!~': 'REGEX_NO_MATCH',
};
const FROM_WIRE: Record<WireMatcher['type'], MatchType> = {
  EQUAL: '=',
  NOT_EQUAL: '!=',
  REGEX_MATCH: '=~',
  REGEX_NO_MATCH: '!~',
};

function matchersToWire(ms: Matcher[]): WireMatcher[] {
  return ms.map((m) => ({ type: TO_WIRE[m.type], name: m.name, value: m.value }));
}

function matchersFromWire(ms: WireMatcher[]): Matcher[] {
  return ms.map((m): Matcher => ({ type: FROM_WIRE[m.type], name: m.name, value: m.value }));
}

/** The request of a select; `acceptChunks` (QueryStream only) lets the ingester send float samples as XOR chunks. */
export function queryToWire(p: SelectParams, acceptChunks = false): WireQuery {
  const q: WireQuery = { tenant: p.tenant, start_timestamp_ms: p.mint, end_timestamp_ms: p.maxt, matchers: matchersToWire(p.matchers) };
  if (acceptChunks) q.accept_chunks = true;
  const h = p.hints;
  if (h !== undefined) q.hints = { start_ms: h.start, end_ms: h.end, step_ms: h.step ?? 0, func: h.func ?? '', range_ms: h.range ?? 0 };
  return q;
}

export function queryFromWire(q: WireQuery): SelectParams {
  const p: SelectParams = {
    tenant: q.tenant,
    mint: Number(q.start_timestamp_ms),
    maxt: Number(q.end_timestamp_ms),
    matchers: matchersFromWire(q.matchers),
  };
  if (q.accept_chunks === true) p.chunks = true;
  const h = q.hints;
  if (h != null) {
    p.hints = { start: Number(h.start_ms), end: Number(h.end_ms), step: Number(h.step_ms), range: Number(h.range_ms) };
    if (h.func !== '') p.hints.func = h.func;
  }
  return p;
}

export function exemplarsQueryToWire(p: ExemplarParams): WireExemplarsQuery {
  return {
    tenant: p.tenant,
    start_timestamp_ms: p.mint,
    end_timestamp_ms: p.maxt,
    matcher_sets: p.matcherSets.map((ms) => ({ matchers: matchersToWire(ms) })),
  };
}

export function exemplarsQueryFromWire(q: WireExemplarsQuery): ExemplarParams {
  return {
    tenant: q.tenant,
    mint: Number(q.start_timestamp_ms),
    maxt: Number(q.end_timestamp_ms),
    matcherSets: q.matcher_sets.map((s) => matchersFromWire(s.matchers)),
  };
}

export function exemplarSeriesToWire(s: ExemplarSeries): WireExemplarSeries {
  return {
    series_labels: s.seriesLabels,
    exemplars: s.exemplars.map((e) => ({ labels: e.labels, value: e.value, timestamp_ms: e.timestamp })),
  };
}

export function exemplarSeriesFromWire(w: WireExemplarSeries): ExemplarSeries {
  const labels = (ls: Labels): Labels => ls.map((l) => ({ name: l.name, value: l.value }));
  return {
    seriesLabels: labels(w.series_labels),
    exemplars: w.exemplars.map((e) => ({ labels: labels(e.labels), value: e.value, timestamp: Number(e.timestamp_ms) })),
  };
}

export function seriesToWire(s: Series): WireSeries {
  const out: WireSeries = {
    labels: s.labels,
    timestamps: new Uint8Array(s.timestamps.buffer, s.timestamps.byteOffset, s.timestamps.byteLength),
    values: new Uint8Array(s.values.buffer, s.values.byteOffset, s.values.byteLength),
  };
  if (s.chunks !== undefined) out.chunks = s.chunks.map((c) => ({ min_time_ms: c.minTime, max_time_ms: c.maxTime, data: c.data }));
  const h = s.histograms;
  if (h && h.timestamps.length > 0) {
    out.histogram_timestamps = new Uint8Array(h.timestamps.buffer, h.timestamps.byteOffset, h.timestamps.byteLength);
    out.histograms = h.values.map(histogramToWire);
  }
  return out;
}

/**
 * A streamed series as the engine reads it: chunks decoded, their samples clipped to [mint, maxt],
 * into `arena` (the series of one select share its arrays: no ArrayBuffer per series).
 */
export function seriesFromWire(w: WireSeries, mint: number, maxt: number, arena: SampleArena): Series {
  const chunked = w.chunks !== undefined && w.chunks.length > 0;
  const out: Series = {
    // proto-loader's objects are plain { name, value } pairs already.
    labels: w.labels,
    ...(chunked ? decodeChunks(w.chunks as WireChunk[], mint, maxt, arena) : samplesInto(w.timestamps, w.values, arena)),
  };
  if (w.histograms && w.histograms.length > 0 && w.histogram_timestamps) {
    out.histograms = { timestamps: float64s(w.histogram_timestamps), values: w.histograms.map(histogramFromWire) };
  }
  return out;
}

/** The samples in [mint, maxt] of time-ordered XOR chunks, bit-exact. */
function decodeChunks(chunks: WireChunk[], mint: number, maxt: number, arena: SampleArena): { timestamps: Float64Array; values: Float64Array } {
  let total = 0;
  for (const c of chunks) total += xorChunkNumSamples(c.data);
  const { timestamps, values } = arena.take(total);
  let n = 0;
  for (const c of chunks) n += decodeXorChunkInto(c.data, timestamps, values, n, mint, maxt);
  if (n === total) return { timestamps, values };
  arena.shrinkLast(n);
  return { timestamps: timestamps.subarray(0, n), values: values.subarray(0, n) };
}

/** Streamed samples (little-endian float64s) copied into `arena`: the wire's bytes need not be 8-byte aligned. */
function samplesInto(ts: Uint8Array, vs: Uint8Array, arena: SampleArena): { timestamps: Float64Array; values: Float64Array } {
  const n = Math.min(ts.byteLength, vs.byteLength) >>> 3;
  const { timestamps, values } = arena.take(n);
  copyBytes(timestamps, ts);
  copyBytes(values, vs);
  return { timestamps, values };
}

/** Copies bytes into a fresh (aligned) Float64Array without touching the bits. */
function float64s(bytes: Uint8Array): Float64Array {
  const out = new Float64Array(bytes.byteLength >>> 3);
  copyBytes(out, bytes);
  return out;
}

/** Fills `dst` with the first dst.byteLength of `bytes`, bit for bit. */
function copyBytes(dst: Float64Array, bytes: Uint8Array): void {
  new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(bytes.subarray(0, dst.byteLength));
}
