// Seeded generator of hostile push requests for the write-path fuzz test: valid
// remote write 1.0 / 2.0 and OTLP bodies mutated before compression (structure-aware,
// by walking the protobuf) and after it, plus wrong headers. Same seed, same requests.

import { gzipSync } from 'node:zlib';
import {
  compressBody,
  encodeWriteRequest,
  encodeWriteRequestV2,
  encodeSymbolizedWriteRequestV2,
  type MetricMetadata,
  type SeriesInput,
} from '@strata/remote-write';
import { encodeExportRequest, encodeExportRequestJson, type ExportRequestInput } from '@strata/otlp';

/** mulberry32: small, fast, good enough to pick mutations reproducibly. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = this.int(256);
    return b;
  }
}

type Protocol = 'rw1' | 'rw2' | 'otlp';

export interface FuzzRequest {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  protocol: Protocol;
  /** What was done to it, for the failure message. */
  mutation: string;
}

const RW1_HEADERS = { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' };
const RW2_HEADERS = {
  'content-type': 'application/x-protobuf;proto=io.prometheus.write.v2.Request',
  'content-encoding': 'snappy',
  'x-prometheus-remote-write-version': '2.0.0',
};
const OTLP_HEADERS = { 'content-type': 'application/x-protobuf' };

/** Invalid UTF-8 spliced into a string in place of this marker (same byte length). */
const BAD_UTF8_MARKER = 'BADUTF8X';
const BAD_UTF8 = Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xff]);

function withBadUtf8(buf: Buffer): Buffer {
  const marker = Buffer.from(BAD_UTF8_MARKER);
  for (let i = buf.indexOf(marker); i >= 0; i = buf.indexOf(marker, i + marker.length)) BAD_UTF8.copy(buf, i);
  return buf;
}

function lbl(name: string, value: string) {
  return { name, value };
}

/** Valid and semantically odd (but well-formed) 1.0 series. */
function rw1Corpus(now: number): { name: string; body: Buffer }[] {
  const base = (n: number, metric = 'fuzz_metric'): SeriesInput[] =>
    Array.from({ length: n }, (_, s) => ({
      labels: [lbl('__name__', metric), lbl('instance', `host-${s}`), lbl('job', 'fuzz')],
      samples: Array.from({ length: 3 }, (_, i) => ({ value: s + i / 10, timestamp: now - 60_000 + i * 15_000 })),
      exemplars: s === 0 ? [{ labels: [lbl('trace_id', '4bf92f3577b34da6a3ce929d0e0e4736')], value: 1, timestamp: now - 60_000 }] : [],
    }));
  const one = (labels: { name: string; value: string }[], timestamp = now - 1000, value = 1): SeriesInput[] => [{ labels, samples: [{ value, timestamp }] }];
  const meta: MetricMetadata[] = [{ type: 'counter', metricFamilyName: 'fuzz_metric', help: 'Fuzzed.', unit: '' }];
  const enc = (timeseries: SeriesInput[], metadata = meta) => encodeWriteRequest({ timeseries, metadata });
  return [
    { name: 'valid', body: enc(base(20)) },
    { name: 'valid-small', body: enc(base(2)) },
    { name: 'duplicate-labels', body: enc(one([lbl('__name__', 'm'), lbl('a', '1'), lbl('a', '2')])) },
    { name: 'unsorted-labels', body: enc(one([lbl('__name__', 'm'), lbl('z', '1'), lbl('a', '2')])) },
    { name: 'empty-label-name', body: enc(one([lbl('__name__', 'm'), lbl('', 'x')])) },
    { name: 'no-metric-name', body: enc(one([lbl('job', 'x')])) },
    { name: 'no-labels', body: enc(one([])) },
    { name: 'bad-metric-name', body: enc(one([lbl('__name__', '0-bad name')])) },
    { name: 'invalid-utf8-value', body: withBadUtf8(enc(one([lbl('__name__', 'm'), lbl('job', BAD_UTF8_MARKER)]))) },
    { name: 'invalid-utf8-name', body: withBadUtf8(enc(one([lbl('__name__', 'm'), lbl(BAD_UTF8_MARKER, 'v')]))) },
    { name: 'invalid-utf8-metadata', body: withBadUtf8(enc(base(1), [{ type: 'gauge', metricFamilyName: BAD_UTF8_MARKER, help: BAD_UTF8_MARKER, unit: '' }])) },
    { name: 'nan-value', body: enc(one([lbl('__name__', 'm')], now, NaN)) },
    { name: 'huge-timestamp', body: enc(one([lbl('__name__', 'm')], Number.MAX_SAFE_INTEGER)) },
    { name: 'negative-timestamp', body: enc(one([lbl('__name__', 'm')], -Number.MAX_SAFE_INTEGER)) },
    { name: 'zero-timestamp', body: enc(one([lbl('__name__', 'm')], 0)) },
    { name: 'long-label-value', body: enc(one([lbl('__name__', 'm'), lbl('v', 'x'.repeat(5000))])) },
    { name: 'many-labels', body: enc(one([lbl('__name__', 'm'), ...Array.from({ length: 40 }, (_, i) => lbl(`l${String(i).padStart(2, '0')}`, 'v'))])) },
    { name: 'no-samples', body: encodeWriteRequest({ timeseries: [{ labels: [lbl('__name__', 'm')], samples: [] }] }) },
    { name: 'empty-request', body: Buffer.alloc(0) },
    { name: 'metadata-only', body: encodeWriteRequest({ timeseries: [], metadata: meta }) },
    {
      name: 'bad-metadata',
      body: encodeWriteRequest({ timeseries: [], metadata: [{ type: 'counter', metricFamilyName: '', help: 'x'.repeat(5000), unit: 'u'.repeat(2000) }] }),
    },
  ];
}

