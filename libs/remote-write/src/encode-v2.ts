// Writing remote write 2.0 requests, for tests, load generators and clients:
// from plain labels (the symbols table is built here, symbols[0] = "") or from
// an explicit table and references (which may be deliberately wrong, for tests).

import type { Label } from '@strata/model';
import { writeSample, writeValueAndTimestamp, type SampleInput } from './encode.ts';
import type { MetricType } from './messages.ts';
import { V2_METRIC_TYPES } from './v2-messages.ts';
import { ProtoWriter, WIRE_VARINT } from './wire.ts';

export interface ExemplarInputV2 {
  labels: Label[];
  value: number;
  timestamp: number;
}

export interface MetadataInputV2 {
  type: MetricType;
  help?: string;
  unit?: string;
}

export interface SeriesInputV2 {
  labels: Label[];
  samples: SampleInput[];
  exemplars?: ExemplarInputV2[];
  /** Native histogram messages, already encoded (Histogram bodies). */
  histograms?: Uint8Array[];
  metadata?: MetadataInputV2;
  /** rc.0-rc.3 TimeSeries.created_timestamp (field 6), ms. */
  createdTimestamp?: number;
}

export interface WriteRequestV2Input {
  timeseries: SeriesInputV2[];
}

export interface SymbolizedSeriesV2 {
  labelsRefs: number[];
  samples: SampleInput[];
  exemplars?: { labelsRefs: number[]; value: number; timestamp: number }[];
  histograms?: Uint8Array[];
  metadata?: { type: MetricType; helpRef: number; unitRef: number };
  createdTimestamp?: number;
}

export interface SymbolizedWriteRequestV2 {
  symbols: string[];
  timeseries: SymbolizedSeriesV2[];
}

/** Encodes a 2.0 Request (not compressed), interning every string into one symbols table. */
export function encodeWriteRequestV2(req: WriteRequestV2Input): Buffer {
  const symbols: string[] = [''];
  const index = new Map<string, number>([['', 0]]);
  const ref = (s: string): number => {
    let i = index.get(s);
    if (i === undefined) {
      i = symbols.length;
      symbols.push(s);
      index.set(s, i);
    }
    return i;
  };
  const refs = (labels: readonly Label[]): number[] => labels.flatMap((l) => [ref(l.name), ref(l.value)]);
  const timeseries = req.timeseries.map((ts): SymbolizedSeriesV2 => ({
    labelsRefs: refs(ts.labels),
    samples: ts.samples,
    exemplars: ts.exemplars?.map((e) => ({ labelsRefs: refs(e.labels), value: e.value, timestamp: e.timestamp })),
    histograms: ts.histograms,
    metadata: ts.metadata && { type: ts.metadata.type, helpRef: ref(ts.metadata.help ?? ''), unitRef: ref(ts.metadata.unit ?? '') },
    createdTimestamp: ts.createdTimestamp,
  }));
  return encodeSymbolizedWriteRequestV2({ symbols, timeseries });
}

/** Encodes a 2.0 Request exactly as given: references are written unchecked. */
export function encodeSymbolizedWriteRequestV2(req: SymbolizedWriteRequestV2): Buffer {
  let estimate = 64;
  for (const s of req.symbols) estimate += 2 + s.length * 3;
  for (const ts of req.timeseries) estimate += 16 + ts.labelsRefs.length * 3 + ts.samples.length * 22;
  const w = new ProtoWriter(estimate);
  for (const s of req.symbols) w.string(4, s);
  for (const ts of req.timeseries) {
    const start = w.begin(5);
    writePackedRefs(w, 1, ts.labelsRefs);
    for (const s of ts.samples) writeSample(w, 2, s);
    for (const h of ts.histograms ?? []) w.bytes(3, h);
    for (const e of ts.exemplars ?? []) {
      const es = w.begin(4);
      writePackedRefs(w, 1, e.labelsRefs);
      writeValueAndTimestamp(w, e.value, e.timestamp);
      w.end(es);
    }
    if (ts.metadata) {
      const ms = w.begin(5);
      const type = V2_METRIC_TYPES.indexOf(ts.metadata.type);
      w.tag(1, WIRE_VARINT);
      w.uvarint(type < 0 ? 0 : type);
      w.tag(3, WIRE_VARINT);
      w.uvarint(ts.metadata.helpRef);
      w.tag(4, WIRE_VARINT);
      w.uvarint(ts.metadata.unitRef);
      w.end(ms);
    }
    if (ts.createdTimestamp !== undefined) {
      w.tag(6, WIRE_VARINT);
      w.int64(ts.createdTimestamp);
    }
    w.end(start);
  }
  return w.finish();
}

function writePackedRefs(w: ProtoWriter, field: number, refs: readonly number[]): void {
  if (refs.length === 0) return;
  const start = w.begin(field);
  for (const r of refs) w.uvarint(r);
  w.end(start);
}
