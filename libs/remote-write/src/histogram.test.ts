import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeWriteRequest } from './decode-record.ts';
import { encodeHistogram, readHistogram, reduceResolution, validateHistogram, type DecodedHistogram } from './histogram.ts';
import { ProtoReader, ProtoWriter, WIRE_FIXED64, WIRE_VARINT } from './wire.ts';

const zz = (n: number) => (n < 0 ? -2 * n - 1 : 2 * n);

interface HistInput {
  countInt?: number;
  countFloat?: number;
  sum: number;
  schema: number;
  zeroThreshold?: number;
  zeroInt?: number;
  zeroFloat?: number;
  neg?: [number, number][];
  negDeltas?: number[];
  negCounts?: number[];
  pos?: [number, number][];
  posDeltas?: number[];
  posCounts?: number[];
  hint?: number;
  timestamp: number;
  custom?: number[];
}

function writeHistogram(w: ProtoWriter, h: HistInput): void {
  if (h.countInt !== undefined) {
    w.tag(1, WIRE_VARINT);
    w.uvarint(h.countInt);
  }
  if (h.countFloat !== undefined) {
    w.tag(2, WIRE_FIXED64);
    w.double(h.countFloat);
  }
  w.tag(3, WIRE_FIXED64);
  w.double(h.sum);
  w.tag(4, WIRE_VARINT);
  w.uvarint(zz(h.schema));
  w.tag(5, WIRE_FIXED64);
  w.double(h.zeroThreshold ?? 0);
  if (h.zeroInt !== undefined) {
    w.tag(6, WIRE_VARINT);
    w.uvarint(h.zeroInt);
  }
  if (h.zeroFloat !== undefined) {
    w.tag(7, WIRE_FIXED64);
    w.double(h.zeroFloat);
  }
  const spans = (field: number, list: [number, number][] | undefined) => {
    for (const [offset, length] of list ?? []) {
      const b = w.begin(field);
      w.tag(1, WIRE_VARINT);
      w.uvarint(zz(offset));
      w.tag(2, WIRE_VARINT);
      w.uvarint(length);
      w.end(b);
    }
  };
  const packedInts = (field: number, list: number[] | undefined) => {
    if (!list || list.length === 0) return;
    const b = w.begin(field);
    for (const x of list) w.uvarint(zz(x));
    w.end(b);
  };
  const packedDoubles = (field: number, list: number[] | undefined) => {
    if (!list || list.length === 0) return;
    const b = w.begin(field);
    for (const x of list) w.double(x);
    w.end(b);
  };
  spans(8, h.neg);
  packedInts(9, h.negDeltas);
  packedDoubles(10, h.negCounts);
  spans(11, h.pos);
  packedInts(12, h.posDeltas);
  packedDoubles(13, h.posCounts);
  if (h.hint !== undefined) {
    w.tag(14, WIRE_VARINT);
    w.uvarint(h.hint);
  }
  w.tag(15, WIRE_VARINT);
  w.int64(h.timestamp);
  packedDoubles(16, h.custom);
}

function decode(h: HistInput): DecodedHistogram {
  const w = new ProtoWriter();
  writeHistogram(w, h);
  const bytes = w.finish();
  return readHistogram(new ProtoReader(bytes), bytes.length);
}

test('integer histograms: deltas become absolute counts; hints, schema and spans decoded', () => {
  const d = decode({
    countInt: 12,
    sum: 18.5,
    schema: -2,
    zeroThreshold: 2 ** -128,
    zeroInt: 2,
    neg: [[-1, 2]],
    negDeltas: [3, -2],
    pos: [
      [0, 2],
      [3, 1],
    ],
    posDeltas: [1, 2, -1],
    hint: 2,
    timestamp: 1_732_950_000_123,
  });
  assert.equal(d.float, false);
  assert.equal(d.timestamp, 1_732_950_000_123);
  assert.deepEqual(d.histogram, {
    counterResetHint: 'not_reset',
    schema: -2,
    zeroThreshold: 2 ** -128,
    zeroCount: 2,
    count: 12,
    sum: 18.5,
    positiveSpans: [
      { offset: 0, length: 2 },
      { offset: 3, length: 1 },
    ],
    negativeSpans: [{ offset: -1, length: 2 }],
    positiveBuckets: [1, 3, 2],
    negativeBuckets: [3, 1],
  });
  assert.equal(validateHistogram(d), null);
});

test('float histograms keep their counts; custom buckets carry custom_values', () => {
  const d = decode({ countFloat: 7.5, sum: 3, schema: -53, pos: [[0, 3]], posCounts: [1.5, 0, 6], timestamp: 5, custom: [0.1, 1, 10], hint: 3 });
  assert.equal(d.float, true);
  assert.equal(d.histogram.counterResetHint, 'gauge');
  assert.deepEqual(d.histogram.positiveBuckets, [1.5, 0, 6]);
  assert.deepEqual(d.histogram.customValues, [0.1, 1, 10]);
  assert.equal(validateHistogram(d), null);
});

