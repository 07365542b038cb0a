import { test } from 'node:test';
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import type { Label } from '@strata/model';
import {
  decodeWriteRequest,
  encodeMetricMetadata,
  encodeRecordValue,
  encodeSymbolizedWriteRequestV2,
  encodeWriteRequest,
  encodeWriteRequestV2,
  isStaleNaN,
  metricFamilyName,
  parseWriteRequestV2,
  RemoteWriteError,
  seriesV2ToV1,
  validateParsedSeries,
  type WriteRequestV2Input,
} from './index.ts';
import { ProtoWriter } from './wire.ts';

const l = (name: string, value: string): Label => ({ name, value });

function fixture(): WriteRequestV2Input {
  return {
    timeseries: [
      {
        labels: [l('__name__', 'http_requests_total'), l('code', '200'), l('job', 'api')],
        samples: [
          { value: 1, timestamp: 1732950000000 },
          { value: 2.5, timestamp: 1732950015000 },
          { value: 0, timestamp: 1732950030000, stale: true },
        ],
        exemplars: [{ labels: [l('trace_id', 'abc123'), l('span_id', 'def')], value: 0.25, timestamp: 1732950001000 }],
        metadata: { type: 'counter', help: 'Requests served.', unit: '' },
      },
      {
        labels: [l('__name__', 'rpc_duration_seconds_bucket'), l('le', '+Inf'), l('room', 'kitchen ✓')],
        samples: [{ value: -3.75, timestamp: -5 }],
        metadata: { type: 'histogram', help: 'RPC latency.', unit: 'seconds' },
        createdTimestamp: 1732949000000,
      },
      { labels: [l('__name__', 'no_metadata')], samples: [{ value: 7, timestamp: 0 }] },
    ],
  };
}

function toV1(body: Buffer) {
  const req = parseWriteRequestV2(body);
  const series = req.series.map((s) => seriesV2ToV1(req, s));
  return { req, decoded: decodeWriteRequest(encodeRecordValue(series)) };
}

function isV2Error(pattern: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof RemoteWriteError, `expected RemoteWriteError, got ${String(err)}`);
    assert.equal(err.kind, 'bad-input');
    assert.ok(!err.message.includes('\n'), 'one line');
    assert.match(err.message, pattern);
    return true;
  };
}

test('v2 round trip: symbols resolve to the same labels; counts, bounds and metadata; 1.0 conversion keeps samples and exemplars', () => {
  const input = fixture();
  const body = encodeWriteRequestV2(input);
  const { req, decoded } = toV1(body);
  assert.equal(req.symbols[0], '');
  assert.equal(new Set(req.symbols).size, req.symbols.length, 'symbols are de-duplicated');
  assert.deepEqual(
    req.series.map((s) => [s.labels, s.samples, s.exemplars, s.histograms, s.minTimestamp, s.maxTimestamp]),
    [
      [input.timeseries[0].labels, 3, 1, 0, 1732950000000, 1732950030000],
      [input.timeseries[1].labels, 1, 0, 0, -5, -5],
      [input.timeseries[2].labels, 1, 0, 0, 0, 0],
    ],
  );
  assert.deepEqual(req.series[0].metadata, { type: 'counter', metricFamilyName: 'http_requests_total', help: 'Requests served.', unit: '' });
  assert.deepEqual(req.series[1].metadata, { type: 'histogram', metricFamilyName: 'rpc_duration_seconds', help: 'RPC latency.', unit: 'seconds' });
  assert.equal(req.series[2].metadata, undefined);
  for (const s of req.series) assert.equal(validateParsedSeries(s), undefined);

  assert.equal(decoded.timeseries.length, 3);
  const [a, b, c] = decoded.timeseries;
  assert.deepEqual(a.labels, input.timeseries[0].labels);
  assert.deepEqual([...a.timestamps], [1732950000000, 1732950015000, 1732950030000]);
  assert.deepEqual([a.values[0], a.values[1]], [1, 2.5]);
  assert.ok(isStaleNaN(a.values, 2), 'stale marker bits survive 2.0 -> 1.0');
  assert.deepEqual(a.exemplars, [{ labels: [l('trace_id', 'abc123'), l('span_id', 'def')], value: 0.25, timestamp: 1732950001000 }]);
  assert.deepEqual([b.labels, [...b.timestamps], [...b.values]], [input.timeseries[1].labels, [-5], [-3.75]]);
  assert.deepEqual([...c.values], [7]);
});

