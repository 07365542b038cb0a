import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OffsetTracker } from './offset-tracker.ts';

test('commits up to the first record with a sample not yet persisted, per tenant', () => {
  const t = new OffsetTracker();
  assert.equal(
    t.committable(() => Infinity),
    null,
  );
  t.add(10n, 'a', 100);
  t.add(11n, 'b', 50);
  t.add(12n, 'a', 250);
  t.add(13n, 'a', -Infinity); // a record without samples
  const bounds: Record<string, number> = { a: 200, b: -Infinity };
  assert.equal(
    t.committable((x) => bounds[x]),
    11n,
    'tenant b holds the commit back',
  );
  bounds.b = 51;
  assert.equal(
    t.committable((x) => bounds[x]),
    12n,
  );
  bounds.a = 251;
  assert.equal(
    t.committable((x) => bounds[x]),
    14n,
    'all persisted: one past the last record',
  );
  for (let i = 0; i < 5000; i++) t.add(BigInt(100 + i), i % 2 ? 'a' : 'c', i);
  assert.equal(
    t.committable((x) => (x === 'a' ? Infinity : 2500)),
    2600n,
  );
});

test('consecutive records of one tenant within the group span share an entry: few entries, commits stay conservative', () => {
  const t = new OffsetTracker(2550);
  for (let i = 0; i < 1000; i++) t.add(BigInt(i), 'a', i * 10);
  assert.equal(t.pending, 4);
  assert.equal(
    t.committable(() => 2560),
    256n,
    'the first entry (offsets 0..255, newest sample 2550) is persisted',
  );
  assert.equal(
    t.committable(() => 2561),
    256n,
    'the second entry holds a sample at 5110',
  );
  assert.equal(
    t.committable(() => 10_000),
    1000n,
  );
});
