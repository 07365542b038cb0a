// Pre-encodes the load generator's remote-write bodies (1.0 or 2.0, snappy),
// one window of scrape rounds at a time, split by shard as Prometheus' queue
// manager does: a series always goes to the same shard, in timestamp order.
// It must never re-encode labels per sample: their bytes are built once per series.

import { compressBody } from '@strata/remote-write';
import type { Label } from '@strata/model';
import { SeriesSet, type SeriesSetOptions } from './series.ts';

export type Protocol = 'v1' | 'v2';

export function uvarintLen(v: number): number {
  let n = 1;
  while (v >= 128) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

function putUvarint(buf: Uint8Array, pos: number, v: number): number {
  while (v >= 128) {
    buf[pos++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[pos++] = v;
  return pos;
}

/** A growable byte buffer for one request under construction. */
class Bytes {
  buf: Buffer;
  pos = 0;
  /** Not from the buffer pool: a scratch buffer there would keep the pool slabs of the label bytes kept beside it alive; 64 KiB per series made setting up 3.3M series take minutes. */
  constructor(size = 1 << 16) {
    this.buf = Buffer.allocUnsafeSlow(size);
  }
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  varint(v: number): void {
    this.ensure(10);
    this.pos = putUvarint(this.buf, this.pos, v);
  }
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
  /** Sample message body: value (field 1, double) and timestamp (field 2, varint); same in 1.0 and 2.0. */
  sample(field: number, ts: number, value: number): void {
    const len = 10 + uvarintLen(ts);
    this.ensure(12 + len);
    const b = this.buf;
    let p = this.pos;
    b[p++] = (field << 3) | 2;
    b[p++] = len;
    b[p++] = 0x09;
    b.writeDoubleLE(value, p);
    p += 8;
    b[p++] = 0x10;
    this.pos = putUvarint(b, p, ts);
  }
}

function stringField(out: Bytes, field: number, s: string): void {
  const bytes = Buffer.from(s, 'utf8');
  out.varint((field << 3) | 2);
  out.varint(bytes.length);
  out.raw(bytes);
}

/** A 1.0 TimeSeries' label fields (field 1, repeated Label{name=1, value=2}), encoded once per series. */
export function encodeLabelsV1(labels: readonly Label[]): Buffer {
  const out = new Bytes(512);
  const inner = new Bytes(256);
  for (const l of labels) {
    inner.pos = 0;
    stringField(inner, 1, l.name);
    stringField(inner, 2, l.value);
    out.varint(0x0a);
    out.varint(inner.pos);
    out.raw(inner.buf.subarray(0, inner.pos));
  }
  return Buffer.from(out.buf.subarray(0, out.pos));
}

/** Builds one uncompressed request, one TimeSeries per sample as Prometheus sends them. */
export interface RequestBuilder {
  add(series: number, ts: number, value: number): void;
  /** The uncompressed request; the builder is empty afterwards. */
  take(): Buffer;
}

/** Remote write 1.0: `labelBytes(series)` are the pre-encoded label fields. */
export class RequestBuilderV1 implements RequestBuilder {
  private readonly out = new Bytes();
  private readonly labelBytes: (series: number) => Buffer;

  constructor(labelBytes: (series: number) => Buffer) {
    this.labelBytes = labelBytes;
  }

  add(series: number, ts: number, value: number): void {
    const lb = this.labelBytes(series);
    const sampleLen = 10 + uvarintLen(ts);
    const bodyLen = lb.length + 2 + sampleLen;
    this.out.varint(0x0a);
    this.out.varint(bodyLen);
    this.out.raw(lb);
    this.out.sample(2, ts, value);
  }

  take(): Buffer {
    const b = Buffer.from(this.out.buf.subarray(0, this.out.pos));
    this.out.pos = 0;
    return b;
  }
}

/** Remote write 2.0: a symbols table per request ("" first), label references per series. */
export class RequestBuilderV2 implements RequestBuilder {
  private readonly series = new Bytes();
  private readonly refs = new Bytes();
  private symbols: string[] = [''];
  private index = new Map<string, number>([['', 0]]);
  private readonly labelStrings: (series: number) => readonly string[];

  constructor(labelStrings: (series: number) => readonly string[]) {
    this.labelStrings = labelStrings;
  }

  private ref(s: string): number {
    let i = this.index.get(s);
    if (i === undefined) {
      i = this.symbols.length;
      this.symbols.push(s);
      this.index.set(s, i);
    }
    return i;
  }

  add(series: number, ts: number, value: number): void {
    const strings = this.labelStrings(series);
    this.refs.pos = 0;
    for (const s of strings) this.refs.varint(this.ref(s));
    const refsLen = this.refs.pos;
    const sampleLen = 10 + uvarintLen(ts);
    const bodyLen = (refsLen > 0 ? 1 + uvarintLen(refsLen) + refsLen : 0) + 2 + sampleLen;
    const out = this.series;
    out.varint(0x2a);
    out.varint(bodyLen);
    if (refsLen > 0) {
      out.varint(0x0a);
      out.varint(refsLen);
      out.raw(this.refs.buf.subarray(0, refsLen));
    }
    out.sample(2, ts, value);
  }

  take(): Buffer {
    const head = new Bytes();
    for (const s of this.symbols) stringField(head, 4, s);
    head.raw(this.series.buf.subarray(0, this.series.pos));
    this.series.pos = 0;
    this.symbols = [''];
    this.index = new Map([['', 0]]);
    return Buffer.from(head.buf.subarray(0, head.pos));
  }
}

/** FNV-1a over a series' label strings, fixed for its life. */
export function seriesHash(labels: readonly Label[]): number {
  let h = 0x811c9dc5;
  for (const l of labels) {
    for (const s of [l.name, l.value]) {
      for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
      h = Math.imul(h ^ 0xff, 0x01000193);
    }
  }
  return h >>> 0;
}

/** A series' shard among `shards`: the same as long as the shard count is. */
export function shardOf(labels: readonly Label[], shards: number): number {
  return seriesHash(labels) % shards;
}

export interface EncoderOptions extends SeriesSetOptions {
  protocol: Protocol;
  /** Shards when a window does not say. */
  shards: number;
  samplesPerRequest: number;
  /** A shard's batch is sent once its oldest sample is this old (sample time), full or not; Prometheus' batch_send_deadline. Default 5s. */
  batchDeadlineMs?: number;
  /** Relabel `churnShare` of the targets every this many ms of sample time; 0 = never. */
  churnEveryMs?: number;
  /** Skip snappy (tests only). */
  uncompressed?: boolean;
}

export interface WindowSpec {
  /** Global index of the window's first scrape round (counters grow with it). */
  firstRound: number;
  rounds: number;
  /** Sample time of round 0 of this window, ms. */
  tsStart: number;
  /** Sample time (and send schedule) between rounds, ms; an integer >= 1. */
  roundMs: number;
  /** Shards for this window (Prometheus reshards with throughput); a series' shard is its hash modulo this. */
  shards?: number;
}

/**
 * One window's requests, packed for transfer between threads: bodies
 * back to back in `data`, described by the parallel arrays.
 */
export interface EncodedWindow {
  data: Uint8Array;
  offsets: Float64Array;
  lengths: Uint32Array;
  samples: Uint32Array;
  /** When the request is due, ms after the window's start (its last sample's scrape time). */
  due: Float64Array;
  shard: Uint16Array;
  totalSamples: number;
  rawBytes: number;
  /** Newest sample time in the window. */
  lastTs: number;
  seriesCreated: number;
  churnEvents: number;
}

/** Stateful across windows: series labels change on churn, counters keep growing. */
export class WindowEncoder {
  readonly set: SeriesSet;
  private readonly labelBytes: Buffer[] = [];
  private readonly labelStrings: string[][] = [];
  private readonly hashOfSeries: Uint32Array;
  private readonly order: Int32Array;
  private readonly offsetShare: Float64Array;
  private nextChurnAt = Number.POSITIVE_INFINITY;

  private readonly opts: EncoderOptions;

  constructor(opts: EncoderOptions) {
    this.opts = opts;
    this.set = new SeriesSet(opts);
    this.hashOfSeries = new Uint32Array(this.set.size);
    for (let i = 0; i < this.set.size; i++) this.cacheSeries(i);
    // Targets are scraped at fixed offsets within a round; series go out in that order.
    const targets = Array.from({ length: this.set.targets }, (_, t) => t).sort((a, b) => this.set.scrapeOffset(a) - this.set.scrapeOffset(b));
    this.order = new Int32Array(targets);
    this.offsetShare = Float64Array.from({ length: this.set.targets }, (_, t) => this.set.scrapeOffset(t));
  }

  private cacheSeries(i: number): void {
    const labels = this.set.labels(i);
    if (this.opts.protocol === 'v1') this.labelBytes[i] = encodeLabelsV1(labels);
    else this.labelStrings[i] = labels.flatMap((l) => [l.name, l.value]);
    this.hashOfSeries[i] = seriesHash(labels);
  }

  encode(spec: WindowSpec): EncodedWindow {
    const { samplesPerRequest } = this.opts;
    const shards = spec.shards ?? this.opts.shards;
    const deadline = this.opts.batchDeadlineMs ?? 5000;
    const firstTs = new Float64Array(shards);
    const set = this.set;
    const builders: RequestBuilder[] = Array.from({ length: shards }, () =>
      this.opts.protocol === 'v1' ? new RequestBuilderV1((i) => this.labelBytes[i]) : new RequestBuilderV2((i) => this.labelStrings[i]),
    );
    const pending = new Uint32Array(shards);
    const lastDue = new Float64Array(shards);
    const bodies: { body: Buffer; samples: number; due: number; shard: number }[] = [];
    let rawBytes = 0;
    let churnEvents = 0;
    const flush = (s: number): void => {
      const raw = builders[s].take();
      rawBytes += raw.length;
      bodies.push({ body: this.opts.uncompressed ? raw : compressBody(raw), samples: pending[s], due: lastDue[s], shard: s });
      pending[s] = 0;
    };
    const churnEvery = this.opts.churnEveryMs ?? 0;
    if (churnEvery > 0 && !Number.isFinite(this.nextChurnAt)) this.nextChurnAt = spec.tsStart + churnEvery;
    let lastTs = spec.tsStart;
    const per = set.perTarget;
    for (let r = 0; r < spec.rounds; r++) {
      const ts0 = spec.tsStart + r * spec.roundMs;
      if (churnEvery > 0 && ts0 >= this.nextChurnAt) {
        for (const i of set.churn()) this.cacheSeries(i);
        this.nextChurnAt += churnEvery;
        churnEvents++;
      }
      const round = spec.firstRound + r;
      for (let k = 0; k < this.order.length; k++) {
        const t = this.order[k];
        const off = Math.floor(this.offsetShare[t] * spec.roundMs);
        const ts = ts0 + off;
        const due = r * spec.roundMs + off;
        const end = Math.min(set.size, (t + 1) * per);
        for (let i = t * per; i < end; i++) {
          const s = this.hashOfSeries[i] % shards;
          if (pending[s] > 0 && ts - firstTs[s] >= deadline) flush(s);
          if (pending[s] === 0) firstTs[s] = ts;
          builders[s].add(i, ts, set.value(i, round));
          lastDue[s] = due;
          if (++pending[s] === samplesPerRequest) flush(s);
        }
        if (ts > lastTs) lastTs = ts;
      }
    }
    for (let s = 0; s < shards; s++) if (pending[s] > 0) flush(s);
    bodies.sort((a, b) => a.due - b.due);
    return pack(bodies, { rawBytes, lastTs, seriesCreated: set.created, churnEvents });
  }
}

function pack(
  bodies: { body: Buffer; samples: number; due: number; shard: number }[],
  meta: { rawBytes: number; lastTs: number; seriesCreated: number; churnEvents: number },
): EncodedWindow {
  let total = 0;
  for (const b of bodies) total += b.body.length;
  const data = new Uint8Array(new ArrayBuffer(total));
  const n = bodies.length;
  const w: EncodedWindow = {
    data,
    offsets: new Float64Array(n),
    lengths: new Uint32Array(n),
    samples: new Uint32Array(n),
    due: new Float64Array(n),
    shard: new Uint16Array(n),
    totalSamples: 0,
    ...meta,
  };
  let pos = 0;
  bodies.forEach((b, i) => {
    data.set(b.body, pos);
    w.offsets[i] = pos;
    w.lengths[i] = b.body.length;
    w.samples[i] = b.samples;
    w.due[i] = b.due;
    w.shard[i] = b.shard;
    w.totalSamples += b.samples;
    pos += b.body.length;
  });
  return w;
}

/** The ArrayBuffers of a window, for postMessage's transfer list. */
export function transferables(w: EncodedWindow): ArrayBuffer[] {
  return [w.data, w.offsets, w.lengths, w.samples, w.due, w.shard].map((a) => a.buffer as ArrayBuffer);
}
