import { test } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import type { Label } from '@strata/model';
import {
  decodeWriteRequest,
  encodeRecordValue,
  encodeWriteRequest,
  isStaleNaN,
  parseWriteRequest,
  replaceSeriesLabels,
  RemoteWriteError,
  STALE_NAN_BITS,
  validateParsedSeries,
  type MetricMetadata,
  type WriteRequestInput,
} from './index.ts';
import { ProtoWriter } from './wire.ts';

const l = (name: string, value: string): Label => ({ name, value });

function fixture(): WriteRequestInput {
  return {
    timeseries: [
      {
        labels: [l('__name__', 'http_requests_total'), l('code', '200'), l('job', 'api')],
        samples: [
          { value: 1, timestamp: 1732950000000 },
          { value: 2.5, timestamp: 1732950015000 },
          { value: -0, timestamp: 1732950030000 },
          { value: Infinity, timestamp: 1732950045000 },
        ],
        exemplars: [{ labels: [l('trace_id', 'abc123')], value: 0.25, timestamp: 1732950001000 }],
      },
      {
        labels: [l('__name__', 'temperature_celsius'), l('room', 'kitchen ✓')],
        samples: [
          { value: -3.75, timestamp: -5 },
          { value: 1e300, timestamp: 0 },
          { value: 0, timestamp: -1732950000000 },
        ],
      },
      { labels: [l('__name__', 'no_samples')], samples: [] },
    ],
    metadata: [
      { type: 'counter', metricFamilyName: 'http_requests_total', help: 'Requests served.', unit: '' },
      { type: 'gauge', metricFamilyName: 'temperature_celsius', help: 'Temperature, °C.', unit: 'celsius' },
      { type: 'stateset', metricFamilyName: 's', help: '', unit: '' },
    ],
  };
}

function assertSameAsInput(decoded: ReturnType<typeof decodeWriteRequest>, input: WriteRequestInput): void {
  assert.equal(decoded.timeseries.length, input.timeseries.length);
  input.timeseries.forEach((want, i) => {
    const got = decoded.timeseries[i];
    assert.deepEqual(got.labels, want.labels);
    assert.deepEqual(
      [...got.timestamps],
      want.samples.map((s) => s.timestamp),
    );
    assert.deepEqual(
      [...got.values],
      want.samples.map((s) => s.value),
    );
    assert.deepEqual(got.exemplars, want.exemplars ?? []);
  });
  assert.deepEqual(decoded.metadata, input.metadata ?? []);
}

function isBadProtobuf(pattern: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof RemoteWriteError, `expected RemoteWriteError, got ${String(err)}`);
    assert.equal(err.code, 'err-strata-bad-protobuf');
    assert.equal(err.kind, 'bad-input');
    assert.equal(err.retriable, false);
    assert.ok(!err.message.includes('\n'), 'one line');
    assert.match(err.message, /^protobuf: /);
    assert.match(err.message, pattern);
    return true;
  };
}

test('round trip: encode -> parse -> encodeRecordValue -> decode keeps labels, samples, exemplars, metadata', () => {
  const input = fixture();
  const body = encodeWriteRequest(input);
  const parsed = parseWriteRequest(body);

  assert.equal(parsed.series.length, 3);
  assert.deepEqual(
    parsed.series.map((s) => s.labels),
    input.timeseries.map((t) => t.labels),
  );
  assert.deepEqual(
    parsed.series.map((s) => [s.samples, s.exemplars, s.histograms]),
    [
      [4, 1, 0],
      [3, 0, 0],
      [0, 0, 0],
    ],
  );
  assert.deepEqual([parsed.series[0].minTimestamp, parsed.series[0].maxTimestamp], [1732950000000, 1732950045000]);
  assert.deepEqual([parsed.series[1].minTimestamp, parsed.series[1].maxTimestamp], [-1732950000000, 0]);
  assert.deepEqual([parsed.series[2].minTimestamp, parsed.series[2].maxTimestamp], [Infinity, -Infinity]);
  assert.deepEqual(
    parsed.metadata.map(({ raw: _raw, ...m }) => m),
    input.metadata,
  );
  for (const s of parsed.series) {
    assert.equal(s.raw.buffer, body.buffer, 'raw is a view of the request, not a copy');
    assert.equal(s.invalidUtf8, false);
  }

  const record = encodeRecordValue(
    parsed.series.map((s) => s.raw),
    parsed.metadata.map((m) => m.raw),
  );
  assert.deepEqual(record, body, 'framing the raw bytes rebuilds the request byte for byte');
  assertSameAsInput(decodeWriteRequest(record), input);
  assert.ok(Object.is(decodeWriteRequest(record).timeseries[0].values[2], -0), '-0 keeps its sign');
});