test('v2 -> 1.0 conversion takes the labels it is given (empty values dropped by the caller)', () => {
  const body = encodeWriteRequestV2({ timeseries: [{ labels: [l('__name__', 'm'), l('empty', ''), l('z', '1')], samples: [{ value: 1, timestamp: 5 }] }] });
  const req = parseWriteRequestV2(body);
  const raw = seriesV2ToV1(req, req.series[0], [l('__name__', 'm'), l('z', '1')]);
  assert.deepEqual(decodeWriteRequest(encodeRecordValue([raw])).timeseries[0].labels, [l('__name__', 'm'), l('z', '1')]);
});

test('v2 metadata becomes 1.0 MetricMetadata with the family name', () => {
  assert.equal(metricFamilyName('rpc_seconds_bucket', 'histogram'), 'rpc_seconds');
  assert.equal(metricFamilyName('rpc_seconds_count', 'gaugehistogram'), 'rpc_seconds');
  assert.equal(metricFamilyName('rpc_seconds_sum', 'summary'), 'rpc_seconds');
  assert.equal(metricFamilyName('rpc_seconds', 'summary'), 'rpc_seconds');
  assert.equal(metricFamilyName('_count', 'histogram'), '_count');
  assert.equal(metricFamilyName('http_requests_total', 'counter'), 'http_requests_total');
  const m = parseWriteRequestV2(encodeWriteRequestV2(fixture())).series[1].metadata!;
  const decoded = decodeWriteRequest(encodeRecordValue([], [encodeMetricMetadata(m)]));
  assert.deepEqual(decoded.metadata, [m]);
});

// Independent reference: protobufjs from prompb/io/prometheus/write/v2/types.proto.
const V2PROTO = `
syntax = "proto3";
package io.prometheus.write.v2;
message Request { repeated string symbols = 4; repeated TimeSeries timeseries = 5; }
message TimeSeries {
  repeated uint32 labels_refs = 1; repeated Sample samples = 2; repeated Histogram histograms = 3;
  repeated Exemplar exemplars = 4; Metadata metadata = 5; int64 created_timestamp = 6;
}
message Exemplar { repeated uint32 labels_refs = 1; double value = 2; int64 timestamp = 3; }
message Sample { double value = 1; int64 timestamp = 2; int64 start_timestamp = 3; }
message Metadata {
  enum MetricType { METRIC_TYPE_UNSPECIFIED = 0; METRIC_TYPE_COUNTER = 1; METRIC_TYPE_GAUGE = 2; METRIC_TYPE_HISTOGRAM = 3;
    METRIC_TYPE_GAUGEHISTOGRAM = 4; METRIC_TYPE_SUMMARY = 5; METRIC_TYPE_INFO = 6; METRIC_TYPE_STATESET = 7; }
  MetricType type = 1; uint32 help_ref = 3; uint32 unit_ref = 4;
}
message BucketSpan { sint32 offset = 1; uint32 length = 2; }
message Histogram {
  oneof count { uint64 count_int = 1; double count_float = 2; }
  double sum = 3; sint32 schema = 4; double zero_threshold = 5;
  oneof zero_count { uint64 zero_count_int = 6; double zero_count_float = 7; }
  repeated BucketSpan negative_spans = 8; repeated sint64 negative_deltas = 9; repeated double negative_counts = 10;
  repeated BucketSpan positive_spans = 11; repeated sint64 positive_deltas = 12; repeated double positive_counts = 13;
  int32 reset_hint = 14; int64 timestamp = 15; repeated double custom_values = 16;
}
`;
const Request = protobuf.parse(V2PROTO).root.lookupType('io.prometheus.write.v2.Request');

