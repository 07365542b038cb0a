// Prometheus remote read (prompb/remote.proto): decodes a snappy ReadRequest and
// encodes its answers, a snappy ReadResponse of samples or the streamed
// ChunkedReadResponse frames of XOR chunks. Codec only: it never reads storage.

import type { Matcher, MatchType, SelectHints, Series } from '@strata/model';
import { compareLabels } from '@strata/model';
import { ProtoReader, ProtoWriter, WIRE_LEN, WIRE_VARINT, compressBody, decompressBody } from '@strata/remote-write';
import { XOR_ENCODING, XorChunkEncoder, crc32c } from '@strata/tsdb';

export type ReadResponseType = 'SAMPLES' | 'STREAMED_XOR_CHUNKS';

export interface ReadQuery {
  /** Inclusive bounds in milliseconds. */
  startMs: number;
  endMs: number;
  matchers: Matcher[];
  hints?: SelectHints;
}

export interface ReadRequest {
  queries: ReadQuery[];
  /** In the client's order of preference; empty means SAMPLES (the protocol's original answer). */
  acceptedResponseTypes: ReadResponseType[];
}

export const SAMPLES_CONTENT_TYPE = 'application/x-protobuf';
export const STREAMED_CONTENT_TYPE = 'application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse';
/** Prometheus' cap on one streamed frame's message (storage/remote: DefaultChunkedReadLimit is the client's, 1 MiB frames the server's). */
const MAX_BYTES_IN_FRAME = 1 << 20;
/** Samples per XOR chunk, as the TSDB head cuts them. */
const SAMPLES_PER_CHUNK = 120;

const MATCH_TYPES: readonly MatchType[] = ['=', '!=', '=~', '!~'];
const RESPONSE_TYPES: readonly ReadResponseType[] = ['SAMPLES', 'STREAMED_XOR_CHUNKS'];

/** Decodes a snappy-compressed prompb.ReadRequest; malformed input throws a bad-input StrataError. */
export function decodeReadRequest(body: Uint8Array, maxBytes: number): ReadRequest {
  const raw = decompressBody(body, maxBytes);
  const r = new ProtoReader(raw);
  const end = raw.length;
  const out: ReadRequest = { queries: [], acceptedResponseTypes: [] };
  const pushType = (n: number) => {
    const t = RESPONSE_TYPES[n];
    if (t) out.acceptedResponseTypes.push(t);
  };
  while (r.pos < end) {
    const tag = r.tag(end, 'ReadRequest');
    if (tag === (1 << 3) + WIRE_LEN) {
      const e = r.len(end, 1, 'ReadRequest');
      out.queries.push(decodeQuery(r, e));
      r.pos = e;
    } else if (tag === (2 << 3) + WIRE_VARINT) {
      pushType(r.uvarint(end, 2, 'ReadRequest'));
    } else if (tag === (2 << 3) + WIRE_LEN) {
      // Packed repeated enum.
      const e = r.len(end, 2, 'ReadRequest');
      while (r.pos < e) pushType(r.uvarint(e, 2, 'ReadRequest'));
    } else r.skip(tag, end, 'ReadRequest');
  }
  return out;
}

function decodeQuery(r: ProtoReader, end: number): ReadQuery {
  const q: ReadQuery = { startMs: 0, endMs: 0, matchers: [] };
  while (r.pos < end) {
    const tag = r.tag(end, 'Query');
    switch (tag) {
      case (1 << 3) + WIRE_VARINT:
        q.startMs = r.int64(end, 1, 'Query');
        break;
      case (2 << 3) + WIRE_VARINT:
        q.endMs = r.int64(end, 2, 'Query');
        break;
      case (3 << 3) + WIRE_LEN: {
        const e = r.len(end, 3, 'Query');
        q.matchers.push(decodeMatcher(r, e));
        r.pos = e;
        break;
      }
      case (4 << 3) + WIRE_LEN: {
        const e = r.len(end, 4, 'Query');
        q.hints = decodeHints(r, e);
        r.pos = e;
        break;
      }
      default:
        r.skip(tag, end, 'Query');
    }
  }
  return q;
}

