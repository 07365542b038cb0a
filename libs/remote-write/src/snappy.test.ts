import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BodyBuffers, compressBody, decompressBody, RemoteWriteError } from './index.ts';

function isError(reason: string, kind: string, re: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof RemoteWriteError, String(err));
    assert.equal(err.code, `err-strata-${reason}`);
    assert.equal(err.kind, kind);
    assert.equal(err.retriable, false);
    assert.ok(!err.message.includes('\n'), 'one line');
    assert.match(err.message, re);
    return true;
  };
}

test('block format round trip, and the limit is inclusive', () => {
  const body = Buffer.from('remote write '.repeat(1000));
  const compressed = compressBody(body);
  assert.ok(compressed.length < body.length);
  assert.deepEqual(decompressBody(compressed, body.length), body);
  assert.deepEqual(decompressBody(compressBody(new Uint8Array(0)), 0), Buffer.alloc(0));
  // A plain Uint8Array body (not a Buffer) works too.
  const plain = new Uint8Array(compressed);
  assert.deepEqual(decompressBody(plain, body.length), body);
});

test('a declared length above maxBytes is 413 before anything is decompressed', () => {
  const body = compressBody(Buffer.alloc(1000, 1));
  assert.throws(() => decompressBody(body, 999), isError('too-large', 'too-large', /decompressed body would be 1000 bytes, above the limit of 999 bytes/));
  // A 4 GiB claim on a 6-byte body: refused by the header alone.
  const bomb = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]);
  assert.throws(() => decompressBody(bomb, 100 << 20), isError('too-large', 'too-large', /4294967295 bytes/));
});

test('corrupt input is bad-snappy 400 with a one-line reason', () => {
  assert.throws(() => decompressBody(new Uint8Array(0), 1000), isError('bad-snappy', 'bad-input', /^snappy: corrupt input \(empty body\)$/));
  assert.throws(
    () => decompressBody(new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]), 1000),
    isError('bad-snappy', 'bad-input', /^snappy: corrupt input \(bad length header\)$/),
  );
  assert.throws(() => decompressBody(new Uint8Array([0x05, 0x00, 0x61]), 1000), isError('bad-snappy', 'bad-input', /^snappy: corrupt input/));
  const good = compressBody(Buffer.from('hello hello hello hello'));
  assert.throws(() => decompressBody(good.subarray(0, good.length - 2), 1000), isError('bad-snappy', 'bad-input', /^snappy: /));
  // Framed snappy (the streaming format) is not what remote write sends.
  const framed = Buffer.from([0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59]);
  assert.throws(
    () => decompressBody(framed, 1 << 20),
    (err: unknown) => err instanceof RemoteWriteError && !err.retriable,
  );
});

test('a borrowed buffer given back is lent again, and a body never sees a previous body past its own length', () => {
  const buffers = new BodyBuffers();
  const long = decompressBody(compressBody(Buffer.alloc(5000, 1)), 5000, buffers);
  buffers.give(long);
  const short = decompressBody(compressBody(Buffer.from('short')), 100, buffers);
  assert.equal(short.buffer, long.buffer);
  assert.equal(short.toString(), 'short');
});