test('interop: a request encoded by protobufjs (start timestamps, created timestamp, histograms) parses and converts', () => {
  const body = Request.encode(
    Request.fromObject({
      symbols: ['', '__name__', 'rpc_latency_seconds', 'svc', 'cart', 'trace_id', 'f00', 'Latency.', 'seconds'],
      timeseries: [
        {
          labelsRefs: [1, 2, 3, 4],
          samples: [
            { value: 0.5, timestamp: -3, startTimestamp: -10 },
            { value: 2, timestamp: 1732950000000 },
          ],
          exemplars: [{ labelsRefs: [5, 6], value: 0.7, timestamp: 1732950000001 }],
          metadata: { type: 2, helpRef: 7, unitRef: 8 },
          createdTimestamp: 1732940000000,
        },
        {
          labelsRefs: [1, 2, 3, 4],
          histograms: [{ countInt: 5, sum: 12.5, schema: 3, positiveSpans: [{ offset: -2, length: 2 }], positiveDeltas: [3, -1], timestamp: 1732950999999 }],
        },
      ],
    }),
  ).finish();
  const { req, decoded } = toV1(Buffer.from(body));
  assert.deepEqual(req.series[0].labels, [l('__name__', 'rpc_latency_seconds'), l('svc', 'cart')]);
  assert.deepEqual([req.series[0].samples, req.series[0].exemplars, req.series[0].histograms], [2, 1, 0]);
  assert.deepEqual(req.series[0].metadata, { type: 'gauge', metricFamilyName: 'rpc_latency_seconds', help: 'Latency.', unit: 'seconds' });
  assert.deepEqual([req.series[1].samples, req.series[1].histograms, req.series[1].minTimestamp], [0, 1, 1732950999999]);
  assert.deepEqual([...decoded.timeseries[0].timestamps], [-3, 1732950000000]);
  assert.deepEqual([...decoded.timeseries[0].values], [0.5, 2]);
  assert.deepEqual(decoded.timeseries[0].exemplars, [{ labels: [l('trace_id', 'f00')], value: 0.7, timestamp: 1732950000001 }]);
  assert.equal(decoded.timeseries[1].histograms, 1, 'histograms travel as 1.0 TimeSeries.histograms');
});

test('interop: what encodeWriteRequestV2 writes, protobufjs reads the same', () => {
  const input = fixture();
  const obj = Request.toObject(Request.decode(encodeWriteRequestV2(input)), { longs: Number, enums: String, defaults: true });
  const labelsOf = (refs: number[]) => Array.from({ length: refs.length / 2 }, (_, i) => l(obj.symbols[refs[2 * i]], obj.symbols[refs[2 * i + 1]]));
  assert.equal(obj.symbols[0], '');
  assert.deepEqual(
    obj.timeseries.map((ts: { labelsRefs: number[] }) => labelsOf(ts.labelsRefs)),
    input.timeseries.map((ts) => ts.labels),
  );
  assert.deepEqual(
    obj.timeseries[1].samples.map((s: { timestamp: number }) => s.timestamp),
    [-5],
  );
  assert.equal(obj.timeseries[1].createdTimestamp, 1732949000000);
  assert.equal(obj.timeseries[0].metadata.type, 'METRIC_TYPE_COUNTER');
  assert.equal(obj.symbols[obj.timeseries[0].metadata.helpRef], 'Requests served.');
  assert.deepEqual(labelsOf(obj.timeseries[0].exemplars[0].labelsRefs), input.timeseries[0].exemplars![0].labels);
});

test('unpacked label references and symbols after the timeseries are accepted', () => {
  const w = new ProtoWriter();
  const ts = w.begin(5);
  for (const ref of [1, 2]) {
    w.tag(1, 0);
    w.uvarint(ref);
  }
  const s = w.begin(2);
  w.tag(1, 1);
  w.double(4);
  w.tag(2, 0);
  w.int64(9);
  w.end(s);
  w.end(ts);
  for (const sym of ['', '__name__', 'late_symbols']) w.string(4, sym);
  const req = parseWriteRequestV2(w.finish());
  assert.deepEqual(req.series[0].labels, [l('__name__', 'late_symbols')]);
  assert.equal(req.series[0].samples, 1);
});

