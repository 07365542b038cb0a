// Record format 3: float series symbolized by the distributor read back by ingesters
// with the same labels, timestamps and value bits; anything else stays format 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Label } from '@strata/model';
import {
  STALE_NAN_BITS,
  SymbolizedDecoder,
  encodeWriteRequest,
  symbolString,
  parseWriteRequest,
  parseWriteRequestV2,
  symbolizeSeries,
  type SeriesInput,
  type SymbolizedRecord,
} from './index.ts';
import { ProtoWriter } from './wire.ts';

const l = (name: string, value: string): Label => ({ name, value });

function bodies(timeseries: SeriesInput[]): Uint8Array[] {
  return parseWriteRequest(encodeWriteRequest({ timeseries })).series.map((s) => s.raw);
}

/** A decoded record's symbols table as strings. */
const symbolsOf = (r: SymbolizedRecord): string[] => Array.from({ length: r.symbols }, (_, i) => symbolString(r, i));

/** Each series of a decoded record as labels, timestamps and value bits. */
function read(r: SymbolizedRecord): { labels: Label[]; timestamps: number[]; bits: bigint[] }[] {
  const bits = new BigUint64Array(r.values.buffer, r.values.byteOffset, r.values.length);
  const out = [];
  for (let i = 0, refFrom = 0, from = 0; i < r.series; refFrom = r.refEnd[i], from = r.sampleEnd[i], i++) {
    const labels: Label[] = [];
    for (let k = refFrom; k < r.refEnd[i]; k += 2) labels.push(l(symbolString(r, r.refs[k]), symbolString(r, r.refs[k + 1])));
    out.push({ labels, timestamps: [...r.timestamps.subarray(from, r.sampleEnd[i])], bits: [...bits.subarray(from, r.sampleEnd[i])] });
  }
  return out;
}

const bitsOf = (v: number): bigint => new BigUint64Array(new Float64Array([v]).buffer)[0];

test('float series come back with their labels, timestamps and value bits, each string once', () => {
  const input: SeriesInput[] = [
    {
      labels: [l('__name__', 'node_cpu_seconds_total'), l('cpu', '0'), l('instance', 'host-1:9100'), l('mode', 'idle')],
      samples: [{ value: 12.5, timestamp: 1732950000000 }],
    },
    {
      labels: [l('__name__', 'node_cpu_seconds_total'), l('cpu', '1'), l('instance', 'host-1:9100'), l('mode', 'idle')],
      samples: [
        { value: -0, timestamp: 1732950000000 },
        { value: Infinity, timestamp: 1732950015000 },
      ],
    },
    {
      labels: [l('__name__', 'up'), l('instance', 'host-1:9100'), l('room', 'küche ✓')],
      samples: [
        { value: NaN, timestamp: -5, stale: true },
        { value: 1e300, timestamp: 0 },
      ],
    },
    { labels: [l('__name__', 'no_samples')], samples: [] },
  ];
  const value = symbolizeSeries(bodies(input));
  assert.ok(value !== undefined);
  const r = new SymbolizedDecoder().decode(value);
  const symbols = symbolsOf(r);
  assert.equal(symbols[0], '', 'symbol 0 is the empty string, as remote write 2.0 requires');
  assert.equal(new Set(symbols).size, symbols.length, 'no string twice in the table');
  assert.equal(symbols.filter((s) => s === 'host-1:9100').length, 1);
  assert.deepEqual(
    read(r),
    input.map((s) => ({
      labels: s.labels,
      timestamps: s.samples.map((x) => x.timestamp),
      bits: s.samples.map((x) => (x.stale ? STALE_NAN_BITS : bitsOf(x.value))),
    })),
  );
  assert.ok(value.length < Buffer.concat(bodies(input)).length, 'smaller than the 1.0 series it replaces');
  // A valid remote write 2.0 Request: the distributor's own 2.0 parser reads the same labels.
  assert.deepEqual(
    parseWriteRequestV2(value).series.map((s) => s.labels),
    input.map((s) => s.labels),
  );
});