function rw2Corpus(now: number): { name: string; body: Buffer }[] {
  const series = (n: number) =>
    Array.from({ length: n }, (_, s) => ({
      labels: [lbl('__name__', 'fuzz_v2'), lbl('instance', `host-${s}`), lbl('job', 'fuzz')],
      samples: [
        { value: s, timestamp: now - 30_000 },
        { value: s + 1, timestamp: now - 15_000 },
      ],
      exemplars: s === 0 ? [{ labels: [lbl('trace_id', 'abc')], value: 1, timestamp: now - 30_000 }] : [],
      metadata: { type: 'gauge' as const, help: 'Fuzzed v2.', unit: 'seconds' },
    }));
  return [
    { name: 'v2-valid', body: encodeWriteRequestV2({ timeseries: series(20) }) },
    { name: 'v2-valid-small', body: encodeWriteRequestV2({ timeseries: series(2) }) },
    {
      name: 'v2-bad-refs',
      body: encodeSymbolizedWriteRequestV2({
        symbols: ['', '__name__', 'm'],
        timeseries: [{ labelsRefs: [1, 2, 7, 9], samples: [{ value: 1, timestamp: now }] }],
      }),
    },
    {
      name: 'v2-odd-refs',
      body: encodeSymbolizedWriteRequestV2({
        symbols: ['', '__name__', 'm'],
        timeseries: [{ labelsRefs: [1, 2, 1], samples: [{ value: 1, timestamp: now }] }],
      }),
    },
    {
      name: 'v2-no-symbols',
      body: encodeSymbolizedWriteRequestV2({ symbols: [], timeseries: [{ labelsRefs: [0, 0], samples: [{ value: 1, timestamp: now }] }] }),
    },
    {
      name: 'v2-bad-metadata-refs',
      body: encodeSymbolizedWriteRequestV2({
        symbols: ['', '__name__', 'm'],
        timeseries: [{ labelsRefs: [1, 2], samples: [{ value: 1, timestamp: now }], metadata: { type: 'gauge', helpRef: 99, unitRef: 100 } }],
      }),
    },
    {
      name: 'v2-bad-exemplar-refs',
      body: encodeSymbolizedWriteRequestV2({
        symbols: ['', '__name__', 'm'],
        timeseries: [{ labelsRefs: [1, 2], samples: [{ value: 1, timestamp: now }], exemplars: [{ labelsRefs: [5, 6], value: 1, timestamp: now }] }],
      }),
    },
    {
      name: 'v2-invalid-utf8',
      body: withBadUtf8(
        encodeWriteRequestV2({ timeseries: [{ labels: [lbl('__name__', 'm'), lbl('a', BAD_UTF8_MARKER)], samples: [{ value: 1, timestamp: now }] }] }),
      ),
    },
    {
      name: 'v2-duplicate-labels',
      body: encodeWriteRequestV2({ timeseries: [{ labels: [lbl('__name__', 'm'), lbl('a', '1'), lbl('a', '2')], samples: [{ value: 1, timestamp: now }] }] }),
    },
    {
      name: 'v2-histogram',
      body: encodeWriteRequestV2({
        timeseries: [{ labels: [lbl('__name__', 'h')], samples: [], histograms: [Buffer.from([0x08, 0x01, 0x11, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f])] }],
      }),
    },
  ];
}