function decodeMatcher(r: ProtoReader, end: number): Matcher {
  let type = 0;
  let name = '';
  let value = '';
  while (r.pos < end) {
    const tag = r.tag(end, 'LabelMatcher');
    if (tag === (1 << 3) + WIRE_VARINT) type = r.uvarint(end, 1, 'LabelMatcher');
    else if (tag === (2 << 3) + WIRE_LEN || tag === (3 << 3) + WIRE_LEN) {
      const e = r.len(end, tag >>> 3, 'LabelMatcher');
      const s = r.string(r.pos, e);
      r.pos = e;
      if (tag >>> 3 === 2) name = s;
      else value = s;
    } else r.skip(tag, end, 'LabelMatcher');
  }
  const t = MATCH_TYPES[type];
  if (!t) throw r.fail(`unknown LabelMatcher type ${type}`, r.pos);
  return { type: t, name, value };
}

function decodeHints(r: ProtoReader, end: number): SelectHints {
  const h: SelectHints = { start: 0, end: 0 };
  while (r.pos < end) {
    const tag = r.tag(end, 'ReadHints');
    switch (tag) {
      case (1 << 3) + WIRE_VARINT:
        h.step = r.int64(end, 1, 'ReadHints');
        break;
      case (2 << 3) + WIRE_LEN: {
        const e = r.len(end, 2, 'ReadHints');
        h.func = r.string(r.pos, e) || undefined;
        r.pos = e;
        break;
      }
      case (3 << 3) + WIRE_VARINT:
        h.start = r.int64(end, 3, 'ReadHints');
        break;
      case (4 << 3) + WIRE_VARINT:
        h.end = r.int64(end, 4, 'ReadHints');
        break;
      case (7 << 3) + WIRE_VARINT:
        h.range = r.int64(end, 7, 'ReadHints');
        break;
      default:
        r.skip(tag, end, 'ReadHints');
    }
  }
  return h;
}

/** The first response type the client accepts that we serve (both); SAMPLES when it names none. */
export function negotiateResponseType(accepted: ReadResponseType[]): ReadResponseType {
  return accepted[0] ?? 'SAMPLES';
}

function writeLabels(w: ProtoWriter, field: number, series: Series): void {
  for (const l of series.labels) {
    const at = w.begin(field);
    w.string(1, l.name);
    w.string(2, l.value);
    w.end(at);
  }
}

/** A snappy-compressed prompb.ReadResponse: one QueryResult per query, float samples only. */
export function encodeReadResponse(results: Series[][]): Buffer {
  const w = new ProtoWriter(4096);
  for (const series of results) {
    const qr = w.begin(1);
    for (const s of sortedSeries(series)) {
      if (s.timestamps.length === 0) continue;
      const ts = w.begin(1);
      writeLabels(w, 1, s);
      for (let i = 0; i < s.timestamps.length; i++) {
        const sm = w.begin(2);
        w.tag(1, 1); // double value = 1 (fixed64)
        w.double(s.values[i]);
        w.tag(2, WIRE_VARINT);
        w.int64(s.timestamps[i]);
        w.end(sm);
      }
      w.end(ts);
    }
    w.end(qr);
  }
  return compressBody(w.finish());
}

/**
 * The streamed answer to one query: a ChunkedReadResponse frame per series
 * (more if its chunks pass the frame cap), each framed as uvarint length,
 * CRC-32C of the message big-endian, message (Prometheus' ChunkedWriter).
 */
