import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConsumedOffset } from './consumed-offset.ts';

test('waiters resolve once the offset is consumed, or time out with a clear error', async () => {
  const c = new ConsumedOffset();
  assert.equal(await c.wait(-1n, 10, () => 'x'), -1n);
  const pending = c.wait(5n, 1000, () => 'x');
  c.advance(4n);
  c.advance(6n);
  assert.equal(await pending, 6n);
  await assert.rejects(
    c.wait(7n, 20, () => 'ingester-zone-a-0'),
    /ingester-zone-a-0: offset 7 not consumed within 20ms \(consumed up to 6\)/,
  );
});