test('a record value may carry a subset of series and no metadata', () => {
  const input = fixture();
  const parsed = parseWriteRequest(encodeWriteRequest(input));
  const decoded = decodeWriteRequest(encodeRecordValue([parsed.series[1].raw]));
  assert.equal(decoded.timeseries.length, 1);
  assert.deepEqual(decoded.timeseries[0].labels, input.timeseries[1].labels);
  assert.deepEqual(decoded.metadata, []);
  assert.deepEqual(decodeWriteRequest(encodeRecordValue([])), { timeseries: [], metadata: [] });
  assert.deepEqual(parseWriteRequest(new Uint8Array(0)), { series: [], metadata: [] });
});

test('stale-marker NaN bits survive parse -> encodeRecordValue -> decode', () => {
  const body = encodeWriteRequest({
    timeseries: [
      {
        labels: [l('__name__', 'up'), l('job', 'node')],
        samples: [
          { value: 1, timestamp: 1000 },
          { value: NaN, timestamp: 2000, stale: true },
          { value: NaN, timestamp: 3000 },
        ],
      },
    ],
  });
  assert.ok(body.includes(Buffer.from([0x02, 0, 0, 0, 0, 0, 0xf0, 0x7f])), 'stale bits on the wire, little-endian');
  const parsed = parseWriteRequest(body);
  const decoded = decodeWriteRequest(encodeRecordValue(parsed.series.map((s) => s.raw)));
  const values = decoded.timeseries[0].values;
  const bits = new BigUint64Array(values.buffer, values.byteOffset, values.length);
  assert.equal(bits[1], STALE_NAN_BITS);
  assert.equal(isStaleNaN(values, 0), false);
  assert.equal(isStaleNaN(values, 1), true);
  assert.equal(isStaleNaN(values, 2), false, 'an ordinary NaN is not a stale marker');
  assert.ok(Number.isNaN(values[2]));
});

test('any NaN payload is copied bit for bit, never through a JS number', () => {
  // Hand-written Sample whose value is the signalling-looking NaN 0x7ff8000000000001.
  const payload = [0x01, 0, 0, 0, 0, 0, 0xf8, 0x7f];
  const w = new ProtoWriter();
  const ts = w.begin(1);
  const lab = w.begin(1);
  w.string(1, '__name__');
  w.string(2, 'x');
  w.end(lab);
  const s = w.begin(2);
  w.tag(1, 1);
  w.bytes8(new Uint8Array(payload), 0, true);
  w.tag(2, 0);
  w.int64(7);
  w.end(s);
  w.end(ts);
  const decoded = decodeWriteRequest(w.finish());
  const v = decoded.timeseries[0].values;
  assert.deepEqual([...new Uint8Array(v.buffer, v.byteOffset, 8)], payload);
  assert.equal(isStaleNaN(v, 0), false);
  assert.deepEqual([...decoded.timeseries[0].timestamps], [7]);
});

