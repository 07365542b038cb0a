import { test } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { PROTO_PATH, decodeQueryStreamResponse, encodeQueryStreamResponse } from './stream-codec.ts';
import type { WireSeries } from './wire-types.ts';

const Response = new protobuf.Root().loadSync(PROTO_PATH, { keepCase: true }).lookupType('strata.ingester.v1.QueryStreamResponse');
const OBJECT: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: true, arrays: true };

const f64 = (...xs: number[]) => new Uint8Array(Float64Array.from(xs).buffer);
const series: WireSeries[] = [
  {
    labels: [
      { name: '__name__', value: 'up' },
      { name: 'job', value: 'äpï ✓' },
    ],
    timestamps: f64(1, 2),
    values: f64(0.5, NaN),
  },
  {
    labels: [{ name: '__name__', value: 'x' }],
    timestamps: new Uint8Array(0),
    values: new Uint8Array(0),
    chunks: [
      { min_time_ms: -5_000, max_time_ms: -1, data: new Uint8Array([0, 1, 2, 3]) },
      { min_time_ms: 1_733_000_000_000, max_time_ms: 2 ** 53 - 1, data: new Uint8Array(300).fill(7) },
      { min_time_ms: 0, max_time_ms: 127, data: new Uint8Array([9]) },
    ],
  },
  {
    labels: [{ name: '__name__', value: 'h' }],
    timestamps: new Uint8Array(0),
    values: new Uint8Array(0),
    histogram_timestamps: f64(10),
    histograms: [
      {
        counter_reset_hint: 'gauge',
        schema: -53,
        zero_threshold: 0,
        zero_count: 1,
        count: 4,
        sum: -2.5,
        positive_spans: [{ offset: -2, length: 2 }],
        negative_spans: [],
        positive_buckets: [1, 2],
        negative_buckets: [],
        custom_values: [0.1, 1],
      },
    ],
  },
];

/** The message as protobufjs reads it, with byte fields as arrays (comparable). */
function generic(buf: Uint8Array): unknown {
  return JSON.parse(JSON.stringify(Response.toObject(Response.decode(buf), { ...OBJECT, bytes: Array })));
}

test('QueryStreamResponse by hand: protobufjs reads what it writes, and it reads what protobufjs writes', () => {
  const mine = encodeQueryStreamResponse({ series });
  const theirs = Response.encode(Response.fromObject({ series })).finish();
  assert.deepEqual(generic(mine), generic(theirs));
  assert.equal(mine.length, theirs.length);

  for (const buf of [mine, Buffer.from(theirs)]) {
    const got = decodeQueryStreamResponse(buf).series;
    assert.equal(got.length, series.length);
    got.forEach((s, i) => {
      const want = series[i];
      assert.deepEqual(s.labels, want.labels);
      assert.deepEqual([...s.timestamps], [...want.timestamps]);
      assert.deepEqual([...s.values], [...want.values]);
      assert.deepEqual(
        s.chunks?.map((c) => ({ ...c, data: [...c.data] })),
        want.chunks?.map((c) => ({ ...c, data: [...c.data] })),
      );
      assert.deepEqual(s.histogram_timestamps && [...s.histogram_timestamps], want.histogram_timestamps && [...want.histogram_timestamps]);
      assert.deepEqual(s.histograms, want.histograms);
    });
  }
});

test('a truncated or overrunning QueryStreamResponse is an error, not a wrong answer', () => {
  const buf = encodeQueryStreamResponse({ series });
  assert.throws(() => decodeQueryStreamResponse(buf.subarray(0, buf.length - 3)), /QueryStreamResponse/);
  assert.deepEqual(decodeQueryStreamResponse(Buffer.alloc(0)).series, []);
});
