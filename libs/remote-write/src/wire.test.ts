import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProtoReader, ProtoWriter, putUvarint, uvarintSize } from './wire.ts';
import { RemoteWriteError } from './errors.ts';

const INT64_CASES = [
  0,
  1,
  127,
  128,
  300,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32 - 1,
  2 ** 32,
  2 ** 35 + 7,
  2 ** 42 - 1,
  2 ** 48,
  2 ** 49 - 1,
  2 ** 49,
  2 ** 49 + 1,
  1732950000000,
  2 ** 52 + 3,
  Number.MAX_SAFE_INTEGER,
  -1,
  -2,
  -127,
  -128,
  -(2 ** 31),
  -(2 ** 31) - 1,
  -(2 ** 32),
  -(2 ** 32) - 1,
  -1732950000000,
  -(2 ** 49),
  Number.MIN_SAFE_INTEGER,
];

test('int64 varints round-trip exactly for every |v| < 2^53, negatives as 10 bytes', () => {
  for (const v of INT64_CASES) {
    const w = new ProtoWriter(4);
    w.int64(v);
    const bytes = w.finish();
    if (v < 0) assert.equal(bytes.length, 10, `negative ${v} must be sign-extended to 10 bytes`);
    const r = new ProtoReader(bytes);
    assert.equal(r.int64(bytes.length, 2, 'Test'), v, `value ${v}`);
    assert.equal(r.pos, bytes.length);
  }
});

test('int64 writer refuses what it cannot encode exactly', () => {
  const w = new ProtoWriter();
  assert.throws(() => w.int64(1.5), RangeError);
  assert.throws(() => w.int64(2 ** 53), RangeError);
  assert.throws(() => w.int64(NaN), RangeError);
});

test('uvarint reads what putUvarint writes and sizes agree', () => {
  for (const v of [0, 1, 127, 128, 16383, 16384, 2 ** 21, 2 ** 28, 2 ** 32 + 5, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
    const buf = new Uint8Array(10);
    const n = putUvarint(buf, 0, v);
    assert.equal(n, uvarintSize(v));
    const r = new ProtoReader(buf.subarray(0, n));
    assert.equal(r.uvarint(n, 1, 'Test'), v);
  }
});

test('varints that run past their message or past 10 bytes are rejected', () => {
  const truncated = new Uint8Array([0x80, 0x80]);
  assert.throws(() => new ProtoReader(truncated).uvarint(2, 1, 'Test'), /truncated varint in field 1 of Test/);
  assert.throws(() => new ProtoReader(truncated).int64(2, 1, 'Test'), /truncated varint/);
  const eleven = new Uint8Array(11).fill(0xff);
  eleven[10] = 0x01;
  assert.throws(() => new ProtoReader(eleven).uvarint(11, 1, 'Test'), /varint overflows 64 bits/);
  assert.throws(() => new ProtoReader(eleven).int64(11, 1, 'Test'), /varint overflows 64 bits/);
  // A bounded read stops at the enclosing message even when the buffer goes on.
  const r = new ProtoReader(new Uint8Array([0x96, 0x01]));
  assert.throws(
    () => r.uvarint(1, 3, 'Inner'),
    (e: unknown) => e instanceof RemoteWriteError && e.code === 'err-strata-bad-protobuf',
  );
});

test('nested messages longer than 127 and 16383 bytes get their length moved into place', () => {
  for (const size of [0, 1, 127, 128, 16383, 16384, 100_000]) {
    const w = new ProtoWriter(16);
    const start = w.begin(1);
    w.raw(new Uint8Array(size).fill(7));
    w.end(start);
    w.tag(2, 0);
    w.uvarint(42);
    const out = w.finish();
    const r = new ProtoReader(out);
    assert.equal(r.tag(out.length, 'Test'), 0x0a);
    const e = r.len(out.length, 1, 'Test');
    assert.equal(e - r.pos, size);
    assert.ok(out.subarray(r.pos, e).every((b) => b === 7));
    r.pos = e;
    assert.equal(r.tag(out.length, 'Test'), 0x10);
    assert.equal(r.uvarint(out.length, 2, 'Test'), 42);
  }
});

test('strings: short, long, multi-byte and invalid UTF-8', () => {
  const w = new ProtoWriter(4);
  const long = 'x'.repeat(300) + 'é';
  w.string(1, 'héllo ✓ 🚀');
  w.string(2, long);
  w.string(3, '');
  const out = w.finish();
  const r = new ProtoReader(out);
  const read = () => {
    r.tag(out.length, 'Test');
    const e = r.len(out.length, 1, 'Test');
    const s = r.string(r.pos, e);
    r.pos = e;
    return s;
  };
  assert.equal(read(), 'héllo ✓ 🚀');
  assert.equal(read(), long);
  assert.equal(read(), '');
  assert.equal(r.invalidUtf8, false);

  const bad = new ProtoReader(new Uint8Array([0x61, 0xff, 0x62]));
  assert.equal(bad.string(0, 3), 'a\ufffdb');
  assert.equal(bad.invalidUtf8, true);
  // A real U+FFFD in the input is valid UTF-8.
  const real = Buffer.from('a\ufffdb');
  const ok = new ProtoReader(real);
  assert.equal(ok.string(0, real.length), 'a\ufffdb');
  assert.equal(ok.invalidUtf8, false);
});

test('the intern table never hands back another string of the same length', () => {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const alphabet = 'ab_:0Z';
  for (let round = 0; round < 2; round++) {
    seed = 7; // the second round sees the same strings again, now interned
    for (let i = 0; i < 50_000; i++) {
      const len = 1 + Math.floor(rand() * 6);
      let s = '';
      for (let k = 0; k < len; k++) s += alphabet[Math.floor(rand() * alphabet.length)];
      const bytes = Buffer.from('xx' + s + 'yy');
      assert.equal(new ProtoReader(bytes).string(2, 2 + len), s);
    }
  }
});