test('negative and extreme timestamps decode exactly', () => {
  const stamps = [-1, -2, -128, -(2 ** 31), -(2 ** 32) - 1, Number.MIN_SAFE_INTEGER, 2 ** 49 - 1, 2 ** 49, Number.MAX_SAFE_INTEGER, 0];
  const input: WriteRequestInput = {
    timeseries: [
      {
        labels: [l('__name__', 'm')],
        samples: stamps.map((t, i) => ({ value: i, timestamp: t })),
        exemplars: [{ labels: [l('trace_id', 't')], value: 1, timestamp: -42 }],
      },
    ],
  };
  const body = encodeWriteRequest(input);
  const parsed = parseWriteRequest(body);
  assert.equal(parsed.series[0].minTimestamp, Number.MIN_SAFE_INTEGER);
  assert.equal(parsed.series[0].maxTimestamp, Number.MAX_SAFE_INTEGER);
  const decoded = decodeWriteRequest(body);
  assert.deepEqual([...decoded.timeseries[0].timestamps], stamps);
  assert.equal(decoded.timeseries[0].exemplars[0].timestamp, -42);
});

// Independent reference: protobufjs from the prompb definitions.
const PROMPB = `
syntax = "proto3";
package prometheus;
message WriteRequest { repeated TimeSeries timeseries = 1; repeated MetricMetadata metadata = 3; }
message MetricMetadata {
  enum MetricType { UNKNOWN = 0; COUNTER = 1; GAUGE = 2; HISTOGRAM = 3; GAUGEHISTOGRAM = 4; SUMMARY = 5; INFO = 6; STATESET = 7; }
  MetricType type = 1; string metric_family_name = 2; string help = 4; string unit = 5;
}
message Sample { double value = 1; int64 timestamp = 2; }
message Exemplar { repeated Label labels = 1; double value = 2; int64 timestamp = 3; }
message BucketSpan { sint32 offset = 1; uint32 length = 2; }
message Histogram {
  oneof count { uint64 count_int = 1; double count_float = 2; }
  double sum = 3; sint32 schema = 4; double zero_threshold = 5;
  oneof zero_count { uint64 zero_count_int = 6; double zero_count_float = 7; }
  repeated BucketSpan negative_spans = 8; repeated sint64 negative_deltas = 9; repeated double negative_counts = 10;
  repeated BucketSpan positive_spans = 11; repeated sint64 positive_deltas = 12; repeated double positive_counts = 13;
  int32 reset_hint = 14; int64 timestamp = 15;
}
message TimeSeries { repeated Label labels = 1; repeated Sample samples = 2; repeated Exemplar exemplars = 3; repeated Histogram histograms = 4; }
message Label { string name = 1; string value = 2; }
`;
const root = protobuf.parse(PROMPB).root;
const WriteRequest = root.lookupType('prometheus.WriteRequest');

test('interop: requests encoded by protobufjs parse and decode, histograms included', () => {
  const msg = WriteRequest.fromObject({
    timeseries: [
      {
        labels: [
          { name: '__name__', value: 'rpc_latency_seconds' },
          { name: 'svc', value: 'cart' },
        ],
        samples: [
          { value: 0.5, timestamp: -3 },
          { value: 2, timestamp: 1732950000000 },
        ],
        exemplars: [{ labels: [{ name: 'trace_id', value: 'f00' }], value: 0.7, timestamp: 1732950000001 }],
        histograms: [
          { countInt: 5, sum: 12.5, schema: 3, positiveSpans: [{ offset: -2, length: 2 }], positiveDeltas: [3, -1], timestamp: 1732950999999 },
          { countFloat: 2.5, zeroCountFloat: 1, negativeCounts: [1.5], timestamp: -100 },
        ],
      },
    ],
    metadata: [{ type: 6, metricFamilyName: 'build_info', help: 'h', unit: '' }],
  });
  const body = WriteRequest.encode(msg).finish();
  const parsed = parseWriteRequest(body);
  assert.deepEqual(parsed.series[0].labels, [l('__name__', 'rpc_latency_seconds'), l('svc', 'cart')]);
  assert.deepEqual([parsed.series[0].samples, parsed.series[0].exemplars, parsed.series[0].histograms], [2, 1, 2]);
  assert.deepEqual([parsed.series[0].minTimestamp, parsed.series[0].maxTimestamp], [-100, 1732950999999]);
  assert.equal(parsed.metadata[0].type, 'info');

  const decoded = decodeWriteRequest(
    encodeRecordValue(
      parsed.series.map((s) => s.raw),
      parsed.metadata.map((m) => m.raw),
    ),
  );
  const ts = decoded.timeseries[0];
  assert.deepEqual([...ts.timestamps], [-3, 1732950000000]);
  assert.deepEqual([...ts.values], [0.5, 2]);
  assert.deepEqual(ts.exemplars, [{ labels: [l('trace_id', 'f00')], value: 0.7, timestamp: 1732950000001 }]);
  assert.equal(ts.histograms, 2);
  assert.deepEqual(decoded.metadata, [{ type: 'info', metricFamilyName: 'build_info', help: 'h', unit: '' }]);
});

