// QueryStream's response message, encoded and decoded on the project's protobuf wire primitives
// (@strata/remote-write's ProtoWriter and ProtoReader). It carries every sample a query reads from
// an ingester, and the generic path (proto-loader: objects converted to protobufjs messages and
// back, a Buffer object per bytes field) cost the ingester and the querier more than the samples'
// own bytes. Field numbers are ingester.proto's; histograms, rare, go through protobufjs.

import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { Labels } from '@strata/model';
import { ProtoReader, ProtoWriter, WIRE_LEN, WIRE_VARINT } from '@strata/remote-write';
import type { WireHistogram, WireSeries } from './wire-types.ts';

export const PROTO_PATH = fileURLToPath(new URL('../proto/ingester.proto', import.meta.url));

const Histogram = new protobuf.Root().loadSync(PROTO_PATH, { keepCase: true }).lookupType('strata.ingester.v1.Histogram');
const HISTOGRAM_OBJECT: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: true, arrays: true };

const tag = (field: number, wireType: number) => (field << 3) | wireType;
const RESPONSE_SERIES = tag(1, WIRE_LEN);
const SERIES_LABEL = tag(1, WIRE_LEN);
const SERIES_TIMESTAMPS = tag(2, WIRE_LEN);
const SERIES_VALUES = tag(3, WIRE_LEN);
const SERIES_HISTOGRAM_TIMESTAMPS = tag(4, WIRE_LEN);
const SERIES_HISTOGRAM = tag(5, WIRE_LEN);
const SERIES_CHUNK = tag(6, WIRE_LEN);
const LABEL_NAME = tag(1, WIRE_LEN);
const LABEL_VALUE = tag(2, WIRE_LEN);
const CHUNK_MIN_TIME = tag(1, WIRE_VARINT);
const CHUNK_MAX_TIME = tag(2, WIRE_VARINT);
const CHUNK_DATA = tag(3, WIRE_LEN);

/** QueryStreamResponse { repeated StreamSeries series = 1 } as protobuf bytes (empty fields and zeros left out, as proto3 does). */
export function encodeQueryStreamResponse(msg: { series: WireSeries[] }): Buffer {
  const w = new ProtoWriter(64 * 1024);
  for (const s of msg.series) {
    const series = w.begin(1);
    for (const l of s.labels) {
      const label = w.begin(1);
      if (l.name !== '') w.string(1, l.name);
      if (l.value !== '') w.string(2, l.value);
      w.end(label);
    }
    if (s.timestamps.length > 0) w.bytes(2, s.timestamps);
    if (s.values.length > 0) w.bytes(3, s.values);
    const ht = s.histogram_timestamps;
    if (ht !== undefined && ht.length > 0) w.bytes(4, ht);
    for (const h of s.histograms ?? []) w.bytes(5, Histogram.encode(Histogram.fromObject(h)).finish());
    for (const c of s.chunks ?? []) {
      const chunk = w.begin(6);
      if (c.min_time_ms !== 0) {
        w.tag(1, WIRE_VARINT);
        w.int64(c.min_time_ms);
      }
      if (c.max_time_ms !== 0) {
        w.tag(2, WIRE_VARINT);
        w.int64(c.max_time_ms);
      }
      if (c.data.length > 0) w.bytes(3, c.data);
      w.end(chunk);
    }
    w.end(series);
  }
  return w.finish();
}

const EMPTY: Uint8Array = new Uint8Array(0);

/** The inverse of encodeQueryStreamResponse; fields it does not know are skipped. */
export function decodeQueryStreamResponse(buf: Buffer): { series: WireSeries[] } {
  const r = new ProtoReader(buf);
  const view = (end: number): Uint8Array => {
    const v = r.bytes.subarray(r.pos, end);
    r.pos = end;
    return v;
  };
  const series: WireSeries[] = [];
  const end = buf.length;
  while (r.pos < end) {
    const t = r.tag(end, 'QueryStreamResponse');
    if (t !== RESPONSE_SERIES) {
      r.skip(t, end, 'QueryStreamResponse');
      continue;
    }
    const se = r.len(end, 1, 'QueryStreamResponse');
    const labels: Labels = [];
    const s: WireSeries = { labels, timestamps: EMPTY, values: EMPTY };
    while (r.pos < se) {
      const f = r.tag(se, 'StreamSeries');
      switch (f) {
        case SERIES_LABEL: {
          const le = r.len(se, 1, 'StreamSeries');
          let name = '';
          let value = '';
          while (r.pos < le) {
            const lf = r.tag(le, 'Label');
            if (lf === LABEL_NAME || lf === LABEL_VALUE) {
              const e = r.len(le, lf >>> 3, 'Label');
              const str = r.string(r.pos, e);
              r.pos = e;
              if (lf === LABEL_NAME) name = str;
              else value = str;
            } else r.skip(lf, le, 'Label');
          }
          labels.push({ name, value });
          break;
        }
        case SERIES_TIMESTAMPS:
          s.timestamps = view(r.len(se, 2, 'StreamSeries'));
          break;
        case SERIES_VALUES:
          s.values = view(r.len(se, 3, 'StreamSeries'));
          break;
        case SERIES_HISTOGRAM_TIMESTAMPS:
          s.histogram_timestamps = view(r.len(se, 4, 'StreamSeries'));
          break;
        case SERIES_HISTOGRAM:
          (s.histograms ??= []).push(Histogram.toObject(Histogram.decode(view(r.len(se, 5, 'StreamSeries'))), HISTOGRAM_OBJECT) as WireHistogram);
          break;
        case SERIES_CHUNK: {
          const ce = r.len(se, 6, 'StreamSeries');
          const c: { min_time_ms: number; max_time_ms: number; data: Uint8Array } = { min_time_ms: 0, max_time_ms: 0, data: EMPTY };
          while (r.pos < ce) {
            const cf = r.tag(ce, 'Chunk');
            if (cf === CHUNK_MIN_TIME) c.min_time_ms = r.int64(ce, 1, 'Chunk');
            else if (cf === CHUNK_MAX_TIME) c.max_time_ms = r.int64(ce, 2, 'Chunk');
            else if (cf === CHUNK_DATA) c.data = view(r.len(ce, 3, 'Chunk'));
            else r.skip(cf, ce, 'Chunk');
          }
          (s.chunks ??= []).push(c);
          break;
        }
        default:
          r.skip(f, se, 'StreamSeries');
      }
    }
    series.push(s);
  }
  return { series };
}
