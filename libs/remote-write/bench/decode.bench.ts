// Micro-benchmark of the remote_write hot path: a 1000-series x 10-sample request
// through parse (distributor), record framing, and decode (ingester); plus the
// short-string decoding choice wire.ts made. Prints figures; asserts nothing.
// Run: cd /work/main && node --import tsx libs/remote-write/bench/decode.bench.ts

import {
  compressBody,
  decodeWriteRequest,
  decompressBody,
  encodeRecordValue,
  encodeWriteRequest,
  encodeWriteRequestV2,
  parseWriteRequest,
  parseWriteRequestV2,
  seriesV2ToV1,
  validateSeriesLabels,
  type SeriesInput,
} from '../src/index.ts';

const SERIES = 1000;
const SAMPLES = 10;

/** `variant` changes the instance and pod values, so different variants share few strings. */
function request(variant = 0): Buffer {
  return encodeWriteRequest({ timeseries: timeseries(variant) });
}

function timeseries(variant = 0): SeriesInput[] {
  const timeseries: SeriesInput[] = [];
  const t0 = 1732950000000;
  for (let i = 0; i < SERIES; i++) {
    timeseries.push({
      labels: [
        { name: '__name__', value: `http_requests_total` },
        { name: 'code', value: String(200 + (i % 5)) },
        { name: 'instance', value: `10.${variant}.${i % 256}.${(i >> 8) % 256}:9090` },
        { name: 'job', value: 'api-server' },
        { name: 'method', value: i % 2 ? 'GET' : 'POST' },
        { name: 'namespace', value: 'production' },
        { name: 'pod', value: `api-server-${variant.toString(16).padStart(9, '0')}-${i.toString(36).padStart(5, 'x')}` },
      ],
      samples: Array.from({ length: SAMPLES }, (_, k) => ({ value: i * 1000 + k * 0.5, timestamp: t0 + k * 15000 })),
    });
  }
  return timeseries;
}

function measure(name: string, bytes: number, series: number, fn: () => unknown, unit = 'series'): void {
  // Warm up, then take the best of 5 rounds of ~300 ms each.
  const until = performance.now() + 300;
  let iters = 0;
  while (performance.now() < until) {
    fn();
    iters++;
  }
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const start = performance.now();
    for (let i = 0; i < iters; i++) fn();
    best = Math.min(best, (performance.now() - start) / iters);
  }
  const perSec = 1000 / best;
  const rate = `${((series * perSec) / 1e6).toFixed(2)} M ${unit}/s`;
  const samples = unit === 'series' ? `  ${((series * SAMPLES * perSec) / 1e6).toFixed(1)} M samples/s` : '';
  console.log(`${name.padEnd(40)} ${(best * 1000).toFixed(0).padStart(6)} µs/op  ${((bytes * perSec) / 1e6).toFixed(0).padStart(5)} MB/s  ${rate}${samples}`);
}

const body = request();
const compressed = compressBody(body);
const parsed = parseWriteRequest(body);
const raws = parsed.series.map((s) => s.raw);
const record = encodeRecordValue(raws);

console.log(`node ${process.version}; request: ${SERIES} series x ${SAMPLES} samples, ${body.length} bytes (${compressed.length} snappy)`);
measure('decompressBody (snappy)', body.length, SERIES, () => decompressBody(compressed, 50 << 20));
measure('parseWriteRequest', body.length, SERIES, () => parseWriteRequest(body));
// Label strings unseen by the intern table: 64 variants x 2000 distinct values overflow its 16Ki slots.
const variants = Array.from({ length: 64 }, (_, v) => request(v + 1));
let next = 0;
measure('parseWriteRequest, mostly unseen values', body.length, SERIES, () => parseWriteRequest(variants[next++ & 63]));
measure('parse + validateSeriesLabels', body.length, SERIES, () => {
  for (const s of parseWriteRequest(body).series) validateSeriesLabels(s.labels);
});
measure('encodeRecordValue', record.length, SERIES, () => encodeRecordValue(raws));
measure('decodeWriteRequest', record.length, SERIES, () => decodeWriteRequest(record));
measure('decodeWriteRequest, mostly unseen values', record.length, SERIES, () => decodeWriteRequest(variants[next++ & 63]));
measure('encodeWriteRequest (test encoder)', body.length, SERIES, () => request());

// Remote write 2.0: the same series with a symbols table; the distributor parses, then converts each series to 1.0.
const v2 = encodeWriteRequestV2({ timeseries: timeseries() });
console.log(`remote write 2.0: the same request is ${v2.length} bytes (${compressBody(v2).length} snappy)`);
measure('parseWriteRequestV2', v2.length, SERIES, () => parseWriteRequestV2(v2));
measure('parseWriteRequestV2 + seriesV2ToV1', v2.length, SERIES, () => {
  const req = parseWriteRequestV2(v2);
  for (const s of req.series) seriesV2ToV1(req, s);
});

// Short-string decoding: the choice behind ProtoReader.string().
const strings = parsed.series.flatMap((s) => s.labels.flatMap((l) => [l.name, l.value]));
const packed = Buffer.concat(strings.map((s) => Buffer.concat([Buffer.from([Buffer.byteLength(s)]), Buffer.from(s)])));
const u8 = new Uint8Array(packed.buffer, packed.byteOffset, packed.byteLength);
const td = new TextDecoder();
const slicer = packed as unknown as { utf8Slice(a: number, b: number): string };
function scan(decode: (a: number, b: number) => string): number {
  let n = 0;
  for (let p = 0; p < packed.length;) {
    const len = packed[p];
    n += decode(p + 1, p + 1 + len).length;
    p += 1 + len;
  }
  return n;
}
const avg = (packed.length / strings.length - 1).toFixed(1);
console.log(`short strings: ${strings.length} per op, ${avg} bytes average`);
measure('  TextDecoder.decode(subarray)', packed.length, strings.length, () => scan((a, b) => td.decode(u8.subarray(a, b))), 'strings');
measure("  buffer.toString('utf8', a, b)", packed.length, strings.length, () => scan((a, b) => packed.toString('utf8', a, b)), 'strings');
measure('  buffer.utf8Slice(a, b)', packed.length, strings.length, () => scan((a, b) => slicer.utf8Slice(a, b)), 'strings');