test('interop: what encodeWriteRequest writes, protobufjs reads the same', () => {
  const input = fixture();
  const obj = WriteRequest.toObject(WriteRequest.decode(encodeWriteRequest(input)), { longs: Number, enums: String, defaults: true });
  assert.deepEqual(
    obj.timeseries[1].samples.map((s: { timestamp: number }) => s.timestamp),
    [-5, 0, -1732950000000],
  );
  assert.deepEqual(obj.timeseries[0].labels, input.timeseries[0].labels);
  assert.deepEqual(obj.timeseries[0].exemplars[0].timestamp, 1732950001000);
  assert.deepEqual(
    obj.metadata.map((m: { type: string; metricFamilyName: string }) => [m.type, m.metricFamilyName]),
    [
      ['COUNTER', 'http_requests_total'],
      ['GAUGE', 'temperature_celsius'],
      ['STATESET', 's'],
    ],
  );
});

/** Writes one unknown field of every wire type, a nested group among them. */
function unknowns(w: ProtoWriter): void {
  w.tag(100, 0);
  w.int64(-7); // 10-byte varint
  w.tag(101, 1);
  w.double(3.14);
  w.bytes(102, new Uint8Array([1, 2, 3, 0xff]));
  w.tag(103, 5);
  w.raw(new Uint8Array([9, 9, 9, 9]));
  w.tag(104, 3); // start group
  w.tag(1, 0);
  w.uvarint(5);
  w.tag(105, 3); // nested group
  w.string(2, 'inside');
  w.tag(105, 4);
  w.tag(104, 4); // end group
}

function labelMsg(w: ProtoWriter, field: number, name: string, value: string): void {
  const s = w.begin(field);
  unknowns(w);
  w.string(1, name);
  unknowns(w);
  w.string(2, value);
  w.end(s);
}

