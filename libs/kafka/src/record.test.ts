// The record contract: tenant as key, `v` header always set by the writer, headers decoded to strings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compressSync } from 'snappy';
import { RECORD_FORMAT_SYMBOLIZED, RECORD_FORMAT_WRITE_REQUEST, fromMessage, toProduceMessage } from './record.ts';

const text = (headers: Map<Buffer, Buffer>) => Object.fromEntries([...headers].map(([n, v]) => [n.toString(), v.toString()]));

test('toProduceMessage keys by tenant and sets the format version over any caller header', () => {
  const m = toProduceMessage('ingest', 'tenant-1', { partition: 2, value: Buffer.from('x'), headers: { traceparent: 't', v: '7' } });
  assert.deepEqual(
    { ...m, key: m.key.toString(), headers: text(m.headers) },
    {
      topic: 'ingest',
      partition: 2,
      key: 'tenant-1',
      value: compressSync(Buffer.from('x')),
      headers: { traceparent: 't', v: RECORD_FORMAT_WRITE_REQUEST },
    },
  );
});

test('a symbolized record is version 3, and read back as symbolized', () => {
  const m = toProduceMessage('ingest', 't', { partition: 0, value: Buffer.from('symbols and refs'), format: 'symbolized' });
  assert.equal(text(m.headers).v, RECORD_FORMAT_SYMBOLIZED);
  const r = fromMessage({ key: m.key, value: m.value, offset: 0n, timestamp: 0n, headers: [...m.headers] });
  assert.equal(r.format, 'symbolized');
  assert.equal(r.value.toString(), 'symbols and refs');
  const old = fromMessage({ key: m.key, value: Buffer.from('raw'), offset: 0n, timestamp: 0n, headers: [[Buffer.from('v'), Buffer.from('1')]] });
  assert.equal(old.format, 'write-request', 'versions 1 and 2 are WriteRequests');
});

test('a version-2 value is decompressed; version 1 and unknown versions pass as they are', () => {
  const m = toProduceMessage('ingest', 't', { partition: 0, value: Buffer.from('series bytes') });
  const read = (value: Buffer, v: string) =>
    fromMessage({ key: Buffer.from('t'), value, offset: 0n, timestamp: 0n, headers: [[Buffer.from('v'), Buffer.from(v)]] }).value.toString();
  assert.equal(read(m.value, RECORD_FORMAT_WRITE_REQUEST), 'series bytes');
  assert.equal(read(Buffer.from('raw'), '1'), 'raw');
  assert.equal(read(Buffer.from([0xff, 0xff, 0xff]), RECORD_FORMAT_WRITE_REQUEST), '\ufffd\ufffd\ufffd', 'corrupt: handed on for the decoder to reject');
});

test('for a batch compressed whole, values go as they are: version 1 and 4, read back in their format', () => {
  for (const format of ['write-request', 'symbolized'] as const) {
    const m = toProduceMessage('ingest', 't', { partition: 0, value: Buffer.from('series bytes'), format }, false);
    assert.equal(m.value.toString(), 'series bytes', 'not snappy-compressed');
    assert.equal(text(m.headers).v, format === 'symbolized' ? '4' : '1');
    const r = fromMessage({ key: m.key, value: m.value, offset: 0n, timestamp: 0n, headers: [...m.headers] });
    assert.deepEqual([r.format, r.value.toString()], [format, 'series bytes']);
  }
});

test('fromMessage decodes key, offset, timestamp and headers (last value wins)', () => {
  const r = fromMessage({
    key: Buffer.from('tenant-ü'),
    value: Buffer.from([1, 2, 3]),
    offset: 9007199254740993n,
    timestamp: 1732950000000n,
    headers: [
      [Buffer.from('v'), Buffer.from('1')],
      [Buffer.from('multi'), Buffer.from('a')],
      [Buffer.from('multi'), Buffer.from('b')],
      [null, Buffer.from('nameless')],
    ],
  });
  assert.equal(r.tenant, 'tenant-ü');
  assert.deepEqual([...r.value], [1, 2, 3]);
  assert.equal(r.offset, 9007199254740993n);
  assert.equal(r.timestamp, 1732950000000);
  assert.deepEqual(r.headers, { v: '1', multi: 'b' });
});
