import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BitReader, BitWriter } from './bit-stream.ts';

test('bit fields of every width round-trip at every alignment', () => {
  let seed = 7;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  const fields: [number, number][] = [];
  const w = new BitWriter(4, 2);
  for (let i = 0; i < 5000; i++) {
    const n = 1 + (rnd() % 32);
    const v = n === 32 ? rnd() | 0 : rnd() & ((1 << n) - 1);
    fields.push([v, n]);
    w.writeBits(v | (n < 32 ? 1 << n : 0), n); // bits above n must be ignored
  }
  const bytes = w.bytes();
  assert.equal(bytes.length, Math.ceil(w.bitLength / 8));
  const r = new BitReader(bytes, 2);
  for (const [v, n] of fields) assert.equal(r.readBits(n), n === 32 ? v | 0 : v);
  assert.ok(r.remainingBits < 8);
  assert.throws(() => r.readBits(9), /end of data/);
});

test('single bits and bytes', () => {
  const w = new BitWriter();
  for (const b of [1, 0, 1, 1]) w.writeBit(b);
  w.writeByte(0xa5);
  assert.deepEqual(Array.from(w.bytes()), [0xba, 0x50]);
  const r = new BitReader(w.bytes());
  assert.deepEqual([r.readBit(), r.readBit(), r.readBit(), r.readBit(), r.readByte()], [1, 0, 1, 1, 0xa5]);
});
