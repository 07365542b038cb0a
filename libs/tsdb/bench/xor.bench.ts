// Micro-benchmark of XOR chunk encode/decode (120-sample chunks, realistic
// scrape data), plus what BigInt would cost for the 64-bit value XOR we do in
// uint32 halves. Prints figures; asserts nothing.
// Run: cd /work/main && node --import tsx libs/tsdb/bench/xor.bench.ts

import { XorChunkEncoder, decodeXorChunkInto, HI_WORD, LO_WORD } from '../src/chunkenc/xor-chunk.ts';
import { crc32c } from '../src/encoding/crc32c.ts';

const CHUNK = 120;
const CHUNKS = 2000;
const N = CHUNK * CHUNKS;

function data(kind: 'counter' | 'gauge' | 'random'): { ts: Float64Array; vs: Float64Array } {
  const ts = new Float64Array(N);
  const vs = new Float64Array(N);
  let t = 1732950000000;
  let v = 0;
  let seed = 12345;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
  for (let i = 0; i < N; i++) {
    t += 15000 + (rnd() < 0.2 ? Math.floor(rnd() * 40) - 20 : 0);
    ts[i] = t;
    if (kind === 'counter') v += Math.floor(rnd() * 100);
    else if (kind === 'gauge') v = Math.round(rnd() * 1000) / 10;
    else v = rnd() * 1e6;
    vs[i] = v;
  }
  return { ts, vs };
}

function best(fn: () => void): number {
  const until = performance.now() + 300;
  while (performance.now() < until) fn();
  let b = Infinity;
  for (let r = 0; r < 7; r++) {
    const s = performance.now();
    fn();
    b = Math.min(b, performance.now() - s);
  }
  return b;
}

// This machine's speed, for comparing figures across machines: a trivial typed-array loop.
{
  const a = new Int32Array(1024);
  let s = 0;
  const ms = best(() => {
    for (let i = 0; i < N; i++) s = (s + (a[i & 1023] ^ i)) | 0;
  });
  console.log(`baseline trivial loop ${((ms * 1e6) / N).toFixed(2)} ns/iter${s === 1 ? '' : ''}`);
}

for (const kind of ['counter', 'gauge', 'random'] as const) {
  const { ts, vs } = data(kind);
  const chunks: Uint8Array[] = [];
  // One encoder reused per chunk (as the block writer does), bytes copied out.
  const e = new XorChunkEncoder();
  const encodeMs = best(() => {
    chunks.length = 0;
    for (let c = 0; c < CHUNKS; c++) {
      e.reset();
      e.appendRange(ts, vs, c * CHUNK, (c + 1) * CHUNK);
      chunks.push(e.bytes().slice());
    }
  });
  const outT = new Float64Array(CHUNK);
  const outV = new Float64Array(CHUNK);
  const decodeMs = best(() => {
    for (const ch of chunks) decodeXorChunkInto(ch, outT, outV, 0);
  });
  const crcMs = best(() => {
    for (const ch of chunks) crc32c(ch);
  });
  const bytes = chunks.reduce((a, c) => a + c.length, 0);
  console.log(
    `${kind.padEnd(8)} encode ${((encodeMs * 1e6) / N).toFixed(1).padStart(5)} ns/sample  ` +
      `decode ${((decodeMs * 1e6) / N).toFixed(1).padStart(5)} ns/sample  ` +
      `crc32c ${((crcMs * 1e6) / N).toFixed(1).padStart(4)} ns/sample  ${(bytes / N).toFixed(2)} bytes/sample`,
  );
}

// The value XOR + leading/trailing zero count, once in uint32 halves (what the
// encoder does) and once with BigInt.
{
  const { vs } = data('random');
  const w = new Uint32Array(vs.buffer);
  const b = new BigUint64Array(vs.buffer);
  let sink = 0;
  const halvesMs = best(() => {
    for (let i = 1; i < N; i++) {
      const xh = w[2 * i + HI_WORD] ^ w[2 * i - 2 + HI_WORD];
      const xl = w[2 * i + LO_WORD] ^ w[2 * i - 2 + LO_WORD];
      sink += xh !== 0 ? Math.clz32(xh) : 32 + Math.clz32(xl);
    }
  });
  const bigintMs = best(() => {
    for (let i = 1; i < N; i++) {
      const x = b[i] ^ b[i - 1];
      const hi = Number(x >> 32n);
      sink += hi !== 0 ? Math.clz32(hi) : 32 + Math.clz32(Number(x & 0xffffffffn));
    }
  });
  console.log(
    `value xor+clz: uint32 halves ${((halvesMs * 1e6) / N).toFixed(1)} ns/sample, BigInt ${((bigintMs * 1e6) / N).toFixed(1)} ns/sample (${sink > 0 ? 'ok' : ''})`,
  );
}