test('unknown fields of every wire type are skipped at every level', () => {
  const w = new ProtoWriter();
  unknowns(w);
  const ts = w.begin(1);
  unknowns(w);
  labelMsg(w, 1, '__name__', 'up');
  labelMsg(w, 1, 'job', 'node');
  for (const [v, t] of [
    [1, 1000],
    [0, 2000],
  ]) {
    const s = w.begin(2);
    unknowns(w);
    w.tag(1, 1);
    w.double(v);
    unknowns(w);
    w.tag(2, 0);
    w.int64(t);
    w.tag(3, 2); // identifyingLabels (mimir-prometheus), packed
    w.uvarint(2);
    w.raw(new Uint8Array([0, 1]));
    w.end(s);
  }
  const ex = w.begin(3);
  unknowns(w);
  labelMsg(w, 1, 'trace_id', 'abc');
  w.tag(2, 1);
  w.double(9);
  w.tag(3, 0);
  w.int64(1500);
  w.end(ex);
  const h = w.begin(4);
  unknowns(w);
  w.tag(15, 0);
  w.int64(2500);
  w.end(h);
  unknowns(w);
  w.end(ts);
  unknowns(w);
  const md = w.begin(3);
  unknowns(w);
  w.tag(1, 0);
  w.uvarint(1);
  w.string(2, 'up');
  w.string(3, 'not a field of MetricMetadata');
  w.string(4, 'help text');
  w.string(5, 'seconds');
  unknowns(w);
  w.end(md);
  w.bytes(2, new Uint8Array([0xde, 0xad])); // reserved WriteRequest field
  const body = w.finish();

  const parsed = parseWriteRequest(body);
  assert.deepEqual(parsed.series[0].labels, [l('__name__', 'up'), l('job', 'node')]);
  assert.deepEqual([parsed.series[0].samples, parsed.series[0].exemplars, parsed.series[0].histograms], [2, 1, 1]);
  assert.deepEqual([parsed.series[0].minTimestamp, parsed.series[0].maxTimestamp], [1000, 2500]);
  const want: MetricMetadata = { type: 'counter', metricFamilyName: 'up', help: 'help text', unit: 'seconds' };
  assert.deepEqual({ ...parsed.metadata[0], raw: undefined }, { ...want, raw: undefined });

  const decoded = decodeWriteRequest(
    encodeRecordValue(
      parsed.series.map((s) => s.raw),
      parsed.metadata.map((m) => m.raw),
    ),
  );
  assert.deepEqual(decoded.timeseries[0].labels, [l('__name__', 'up'), l('job', 'node')]);
  assert.deepEqual([...decoded.timeseries[0].timestamps], [1000, 2000]);
  assert.deepEqual([...decoded.timeseries[0].values], [1, 0]);
  assert.deepEqual(decoded.timeseries[0].exemplars, [{ labels: [l('trace_id', 'abc')], value: 9, timestamp: 1500 }]);
  assert.equal(decoded.timeseries[0].histograms, 1);
  assert.deepEqual(decoded.metadata, [want]);
});

test('missing fields take proto3 defaults; out-of-range metric types read as unknown', () => {
  const w = new ProtoWriter();
  const ts = w.begin(1);
  w.end(w.begin(1)); // an empty Label
  w.end(w.begin(2)); // an empty Sample
  w.end(ts);
  const md = w.begin(3);
  w.tag(1, 0);
  w.int64(-1); // negative enum, 10 bytes
  w.end(md);
  const md2 = w.begin(3);
  w.tag(1, 0);
  w.uvarint(99);
  w.end(md2);
  const decoded = decodeWriteRequest(w.finish());
  assert.deepEqual(decoded.timeseries[0].labels, [l('', '')]);
  assert.deepEqual([...decoded.timeseries[0].timestamps], [0]);
  assert.deepEqual([...decoded.timeseries[0].values], [0]);
  assert.deepEqual(
    decoded.metadata.map((m) => m.type),
    ['unknown', 'unknown'],
  );
});