function otlpCorpus(now: number): { name: string; body: Buffer; json?: boolean }[] {
  const t = BigInt(now - 10_000) * 1_000_000n;
  const req = (metricName: string, extra: Partial<ExportRequestInput['resourceMetrics'][0]> = {}): ExportRequestInput => ({
    resourceMetrics: [
      {
        resource: { 'service.name': 'fuzz', 'service.instance.id': 'i-1', 'k8s.pod.name': 'p' },
        scopeMetrics: [
          {
            scope: { name: 'fuzz', version: '1' },
            metrics: [
              { name: metricName, unit: 's', gauge: { dataPoints: [{ timeUnixNano: t, value: 1.5, attributes: { a: 'b', n: 3, f: true } }] } },
              {
                name: `${metricName}.count`,
                sum: {
                  aggregationTemporality: 2,
                  isMonotonic: true,
                  dataPoints: [
                    {
                      timeUnixNano: t,
                      value: 7,
                      asInt: true,
                      exemplars: [{ value: 1, timeUnixNano: t, traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' }],
                    },
                  ],
                },
              },
              {
                name: `${metricName}.lat`,
                unit: 'ms',
                histogram: { aggregationTemporality: 2, dataPoints: [{ timeUnixNano: t, count: 6, sum: 10, bucketCounts: [1, 2, 3], explicitBounds: [1, 5] }] },
              },
              { name: `${metricName}.sum`, summary: { dataPoints: [{ timeUnixNano: t, count: 2, sum: 3, quantileValues: [{ quantile: 0.5, value: 1 }] }] } },
              { name: `${metricName}.delta`, sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [{ timeUnixNano: t, value: 1 }] } },
              { name: `${metricName}.exp`, exponentialHistogram: { aggregationTemporality: 2, dataPoints: [{ timeUnixNano: t, count: 1, scale: 0 }] } },
            ],
          },
        ],
        ...extra,
      },
    ],
  });
  const huge = { resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: 'x', gauge: { dataPoints: [{ timeUnixNano: 2n ** 63n - 1n, value: 1 }] } }] }] }] };
  const nanos = { resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: 'x', gauge: { dataPoints: [{ timeUnixNano: 0n, value: NaN }] } }] }] }] };
  return [
    { name: 'otlp-valid', body: encodeExportRequest(req('fuzz.otlp')) },
    { name: 'otlp-invalid-utf8', body: withBadUtf8(encodeExportRequest(req(`fuzz.${BAD_UTF8_MARKER}`))) },
    { name: 'otlp-empty-name', body: encodeExportRequest(req('')) },
    { name: 'otlp-huge-time', body: encodeExportRequest(huge) },
    { name: 'otlp-nan', body: encodeExportRequest(nanos) },
    { name: 'otlp-json', body: Buffer.from(encodeExportRequestJson(req('fuzz.json'))), json: true },
  ];
}

/** One field of a protobuf message as found by walking it: where its tag, length and data are. */
interface Field {
  tagPos: number;
  wireType: number;
  /** LEN fields: where the length varint starts and the data starts/ends. */
  lenPos?: number;
  dataStart?: number;
  dataEnd?: number;
}

function readVarint(b: Buffer, pos: number): [number, number] | undefined {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (pos + i >= b.length) return undefined;
    const byte = b[pos + i];
    v += (byte & 0x7f) * mul;
    mul *= 128;
    if (byte < 0x80) return [v, pos + i + 1];
  }
  return undefined;
}