export function* encodeChunkedFrames(queryIndex: number, series: Series[]): Generator<Buffer> {
  const enc = new XorChunkEncoder();
  for (const s of sortedSeries(series)) {
    const n = s.timestamps.length;
    if (n === 0) continue;
    let w = startFrame();
    let chunksStart = w.pos;
    for (let from = 0; from < n; from += SAMPLES_PER_CHUNK) {
      const to = Math.min(n, from + SAMPLES_PER_CHUNK);
      enc.reset();
      enc.appendRange(s.timestamps, s.values, from, to);
      const c = w.begin(2);
      w.tag(1, WIRE_VARINT);
      w.int64(s.timestamps[from]);
      w.tag(2, WIRE_VARINT);
      w.int64(s.timestamps[to - 1]);
      w.tag(3, WIRE_VARINT);
      w.uvarint(XOR_ENCODING);
      w.bytes(4, enc.bytes());
      w.end(c);
      if (w.pos - chunksStart >= MAX_BYTES_IN_FRAME && to < n) {
        yield endFrame(w);
        w = startFrame();
        chunksStart = w.pos;
      }
    }
    yield endFrame(w);

    function startFrame(): ProtoWriter {
      const fw = new ProtoWriter(1024);
      fw.begin(1); // chunked_series; closed in endFrame
      writeLabels(fw, 1, s);
      return fw;
    }
  }

  function endFrame(fw: ProtoWriter): Buffer {
    // The one open message starts right after its tag and reserved length byte.
    fw.end(2);
    if (queryIndex !== 0) {
      fw.tag(2, WIRE_VARINT);
      fw.int64(queryIndex);
    }
    return frame(fw.finish());
  }
}

function frame(msg: Uint8Array): Buffer {
  const head = new ProtoWriter(16);
  head.uvarint(msg.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32c(msg) >>> 0);
  return Buffer.concat([head.finish(), crc, msg]);
}

function sortedSeries(series: Series[]): Series[] {
  return [...series].sort((a, b) => compareLabels(a.labels, b.labels));
}

// --- The client's side, for tests and tools that read from a remote-read endpoint ---

/** A snappy-compressed prompb.ReadRequest. */
export function encodeReadRequest(req: ReadRequest): Buffer {
  const w = new ProtoWriter(256);
  for (const q of req.queries) {
    const at = w.begin(1);
    w.tag(1, WIRE_VARINT);
    w.int64(q.startMs);
    w.tag(2, WIRE_VARINT);
    w.int64(q.endMs);
    for (const m of q.matchers) {
      const mm = w.begin(3);
      w.tag(1, WIRE_VARINT);
      w.uvarint(MATCH_TYPES.indexOf(m.type));
      w.string(2, m.name);
      w.string(3, m.value);
      w.end(mm);
    }
    w.end(at);
  }
  for (const t of req.acceptedResponseTypes) {
    w.tag(2, WIRE_VARINT);
    w.uvarint(RESPONSE_TYPES.indexOf(t));
  }
  return compressBody(w.finish());
}

export interface DecodedSeries {
  labels: Record<string, string>;
  samples: [number, number][];
}

/** A snappy ReadResponse as one list of series per query. */
export function decodeReadResponse(body: Uint8Array): DecodedSeries[][] {
  const raw = decompressBody(body, 1 << 30);
  const r = new ProtoReader(raw);
  const out: DecodedSeries[][] = [];
  forEachField(r, raw.length, (f, e) => {
    if (f !== 1 || e < 0) return;
    const result: DecodedSeries[] = [];
    forEachField(r, e, (f2, e2) => {
      if (f2 === 1 && e2 >= 0) result.push(decodeTimeSeries(r, e2));
    });
    out.push(result);
  });
  return out;
}

export interface DecodedChunkedSeries {
  queryIndex: number;
  labels: Record<string, string>;
  chunks: { minTimeMs: number; maxTimeMs: number; type: number; data: Uint8Array }[];
}