/** A valid request with bytes appended or patched: [name, body, expected message]. */
function malformed(): [string, Uint8Array, RegExp][] {
  const cases: [string, Uint8Array, RegExp][] = [];
  const add = (name: string, build: (w: ProtoWriter) => void, re: RegExp) => {
    const w = new ProtoWriter();
    build(w);
    cases.push([name, w.finish(), re]);
  };
  const series = (w: ProtoWriter, inner: (w: ProtoWriter) => void) => {
    const s = w.begin(1);
    inner(w);
    w.end(s);
  };
  add('truncated tag varint', (w) => w.raw(new Uint8Array([0x8a])), /truncated varint in field 0 of WriteRequest at byte 0/);
  add(
    'length past end',
    (w) => w.raw(new Uint8Array([0x0a, 0x05, 0x0a])),
    /truncated length-delimited field 1 of WriteRequest: declares 5 bytes, 1 left at byte 0/,
  );
  add('truncated length varint', (w) => w.raw(new Uint8Array([0x0a, 0xff])), /truncated varint in field 1 of WriteRequest at byte 0/);
  add(
    'label length past its series',
    (w) => series(w, (w) => w.raw(new Uint8Array([0x0a, 0x09, 0x0a, 0x01, 0x61]))),
    /truncated length-delimited field 1 of TimeSeries: declares 9 bytes, 3 left at byte 2/,
  );
  add(
    'string past its label',
    (w) => series(w, (w) => w.raw(new Uint8Array([0x0a, 0x02, 0x0a, 0x04]))),
    /truncated length-delimited field 1 of Label: declares 4 bytes, 0 left at byte 4/,
  );
  add(
    'truncated sample double',
    (w) => series(w, (w) => w.raw(new Uint8Array([0x12, 0x04, 0x09, 0, 0, 0]))),
    /truncated fixed64 in field 1 of Sample at byte 4/,
  );
  add(
    'truncated sample timestamp',
    (w) => series(w, (w) => w.raw(new Uint8Array([0x12, 0x02, 0x10, 0x80]))),
    /truncated varint in field 2 of Sample at byte 4/,
  );
  add('wire type 6', (w) => w.raw(new Uint8Array([0x0e])), /invalid wire type 6 for field 1 in WriteRequest at byte 0/);
  add('wire type 7 in a series', (w) => series(w, (w) => w.raw(new Uint8Array([0x3f]))), /invalid wire type 7 for field 7 in TimeSeries at byte 2/);
  add('field number 0', (w) => w.raw(new Uint8Array([0x02, 0x00])), /invalid field number 0 in WriteRequest at byte 0/);
  add('stray end-group', (w) => w.raw(new Uint8Array([0x2c])), /unexpected end-group for field 5 in WriteRequest at byte 0/);
  add('unterminated group', (w) => w.raw(new Uint8Array([0x2b, 0x08, 0x01])), /unterminated group field 5 in WriteRequest at byte 0/);
  add('mismatched end-group', (w) => w.raw(new Uint8Array([0x2b, 0x14])), /end-group for field 2 closes group field 5 in WriteRequest at byte 1/);
  add('groups nested too deep', (w) => w.raw(new Uint8Array(200).fill(0x2b)), /groups nested deeper than 100 in WriteRequest/);
  add(
    'known field sent as a group',
    (w) => w.raw(new Uint8Array([0x0b, 0x0c])),
    /field 1 of WriteRequest has wire type start-group, expected length-delimited at byte 0/,
  );
  add(
    'labels sent as a varint',
    (w) => series(w, (w) => w.raw(new Uint8Array([0x08, 0x01]))),
    /field 1 of TimeSeries has wire type varint, expected length-delimited at byte 2/,
  );
  add(
    'sample value sent as fixed32',
    (w) => series(w, (w) => w.raw(new Uint8Array([0x12, 0x05, 0x0d, 0, 0, 0, 0]))),
    /field 1 of Sample has wire type fixed32, expected fixed64 at byte 4/,
  );
  add('timeseries sent as fixed64', (w) => w.raw(new Uint8Array([0x09, 1, 2, 3, 4, 5, 6, 7, 8])), /field 1 of WriteRequest has wire type fixed64/);
  add(
    'varint over 10 bytes',
    (w) => w.raw(new Uint8Array([0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f])),
    /varint overflows 64 bits in field 5 of WriteRequest at byte 0/,
  );
  add(
    'bad exemplar label',
    (w) => series(w, (w) => w.raw(new Uint8Array([0x1a, 0x04, 0x0a, 0x02, 0x0a, 0x05]))),
    /truncated length-delimited field 1 of Label/,
  );
  add(
    'truncated metadata string',
    (w) => {
      const m = w.begin(3);
      w.raw(new Uint8Array([0x12, 0x07, 0x61]));
      w.end(m);
    },
    /truncated length-delimited field 2 of MetricMetadata/,
  );
  return cases;
}

test('every malformed input gives bad-protobuf 400 naming what broke, in parse and in decode', () => {
  for (const [name, body, re] of malformed()) {
    assert.throws(() => parseWriteRequest(body), isBadProtobuf(re), `parse: ${name}`);
    assert.throws(() => decodeWriteRequest(body), isBadProtobuf(re), `decode: ${name}`);
  }
});