/** Walks b[start,end) as a message, recursing into LEN fields that parse as messages. Best effort. */
function walk(b: Buffer, start: number, end: number, out: Field[], depth = 0): boolean {
  let pos = start;
  const found: Field[] = [];
  while (pos < end) {
    const t = readVarint(b, pos);
    if (!t || t[0] < 8) return false;
    const wt = t[0] & 7;
    const f: Field = { tagPos: pos, wireType: wt };
    pos = t[1];
    if (wt === 0) {
      const v = readVarint(b, pos);
      if (!v) return false;
      pos = v[1];
    } else if (wt === 1) pos += 8;
    else if (wt === 5) pos += 4;
    else if (wt === 2) {
      const l = readVarint(b, pos);
      if (!l || l[1] + l[0] > end) return false;
      f.lenPos = pos;
      f.dataStart = l[1];
      f.dataEnd = l[1] + l[0];
      pos = f.dataEnd;
    } else return false;
    if (pos > end) return false;
    found.push(f);
  }
  for (const f of found) out.push(f);
  if (depth < 6) {
    for (const f of found) if (f.dataStart !== undefined && f.dataEnd! > f.dataStart) walk(b, f.dataStart, f.dataEnd!, out, depth + 1);
  }
  return true;
}

function varintBytes(v: bigint): Buffer {
  const out: number[] = [];
  let x = BigInt.asUintN(64, v);
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
  return Buffer.from(out);
}

function splice(b: Buffer, at: number, remove: number, insert: Buffer): Buffer {
  return Buffer.concat([b.subarray(0, at), insert, b.subarray(Math.min(b.length, at + remove))]);
}