test('records numbered anew: each carries only its own strings, whatever earlier records held', () => {
  const d = new SymbolizedDecoder();
  const a = d.decode(symbolizeSeries(bodies([{ labels: [l('__name__', 'a'), l('job', 'one')], samples: [{ value: 1, timestamp: 1 }] }]))!);
  assert.deepEqual(symbolsOf(a), ['', '__name__', 'a', 'job', 'one']);
  const b = d.decode(symbolizeSeries(bodies([{ labels: [l('__name__', 'b'), l('job', 'one')], samples: [{ value: 2, timestamp: 2 }] }]))!);
  assert.deepEqual(symbolsOf(b), ['', '__name__', 'b', 'job', 'one']);
  assert.deepEqual(read(b)[0].labels, [l('__name__', 'b'), l('job', 'one')]);
});

test('a decoder reused across records returns each record as written', () => {
  const d = new SymbolizedDecoder();
  const many: SeriesInput[] = Array.from({ length: 3000 }, (_, i) => ({
    labels: [l('__name__', `m${i % 7}`), l('i', String(i))],
    samples: [{ value: i, timestamp: i }],
  }));
  const big = read(d.decode(symbolizeSeries(bodies(many))!));
  assert.equal(big.length, 3000);
  assert.deepEqual(big[2999], { labels: [l('__name__', 'm3'), l('i', '2999')], timestamps: [2999], bits: [bitsOf(2999)] });
  const small = read(d.decode(symbolizeSeries(bodies([{ labels: [l('a', 'b')], samples: [{ value: 7, timestamp: 9 }] }]))!));
  assert.deepEqual(small, [{ labels: [l('a', 'b')], timestamps: [9], bits: [bitsOf(7)] }]);
});

test('series with exemplars or native histograms are not symbolized (the record stays format 2)', () => {
  const plain: SeriesInput = { labels: [l('__name__', 'up')], samples: [{ value: 1, timestamp: 1 }] };
  assert.equal(symbolizeSeries(bodies([plain, { ...plain, exemplars: [{ labels: [l('trace_id', 'abc')], value: 1, timestamp: 1 }] }])), undefined);
  assert.equal(
    // A Histogram message holding only its timestamp (field 15).
    symbolizeSeries(bodies([{ labels: [l('__name__', 'h')], samples: [], histograms: [new Uint8Array([0x78, 1])] }])),
    undefined,
  );
  // A label message with a field 1.0 does not define leaves the pair unresolved: the next record must not reuse it.
  const odd = bodies([plain])[0].slice();
  assert.equal(odd[0], 0x0a);
  const withUnknown = Buffer.concat([Buffer.from([0x0a, odd[1] + 2]), odd.subarray(2, 2 + odd[1]), Buffer.from([0x18, 0x01]), odd.subarray(2 + odd[1])]);
  assert.equal(symbolizeSeries([withUnknown]), undefined);
  assert.equal(symbolizeSeries([withUnknown]), undefined, 'refused again, not read with ids it never got');
  assert.deepEqual(
    read(new SymbolizedDecoder().decode(symbolizeSeries(bodies([plain, { labels: [l('__name__', 'up'), l('job', 'x')], samples: [] }]))!)).map((s) => s.labels),
    [plain.labels, [l('__name__', 'up'), l('job', 'x')]],
  );
});

test('a reference outside the symbols table, an odd label count or a histogram field is refused, never misread', () => {
  const d = new SymbolizedDecoder();
  const request = (series: (w: ProtoWriter) => void, symbols = ['', '__name__', 'up']) => {
    const w = new ProtoWriter();
    for (const s of symbols) w.string(4, s);
    const at = w.begin(5);
    series(w);
    w.end(at);
    return w.finish();
  };
  const refs = (w: ProtoWriter, ...r: number[]) => {
    const at = w.begin(1);
    for (const x of r) w.uvarint(x);
    w.end(at);
  };
  assert.equal(read(d.decode(request((w) => refs(w, 1, 2))))[0].labels[0].value, 'up');
  assert.throws(() => d.decode(request((w) => refs(w, 1, 3))), /label reference 3 outside the 3 symbols/);
  assert.throws(() => d.decode(request((w) => refs(w, 1, 2, 1))), /odd number of label references/);
  assert.throws(
    () =>
      d.decode(
        request((w) => {
          refs(w, 1, 2);
          w.bytes(3, new Uint8Array([0x78, 1]));
        }),
      ),
    /field 3 of TimeSeries in a format-3 record/,
  );
  assert.throws(() => d.decode(Buffer.from([0x2a, 0x05, 0x0a])), /truncated/);
});