test('fuzz: truncated and corrupted requests fail only with RemoteWriteError, and parse rejects what decode rejects', () => {
  const body = encodeWriteRequest(fixture());
  let seed = 12345;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const inputs: Uint8Array[] = [];
  for (let n = 0; n < body.length; n++) inputs.push(body.subarray(0, n));
  for (let i = 0; i < 3000; i++) {
    const b = Buffer.from(body);
    const flips = 1 + Math.floor(rand() * 3);
    for (let f = 0; f < flips; f++) b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256);
    inputs.push(b);
  }
  for (const input of inputs) {
    let parseErr: unknown;
    let decodeErr: unknown;
    try {
      const parsed = parseWriteRequest(input);
      // Whatever the distributor accepts, the ingester must be able to decode.
      decodeWriteRequest(
        encodeRecordValue(
          parsed.series.map((s) => s.raw),
          parsed.metadata.map((m) => m.raw),
        ),
      );
    } catch (err) {
      parseErr = err;
    }
    try {
      decodeWriteRequest(input);
    } catch (err) {
      decodeErr = err;
    }
    for (const err of [parseErr, decodeErr]) {
      if (err !== undefined) assert.ok(err instanceof RemoteWriteError && err.code === 'err-strata-bad-protobuf', String(err));
    }
    assert.equal(parseErr === undefined, decodeErr === undefined, 'parse and decode agree on validity');
  }
});

test('invalid UTF-8 passes the parser as U+FFFD and is flagged for validation', () => {
  const w = new ProtoWriter();
  const ts = w.begin(1);
  const a = w.begin(1);
  w.string(1, '__name__');
  w.string(2, 'up');
  w.end(a);
  const b = w.begin(1);
  w.string(1, 'job');
  w.bytes(2, new Uint8Array([0x61, 0xc3, 0x28])); // bad continuation byte
  w.end(b);
  w.end(ts);
  const parsed = parseWriteRequest(w.finish());
  assert.equal(parsed.series[0].invalidUtf8, true);
  assert.equal(parsed.series[0].labels[1].value, 'a\ufffd(');
  assert.equal(validateParsedSeries(parsed.series[0])?.code, 'err-strata-invalid-label-value');
});

test('replaceSeriesLabels swaps the labels and keeps every other byte', () => {
  const input = fixture();
  const parsed = parseWriteRequest(encodeWriteRequest(input));
  const raw = parsed.series[0].raw;
  const next = [l('__name__', 'http_requests_total'), l('job', 'api')];
  const replaced = replaceSeriesLabels(raw, next);
  const decoded = decodeWriteRequest(encodeRecordValue([replaced]));
  assert.deepEqual(decoded.timeseries[0].labels, next);
  assert.deepEqual(
    [...decoded.timeseries[0].timestamps],
    input.timeseries[0].samples.map((s) => s.timestamp),
  );
  assert.deepEqual(
    [...decoded.timeseries[0].values],
    input.timeseries[0].samples.map((s) => s.value),
  );
  assert.deepEqual(decoded.timeseries[0].exemplars, input.timeseries[0].exemplars);
  // Labels interleaved with other fields are all dropped; the rest stays in order.
  const w = new ProtoWriter();
  labelMsg(w, 1, 'a', '1');
  w.tag(99, 0);
  w.uvarint(5);
  labelMsg(w, 1, 'b', '2');
  const s = w.begin(2);
  w.tag(2, 0);
  w.int64(10);
  w.end(s);
  const out = replaceSeriesLabels(w.finish(), [l('__name__', 'z')]);
  const p = parseWriteRequest(encodeRecordValue([out]));
  assert.deepEqual(p.series[0].labels, [l('__name__', 'z')]);
  assert.equal(p.series[0].samples, 1);
  assert.equal(p.series[0].minTimestamp, 10);
});