/** One protobuf-level mutation; returns the new bytes and its name. */
function mutateProto(rng: Rng, b: Buffer): [Buffer, string] {
  const fields: Field[] = [];
  walk(b, 0, b.length, fields);
  const lenFields = fields.filter((f) => f.lenPos !== undefined);
  const choice = rng.int(12);
  if (b.length === 0) return [rng.bytes(1 + rng.int(32)), 'random-bytes'];
  switch (choice) {
    case 0: {
      const out = Buffer.from(b);
      const n = 1 + rng.int(8);
      for (let i = 0; i < n; i++) out[rng.int(out.length)] ^= 1 << rng.int(8);
      return [out, `bit-flips(${n})`];
    }
    case 1: {
      const at = rng.int(b.length);
      return [b.subarray(0, at), `truncate@${at}`];
    }
    case 2: {
      const at = rng.int(b.length + 1);
      return [splice(b, at, 0, rng.bytes(1 + rng.int(16))), `insert@${at}`];
    }
    case 3: {
      const at = rng.int(b.length);
      const n = 1 + rng.int(16);
      return [splice(b, at, n, Buffer.alloc(0)), `delete@${at}+${n}`];
    }
    case 4: {
      // A varint that never ends or is overlong (11 continuation bytes).
      const f = fields.length > 0 ? rng.pick(fields) : undefined;
      const at = f ? (f.lenPos ?? f.tagPos) : rng.int(b.length);
      const bad = rng.int(2) === 0 ? Buffer.alloc(11, 0xff) : Buffer.from([0x80, 0x80, 0x80]);
      return [splice(b, at, 1, bad), `bad-varint@${at}`];
    }
    case 5: {
      if (lenFields.length === 0) return mutateProto(rng, b);
      const f = rng.pick(lenFields);
      const lengths = [2n ** 31n - 1n, 2n ** 32n + 5n, 2n ** 63n, 2n ** 64n - 1n, BigInt(b.length) * 2n, 0x7fffffffffn];
      const old = readVarint(b, f.lenPos!)!;
      const v = rng.pick(lengths);
      return [splice(b, f.lenPos!, old[1] - f.lenPos!, varintBytes(v)), `huge-length(${v})@${f.lenPos}`];
    }
    case 6: {
      if (lenFields.length === 0) return mutateProto(rng, b);
      const f = rng.pick(lenFields);
      const old = readVarint(b, f.lenPos!)!;
      const delta = rng.pick([-2, -1, 1, 2, 7]);
      return [splice(b, f.lenPos!, old[1] - f.lenPos!, varintBytes(BigInt(Math.max(0, old[0] + delta)))), `length${delta > 0 ? '+' : ''}${delta}@${f.lenPos}`];
    }
    case 7: {
      if (fields.length === 0) return mutateProto(rng, b);
      const f = rng.pick(fields);
      const t = readVarint(b, f.tagPos)!;
      let wt = rng.int(8);
      if (wt === f.wireType) wt = (wt + 1) & 7;
      const tag = BigInt(Math.floor(t[0] / 8)) * 8n + BigInt(wt);
      return [splice(b, f.tagPos, t[1] - f.tagPos, varintBytes(tag)), `wire-type ${f.wireType}->${wt}@${f.tagPos}`];
    }
    case 8: {
      if (fields.length === 0) return mutateProto(rng, b);
      // An unknown or out-of-range field number with a plausible wire type.
      const f = rng.pick(fields);
      const t = readVarint(b, f.tagPos)!;
      const field = rng.pick([0n, 19000n, 536870911n, 2n ** 40n, BigInt(1 + rng.int(30))]);
      return [splice(b, f.tagPos, t[1] - f.tagPos, varintBytes(field * 8n + BigInt(f.wireType))), `field-number ${field}@${f.tagPos}`];
    }
    case 9: {
      if (lenFields.length === 0) return mutateProto(rng, b);
      // Duplicate a whole submessage many times (repeated fields, big counts).
      const f = rng.pick(lenFields);
      const whole = b.subarray(f.tagPos, f.dataEnd!);
      const n = 2 + rng.int(200);
      return [splice(b, f.dataEnd!, 0, Buffer.concat(Array.from({ length: n }, () => whole))), `repeat x${n}@${f.tagPos}`];
    }
    case 10: {
      if (lenFields.length === 0) return mutateProto(rng, b);
      // Replace a string/bytes payload with invalid UTF-8 or random bytes of the same length.
      const f = rng.pick(lenFields);
      const out = Buffer.from(b);
      for (let i = f.dataStart!; i < f.dataEnd!; i++) out[i] = rng.int(3) === 0 ? rng.pick([0xff, 0xfe, 0xc0, 0x80, 0xed]) : out[i];
      return [out, `garble-payload@${f.dataStart}`];
    }
    default: {
      // Deep nesting: wrap the whole body in many LEN layers under the first field's tag.
      let out = b;
      const tag = fields[0] ? b.subarray(fields[0].tagPos, readVarint(b, fields[0].tagPos)![1]) : Buffer.from([0x0a]);
      const n = 1 + rng.int(50);
      for (let i = 0; i < n; i++) out = Buffer.concat([Buffer.from([tag[0] | 2]), varintBytes(BigInt(out.length)), out]);
      return [out, `nest x${n}`];
    }
  }
}

/** Mutations of the compressed bytes or of the snappy framing itself. */
function mutateCompressed(rng: Rng, c: Buffer): [Buffer, string] {
  switch (rng.int(5)) {
    case 0: {
      const out = Buffer.from(c);
      const n = 1 + rng.int(4);
      for (let i = 0; i < n; i++) out[rng.int(out.length)] ^= 1 << rng.int(8);
      return [out, `snappy-bit-flips(${n})`];
    }
    case 1:
      return [c.subarray(0, rng.int(c.length)), 'snappy-truncate'];
    case 2: {
      // A preamble claiming a huge decompressed size.
      const old = readVarint(c, 0);
      return [splice(c, 0, old ? old[1] : 1, varintBytes(rng.pick([2n ** 32n - 1n, 2n ** 31n, 200n << 20n, 2n ** 64n - 1n]))), 'snappy-huge-preamble'];
    }
    case 3:
      return [rng.bytes(rng.int(256)), 'snappy-random'];
    default:
      return [splice(c, rng.int(c.length + 1), 0, rng.bytes(1 + rng.int(8))), 'snappy-insert'];
  }
}

