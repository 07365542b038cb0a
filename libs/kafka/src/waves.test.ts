import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waves } from './ingest-writer.ts';

test('records split for size go out in separate sends: a partition appears at most once per send, in order', () => {
  const r = (partition: number, v: string) => ({ partition, value: Buffer.from(v) });
  const out = waves([r(0, 'a'), r(1, 'b'), r(0, 'c'), r(0, 'd'), r(2, 'e'), r(1, 'f')]);
  assert.deepEqual(
    out.map((w) => w.map((x) => `${x.partition}:${x.value}`)),
    [['0:a', '1:b', '2:e'], ['0:c', '1:f'], ['0:d']],
  );
  assert.equal(waves([r(0, 'a'), r(1, 'b')]).length, 1, 'the common case is one send');
});