/** Splits a streamed ChunkedReadResponse body into its frames, checking each CRC-32C. */
export function decodeChunkedFrames(body: Uint8Array): DecodedChunkedSeries[] {
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const out: DecodedChunkedSeries[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const r = new ProtoReader(buf);
    r.pos = pos;
    const len = r.uvarint(buf.length, 0, 'frame');
    const crc = buf.readUInt32BE(r.pos);
    const start = r.pos + 4;
    const msg = buf.subarray(start, start + len);
    if (msg.length !== len) throw new Error(`frame at ${pos} truncated`);
    if (crc32c(msg) >>> 0 !== crc) throw new Error(`frame at ${pos}: CRC mismatch`);
    pos = start + len;
    const m = new ProtoReader(msg);
    let queryIndex = 0;
    const series: DecodedChunkedSeries[] = [];
    forEachField(m, msg.length, (f, e) => {
      if (f === 2 && e < 0) queryIndex = m.int64(msg.length, 2, 'ChunkedReadResponse');
      else if (f === 1 && e >= 0) {
        const s: DecodedChunkedSeries = { queryIndex: 0, labels: {}, chunks: [] };
        forEachField(m, e, (f2, e2) => {
          if (f2 === 1 && e2 >= 0) Object.assign(s.labels, decodeLabel(m, e2));
          else if (f2 === 2 && e2 >= 0) {
            const c = { minTimeMs: 0, maxTimeMs: 0, type: 0, data: new Uint8Array() };
            forEachField(m, e2, (f3, e3) => {
              if (f3 === 1) c.minTimeMs = m.int64(e2, 1, 'Chunk');
              else if (f3 === 2) c.maxTimeMs = m.int64(e2, 2, 'Chunk');
              else if (f3 === 3) c.type = m.uvarint(e2, 3, 'Chunk');
              else if (f3 === 4 && e3 >= 0) c.data = Uint8Array.from(msg.subarray(m.pos, e3));
            });
            s.chunks.push(c);
          }
        });
        series.push(s);
      }
    });
    for (const s of series) out.push({ ...s, queryIndex });
  }
  return out;
}

function decodeTimeSeries(r: ProtoReader, end: number): DecodedSeries {
  const s: DecodedSeries = { labels: {}, samples: [] };
  forEachField(r, end, (f, e) => {
    if (f === 1 && e >= 0) Object.assign(s.labels, decodeLabel(r, e));
    else if (f === 2 && e >= 0) {
      let v = 0;
      let t = 0;
      while (r.pos < e) {
        const tag = r.tag(e, 'Sample');
        if (tag === (1 << 3) + 1) {
          v = r.buf.readDoubleLE(r.pos);
          r.pos += 8;
        } else if (tag === (2 << 3) + WIRE_VARINT) t = r.int64(e, 2, 'Sample');
        else r.skip(tag, e, 'Sample');
      }
      s.samples.push([t, v]);
    }
  });
  return s;
}

function decodeLabel(r: ProtoReader, end: number): Record<string, string> {
  let name = '';
  let value = '';
  forEachField(r, end, (f, e) => {
    if (e < 0) return;
    if (f === 1) name = r.string(r.pos, e);
    else if (f === 2) value = r.string(r.pos, e);
  });
  return { [name]: value };
}

/**
 * Calls `fn(field, end)` for each field in [pos, end): length-delimited fields
 * get their payload's end (pos at the payload; skipped to `end` after), others
 * -1 with pos at the value, which `fn` must read or leave for the skip.
 */
function forEachField(r: ProtoReader, end: number, fn: (field: number, end: number) => void): void {
  while (r.pos < end) {
    const tag = r.tag(end, 'message');
    const field = tag >>> 3;
    if ((tag & 7) === WIRE_LEN) {
      const e = r.len(end, field, 'message');
      fn(field, e);
      r.pos = e;
    } else {
      const before = r.pos;
      fn(field, -1);
      if (r.pos === before) r.skip(tag, end, 'message');
    }
  }
}