const WRONG_RW_HEADERS: Record<string, string>[] = [
  { 'content-type': 'text/plain' },
  { 'content-type': 'application/json' },
  { 'content-type': 'application/x-protobuf;proto=io.prometheus.write.v3.Request' },
  { 'content-type': 'application/x-protobuf;proto=' },
  { 'content-type': ';;;=' },
  { 'content-encoding': 'gzip' },
  { 'content-encoding': 'zstd' },
  { 'content-encoding': 'identity' },
  { 'content-encoding': '' },
  { 'x-prometheus-remote-write-version': '9.9.9' },
];
const WRONG_OTLP_HEADERS: Record<string, string>[] = [
  { 'content-type': 'text/plain' },
  { 'content-type': 'application/json' },
  { 'content-type': 'application/x-protobuf; charset=utf-8' },
  { 'content-encoding': 'gzip' },
  { 'content-encoding': 'br' },
  { 'content-encoding': 'snappy' },
];

function frame(tag: number, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), varintBytes(BigInt(body.length)), body]);
}

let hostile: { protocol: Protocol; name: string; body: Buffer }[] | undefined;
/** Well-formed but hostile bodies (a few MB at most): huge repeated counts and deep nesting. Built once. */
function hostileBodies(): { protocol: Protocol; name: string; body: Buffer }[] {
  if (hostile) return hostile;
  // OTLP: an attribute value nested 20,000 arrays deep.
  let v = frame(0x0a, Buffer.from('x'));
  for (let i = 0; i < 20_000; i++) v = frame(0x2a, frame(0x0a, v));
  const deepOtlp = frame(0x0a, frame(0x0a, frame(0x0a, Buffer.concat([frame(0x0a, Buffer.from('a')), frame(0x12, v)]))));
  // OTLP: 300,000 gauge points without a value.
  const points = frame(0x2a, Buffer.concat(Array.from({ length: 300_000 }, () => Buffer.from([0x0a, 0x00]))));
  const manyPoints = frame(0x0a, frame(0x12, frame(0x12, Buffer.concat([frame(0x0a, Buffer.from('m')), points]))));
  hostile = [
    { protocol: 'otlp', name: 'hostile-deep-attribute', body: deepOtlp },
    { protocol: 'otlp', name: 'hostile-300k-points', body: manyPoints },
    // 1.0: a million empty series; one series with 300,000 labels.
    { protocol: 'rw1', name: 'hostile-1M-empty-series', body: Buffer.concat(Array.from({ length: 1_000_000 }, () => Buffer.from([0x0a, 0x00]))) },
    {
      protocol: 'rw1',
      name: 'hostile-300k-labels',
      body: frame(0x0a, Buffer.concat(Array.from({ length: 300_000 }, () => Buffer.from([0x0a, 0x06, 0x0a, 0x01, 0x61, 0x12, 0x01, 0x62])))),
    },
    // 2.0: a million symbols, and a series referencing symbol 2^32-1.
    { protocol: 'rw2', name: 'hostile-1M-symbols', body: Buffer.concat(Array.from({ length: 1_000_000 }, () => Buffer.from([0x22, 0x01, 0x61]))) },
    { protocol: 'rw2', name: 'hostile-huge-ref', body: frame(0x2a, frame(0x0a, Buffer.concat([varintBytes(2n ** 32n - 1n), varintBytes(2n ** 63n)]))) },
  ];
  return hostile;
}

let bomb: Buffer | undefined;
/** 64 MiB of zeros, gzipped once (about 64 KB). */
function gzipBomb(): Buffer {
  bomb ??= gzipSync(Buffer.alloc(64 << 20), { level: 9 });
  return bomb;
}

export class FuzzCorpus {
  private readonly rw1: { name: string; body: Buffer }[];
  private readonly rw2: { name: string; body: Buffer }[];
  private readonly otlp: { name: string; body: Buffer; json?: boolean }[];

  constructor(now: number) {
    this.rw1 = rw1Corpus(now);
    this.rw2 = rw2Corpus(now);
    this.otlp = otlpCorpus(now);
  }