test('validation names what is wrong', () => {
  const base: HistInput = { countInt: 3, sum: 1, schema: 0, pos: [[0, 2]], posDeltas: [1, 1], zeroInt: 0, timestamp: 1 };
  const why = (over: Partial<HistInput>) => validateHistogram(decode({ ...base, ...over }));
  assert.match(why({ pos: [[0, 3]] }) ?? '', /positive spans need 3 buckets, have 2/);
  assert.match(why({ posDeltas: [1, -2] }) ?? '', /positive bucket 1 has count -1/);
  assert.match(why({ schema: 9 }) ?? '', /schema 9 is outside -4\.\.8 and not -53/);
  assert.match(why({ schema: -5 }) ?? '', /schema -5/);
  assert.match(why({ schema: -53 }) ?? '', /needs custom_values/);
  assert.match(why({ countInt: 4 }) ?? '', /count 4 does not match its buckets' total 3/);
  assert.match(why({ neg: [[0, 1]] }) ?? '', /negative spans need 1 buckets, have 0/);
  assert.match(
    why({
      pos: [
        [0, 1],
        [-1, 1],
      ],
    }) ?? '',
    /span 1 has negative offset/,
  );
  assert.match(why({ schema: -53, custom: [2, 1], pos: [[0, 2]] }) ?? '', /strictly increasing/);
  // A stale marker's buckets do not matter.
  const staleSum = new Float64Array(new Uint32Array([2, 0x7ff00000]).buffer)[0];
  assert.equal(why({ sum: staleSum, pos: [[0, 5]] }), null);
  assert.equal(why({}), null);
});

test("decodeWriteRequest carries a series' histograms", () => {
  const w = new ProtoWriter();
  const ts = w.begin(1);
  const l = w.begin(1);
  w.string(1, '__name__');
  w.string(2, 'h');
  w.end(l);
  for (let i = 0; i < 2; i++) {
    const hb = w.begin(4);
    writeHistogram(w, { countInt: 2 + i, sum: i, schema: 1, pos: [[0, 1]], posDeltas: [2 + i], zeroInt: 0, timestamp: 1000 * i });
    w.end(hb);
  }
  w.end(ts);
  const req = decodeWriteRequest(w.finish());
  const s = req.timeseries[0];
  assert.equal(s.histograms, 2);
  assert.deepEqual(
    s.histogramSamples.map((h) => [h.timestamp, h.histogram.count, h.histogram.positiveBuckets]),
    [
      [0, 2, [2]],
      [1000, 3, [3]],
    ],
  );
});

test('encodeHistogram round-trips through readHistogram, integer and float counts; reduceResolution merges bucket pairs per schema step', () => {
  const int: DecodedHistogram = {
    timestamp: -5,
    float: false,
    histogram: {
      counterResetHint: 'not_reset',
      schema: 3,
      zeroThreshold: 1e-128,
      zeroCount: 2,
      count: 17,
      sum: -3.25,
      positiveSpans: [
        { offset: -2, length: 2 },
        { offset: 3, length: 1 },
      ],
      negativeSpans: [{ offset: 0, length: 2 }],
      positiveBuckets: [1, 5, 2],
      negativeBuckets: [4, 3],
    },
  };
  const float: DecodedHistogram = {
    ...int,
    float: true,
    histogram: { ...int.histogram, counterResetHint: 'gauge', count: 17.5, positiveBuckets: [1.5, 5, 2] },
  };
  for (const d of [int, float]) {
    const body = encodeHistogram(d);
    assert.deepEqual(readHistogram(new ProtoReader(body), body.length), d);
  }
  assert.equal(validateHistogram(int), null);
  assert.equal(reduceResolution(int, 5), int, 'fits as it is');
  // Bucket idx goes to ((idx - 1) >> 1) + 1 per step. Positive -2, -1, 3 at schema 3 -> -1, 0, 2 at schema 2 (still 5 buckets)
  // -> 0, 0, 1 at schema 1; negative 0, 1 stay 0, 1.
  const r = reduceResolution(int, 4);
  assert.deepEqual(
    [r?.histogram.schema, r?.histogram.positiveSpans, r?.histogram.positiveBuckets, r?.histogram.negativeSpans, r?.histogram.negativeBuckets],
    [1, [{ offset: 0, length: 2 }], [6, 2], [{ offset: 0, length: 2 }], [4, 3]],
  );
  assert.equal(validateHistogram(r!), null);
  assert.equal(reduceResolution(int, 3), null, 'buckets 0 and 1 are never merged (1 is a boundary at every schema)');
  assert.equal(reduceResolution(int, 0), null, 'never fits');
});

test("a stale histogram marker keeps Prometheus' exact sum bits through decode and re-encode, a quieted one goes out exact", () => {
  const STALE_LE = [0x02, 0, 0, 0, 0, 0, 0xf0, 0x7f];
  const sumBytes = (body: Uint8Array): number[] => {
    const at = body.indexOf(25); // tag of field 3 (sum), fixed64: the first byte written is count's tag (8), then count, then 25
    return Array.from(body.subarray(at + 1, at + 9));
  };
  const w = new ProtoWriter();
  w.tag(1, WIRE_VARINT);
  w.uvarint(0);
  w.tag(3, WIRE_FIXED64);
  w.bytes8(Uint8Array.from(STALE_LE), 0, true);
  w.tag(15, WIRE_VARINT);
  w.int64(1000);
  const bytes = w.finish();
  const d = readHistogram(new ProtoReader(bytes), bytes.length);
  assert.deepEqual(Array.from(new Uint8Array(Float64Array.of(d.histogram.sum).buffer)), STALE_LE, 'decoded sum bits');
  assert.equal(validateHistogram(d), null);
  assert.deepEqual(sumBytes(encodeHistogram(d)), STALE_LE, 're-encoded sum bits');
  const quiet = new Float64Array(new Uint32Array([2, 0x7ff80000]).buffer)[0];
  assert.deepEqual(sumBytes(encodeHistogram({ ...d, histogram: { ...d.histogram, sum: quiet } })), STALE_LE, 'a quieted stale NaN is written as the marker');
  const other = new Float64Array(new Uint32Array([3, 0x7ff00000]).buffer)[0];
  assert.notDeepEqual(sumBytes(encodeHistogram({ ...d, histogram: { ...d.histogram, sum: other } })), STALE_LE, 'another NaN is not a marker');
});