test('symbol errors: out-of-range references and odd label reference counts are 400 with the reason', () => {
  const symbols = ['', '__name__', 'up', 'job'];
  const sample = [{ value: 1, timestamp: 1 }];
  const cases: [string, Buffer, RegExp][] = [
    [
      'label name ref',
      encodeSymbolizedWriteRequestV2({ symbols, timeseries: [{ labelsRefs: [9, 2], samples: sample }] }),
      /label name reference 9 in timeseries\[0\] is out of range: the request has 4 symbols/,
    ],
    [
      'label value ref in 2nd series',
      encodeSymbolizedWriteRequestV2({
        symbols,
        timeseries: [
          { labelsRefs: [1, 2], samples: sample },
          { labelsRefs: [1, 4], samples: sample },
        ],
      }),
      /label value reference 4 in timeseries\[1\] is out of range/,
    ],
    [
      'odd labels_refs',
      encodeSymbolizedWriteRequestV2({ symbols, timeseries: [{ labelsRefs: [1, 2, 3], samples: sample }] }),
      /timeseries\[0\] has 3 label references, an odd number/,
    ],
    [
      'exemplar ref',
      encodeSymbolizedWriteRequestV2({
        symbols,
        timeseries: [{ labelsRefs: [1, 2], samples: sample, exemplars: [{ labelsRefs: [3, 99], value: 1, timestamp: 1 }] }],
      }),
      /exemplar label reference 99 in timeseries\[0\] is out of range/,
    ],
    [
      'odd exemplar refs',
      encodeSymbolizedWriteRequestV2({
        symbols,
        timeseries: [{ labelsRefs: [1, 2], samples: sample, exemplars: [{ labelsRefs: [3], value: 1, timestamp: 1 }] }],
      }),
      /exemplar 0 of timeseries\[0\] has 1 label references, an odd number/,
    ],
    [
      'help ref',
      encodeSymbolizedWriteRequestV2({ symbols, timeseries: [{ labelsRefs: [1, 2], samples: sample, metadata: { type: 'gauge', helpRef: 4, unitRef: 0 } }] }),
      /help reference 4 in timeseries\[0\] is out of range/,
    ],
    [
      'unit ref',
      encodeSymbolizedWriteRequestV2({ symbols, timeseries: [{ labelsRefs: [1, 2], samples: sample, metadata: { type: 'gauge', helpRef: 0, unitRef: 7 } }] }),
      /unit reference 7 in timeseries\[0\] is out of range/,
    ],
    ['no symbols at all', encodeSymbolizedWriteRequestV2({ symbols: [], timeseries: [{ labelsRefs: [0, 0], samples: sample }] }), /the request has 0 symbols/],
    [
      'a 1.0 WriteRequest sent as 2.0',
      encodeWriteRequest({ timeseries: [{ labels: [l('__name__', 'up')], samples: sample }] }),
      /field 1 is reserved .* looks like a remote write 1\.0 prometheus\.WriteRequest/,
    ],
  ];
  for (const [name, body, pattern] of cases) {
    assert.throws(() => parseWriteRequestV2(body), isV2Error(pattern), name);
  }
  // A reference above 2^32 cannot be a uint32.
  const w = new ProtoWriter();
  const ts = w.begin(5);
  w.tag(1, 0);
  w.uvarint(2 ** 33);
  w.end(ts);
  assert.throws(() => parseWriteRequestV2(w.finish()), isV2Error(/does not fit uint32/));
});

test('truncated and corrupt v2 bodies are bad-protobuf 400, never a crash', () => {
  const body = encodeWriteRequestV2(fixture());
  for (let cut = 1; cut < body.length; cut += 3) {
    try {
      const req = parseWriteRequestV2(body.subarray(0, cut));
      for (const s of req.series) seriesV2ToV1(req, s);
    } catch (err) {
      assert.ok(err instanceof RemoteWriteError && err.kind === 'bad-input', `cut at ${cut}: ${String(err)}`);
    }
  }
  for (let seed = 1; seed <= 300; seed++) {
    const b = Buffer.from(body);
    let x = seed;
    for (let k = 0; k < 4; k++) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      b[x % b.length] ^= 1 + ((x >> 8) % 255);
    }
    try {
      const req = parseWriteRequestV2(b);
      for (const s of req.series) seriesV2ToV1(req, s);
    } catch (err) {
      assert.ok(err instanceof RemoteWriteError && err.kind === 'bad-input', `seed ${seed}: ${String(err)}`);
    }
  }
});

test('a symbol that is not UTF-8 marks the series that uses it, and validation rejects it', () => {
  const w = new ProtoWriter();
  w.string(4, '');
  w.string(4, '__name__');
  w.string(4, 'ok');
  w.bytes(4, Buffer.from([0x62, 0xff, 0x61])); // "b\xffa"
  w.string(4, 'lbl');
  for (const refs of [
    [1, 2],
    [1, 2, 4, 3],
  ]) {
    const ts = w.begin(5);
    const p = w.begin(1);
    for (const r of refs) w.uvarint(r);
    w.end(p);
    w.end(ts);
  }
  const req = parseWriteRequestV2(w.finish());
  assert.deepEqual(
    req.series.map((s) => s.invalidUtf8),
    [false, true],
  );
  assert.equal(validateParsedSeries(req.series[1])?.code, 'err-strata-invalid-label-value');
});