  /** A fresh request: about 1 in 8 unmutated (so valid data keeps flowing), the rest mutated. */
  next(rng: Rng, tenant: string): FuzzRequest {
    // Now and then a hostile body, sent as is.
    if (rng.int(100) === 0) {
      const h = rng.pick(hostileBodies());
      const base = h.protocol === 'otlp' ? OTLP_HEADERS : h.protocol === 'rw1' ? RW1_HEADERS : RW2_HEADERS;
      const body = h.protocol === 'otlp' ? h.body : compressBody(h.body);
      return {
        path: h.protocol === 'otlp' ? '/otlp/v1/metrics' : '/api/v1/push',
        headers: { ...base, 'x-scope-orgid': tenant },
        body,
        protocol: h.protocol,
        mutation: h.name,
      };
    }
    const protocol = rng.pick<Protocol>(['rw1', 'rw1', 'rw2', 'otlp']);
    // Now and then a tenant id that is not one (too long, a path, empty, control characters).
    const badTenant = rng.int(40) === 0 ? rng.pick(['', '..', 'a/b', 'x'.repeat(200), 'tab\tin', 'a|b']) : undefined;
    const tenantHeader = { 'x-scope-orgid': badTenant ?? tenant };
    const roll = rng.int(16);
    if (protocol === 'otlp') {
      const seed = rng.pick(this.otlp);
      const headers: Record<string, string> = { ...OTLP_HEADERS, ...(seed.json ? { 'content-type': 'application/json' } : {}), ...tenantHeader };
      let body = seed.body;
      let mutation = seed.name;
      if (roll >= 2 && roll < 12) {
        if (seed.json) {
          const out = Buffer.from(body);
          const n = 1 + rng.int(6);
          for (let i = 0; i < n; i++) out[rng.int(out.length)] = rng.pick([0x22, 0x7b, 0x7d, 0x5b, 0x5d, 0x3a, 0x2c, 0x30, 0xff, 0x5c]);
          body = out;
          mutation += ` json-garble(${n})`;
        } else {
          const [b, m] = mutateProto(rng, body);
          body = b;
          mutation += ` ${m}`;
          if (rng.int(3) === 0) {
            const [b2, m2] = mutateProto(rng, body);
            body = b2;
            mutation += ` ${m2}`;
          }
        }
      }
      if (roll >= 8 && roll < 11) {
        body = gzipSync(body);
        headers['content-encoding'] = 'gzip';
        mutation += ' gzip';
        if (rng.int(2) === 0) {
          const [b, m] = mutateCompressed(rng, body);
          body = b;
          mutation += ` ${m}`;
        }
      }
      if (roll === 12) {
        // A gzip bomb: 0s expanding far past the max message size.
        body = gzipBomb();
        headers['content-encoding'] = 'gzip';
        mutation += ' gzip-bomb';
      }
      if (roll >= 13) {
        Object.assign(headers, rng.pick(WRONG_OTLP_HEADERS));
        mutation += ` headers ${JSON.stringify(headers)}`;
      }
      return { path: '/otlp/v1/metrics', headers, body, protocol, mutation };
    }
    const seed = protocol === 'rw1' ? rng.pick(this.rw1) : rng.pick(this.rw2);
    const headers: Record<string, string> = { ...(protocol === 'rw1' ? RW1_HEADERS : RW2_HEADERS), ...tenantHeader };
    let proto = seed.body;
    let mutation = seed.name;
    if (roll >= 2 && roll < 13) {
      const n = 1 + (rng.int(4) === 0 ? rng.int(3) : 0);
      for (let i = 0; i < n; i++) {
        const [b, m] = mutateProto(rng, proto);
        proto = b;
        mutation += ` ${m}`;
      }
    }
    let body = compressBody(proto);
    if (roll === 13) {
      const [b, m] = mutateCompressed(rng, body);
      body = b;
      mutation += ` ${m}`;
    }
    if (roll === 14) {
      body = proto;
      mutation += ' uncompressed';
    }
    if (roll === 15) {
      Object.assign(headers, rng.pick(WRONG_RW_HEADERS));
      mutation += ` headers ${JSON.stringify(headers)}`;
    }
    return { path: '/api/v1/push', headers, body, protocol, mutation };
  }
}
