import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compressSync, uncompressSync } from 'snappy';
import { compress, maxCompressedLength, uncompress, uncompressedLength } from './index.ts';
import { uncompressScalar } from './snappy.ts';

// Each decoding test runs on both decoders: the WebAssembly one (bodies up to 16 MiB) and the JavaScript loop.
const DECODERS = { wasm: uncompress, javascript: uncompressScalar };

/** Decodes with this lib; throws with its reason. */
function decode(src: Uint8Array, decoder = uncompress): Buffer {
  const h = uncompressedLength(src);
  assert.ok(h !== undefined, 'a length header');
  const out = Buffer.alloc(h.length);
  const failure = decoder(src, h.start, out, h.length);
  if (failure !== undefined) throw new Error(failure);
  return out;
}

/** Inputs of every shape: empty, tiny, runs, repeats, random bytes, label-like text, across the 64 KiB block size. */
function inputs(): Buffer[] {
  let seed = 7;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const out = [Buffer.alloc(0), Buffer.alloc(1, 9), Buffer.alloc(100_000, 0x61), Buffer.from('abcabcabcabd'.repeat(5000))];
  for (const size of [1, 15, 16, 17, 18, 60, 61, 255, 256, 257, 2047, 2048, 2049, 65_535, 65_536, 65_537, 300_000]) {
    const b = Buffer.alloc(size);
    for (let i = 0; i < size; i++) b[i] = i % 2000 < 1000 ? Math.floor(rnd() * 256) : 97 + (Math.floor(i / 7) % 13);
    out.push(b);
  }
  // Remote-write-like: the same label names and values over and over, short runs between.
  const labels = Array.from(
    { length: 3000 },
    (_, i) => `\n\x08__name__\x12node_cpu_seconds_total{cpu="${i % 8}",mode="idle",instance="host-${i % 97}:9100",job="node"}`,
  ).join('');
  out.push(Buffer.from(labels));
  return out;
}

for (const [name, decoder] of Object.entries(DECODERS)) {
  test(`what this codec writes the reference (native) snappy reads, and the other way round, byte for byte (${name} decoder)`, () => {
    for (const input of inputs()) {
      const ours = compress(input);
      assert.ok(ours.length <= maxCompressedLength(input.length), `${input.length} bytes: within the bound`);
      assert.ok(Buffer.from(uncompressSync(ours, { asBuffer: true }) as Buffer).equals(input), `${input.length} bytes: native reads ours`);
      assert.ok(decode(ours, decoder).equals(input), `${input.length} bytes: we read ours`);
      assert.ok(decode(compressSync(input), decoder).equals(input), `${input.length} bytes: we read native`);
    }
  });
}

test('bodies above 16 MiB take the JavaScript loop and decode the same', () => {
  const big = Buffer.alloc(17 << 20);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7) % 251;
  assert.ok(decode(compressSync(big)).equals(big));
});

test('it compresses about as well as the reference on repetitive data', () => {
  for (const input of inputs().filter((b) => b.length > 10_000)) {
    const ours = compress(input).length;
    const native = compressSync(input).length;
    assert.ok(ours <= native * 1.1, `${input.length} bytes: ${ours} against ${native}`);
  }
});

for (const [name, decoder] of Object.entries(DECODERS)) {
  test(`copies with 1-, 2- and 4-byte offsets decode, overlapping ones as runs (${name} decoder)`, () => {
    const abcd = [0x0c, 0x61, 0x62, 0x63, 0x64];
    assert.equal(decode(new Uint8Array([0x08, ...abcd, 0x0e, 0x04, 0x00]), decoder).toString(), 'abcdabcd');
    assert.equal(decode(new Uint8Array([0x08, ...abcd, 0x0f, 0x04, 0x00, 0x00, 0x00]), decoder).toString(), 'abcdabcd');
    // Offset 1, length 6: the last byte repeated.
    assert.equal(decode(new Uint8Array([0x0a, ...abcd, (5 << 2) | 2, 0x01, 0x00]), decoder).toString(), 'abcddddddd');
    // 1-byte offset 4, length 11 (a run of the four bytes), then a 61-byte literal with its length in one extra byte.
    const literal = Array.from({ length: 61 }, (_, i) => 0x41 + (i % 26));
    const out = decode(new Uint8Array([0x4c, ...abcd, 0x01 | (7 << 2), 0x04, 60 << 2, 60, ...literal]), decoder);
    assert.equal(out.toString(), 'abcd' + 'abcdabcdabc' + Buffer.from(literal).toString());
  });
}

for (const [name, decoder] of Object.entries(DECODERS))
  test(`a corrupt element is refused with what was wrong (${name} decoder)`, () => {
    const reason = (bytes: number[]) => {
      const src = new Uint8Array(bytes);
      const h = uncompressedLength(src)!;
      return decoder(src, h.start, new Uint8Array(h.length), h.length);
    };
    assert.match(reason([0x0a, 0x01 | (2 << 2), 0x05]) ?? '', /copy offset out of range/);
    assert.match(reason([0x0a, 0x00, 0x61, 0x01, 0x00]) ?? '', /copy offset out of range/);
    assert.match(reason([0x0a, 9 << 2, 0x61]) ?? '', /literal past the end/);
    assert.match(reason([0x02, 2 << 2, 0x61, 0x62, 0x63]) ?? '', /longer than its declared length/);
    assert.match(reason([0x0a, 0x00, 0x61]) ?? '', /1 bytes decoded, 10 declared/);
    assert.match(reason([0x0a, 0x00, 0x61, 0x02, 0x01]) ?? '', /truncated copy/);
    assert.match(reason([0x0a, 61 << 2, 0x01]) ?? '', /truncated literal length/);
    // A literal claiming 2^32 bytes (4 length bytes of 0xff), and copies reaching back past the start.
    assert.match(reason([0x0a, 63 << 2, 0xff, 0xff, 0xff, 0xff, 0x61]) ?? '', /literal past the end|longer than its declared length/);
    assert.match(reason([0x0a, 0x00, 0x61, 0x03, 0xff, 0xff, 0xff, 0xff]) ?? '', /copy offset out of range/);
    assert.equal(uncompressedLength(new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x80, 0x01])), undefined);
    assert.equal(uncompressedLength(new Uint8Array(0)), undefined);
  });
