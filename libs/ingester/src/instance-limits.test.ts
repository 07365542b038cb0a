import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InstanceLimitGate } from './instance-limits.ts';

test('over max-series or the heap share the gate says why, once per change, and clears when back under', () => {
  let series = 0;
  let used = 100;
  const changes: (string | undefined)[] = [];
  const gate = new InstanceLimitGate({
    limits: { maxSeries: 1000, maxHeapShare: 0.85 },
    numSeries: () => series,
    onChange: (r) => changes.push(r),
    heap: () => ({ used_heap_size: used * 2 ** 20, heap_size_limit: 1000 * 2 ** 20 }),
  });
  gate.check();
  assert.deepEqual(changes, []);
  series = 1000;
  gate.check();
  gate.check();
  assert.equal(changes.length, 1);
  assert.match(changes[0]!, /1000 series in memory, at the limit of 1000 .*-ingester\.instance-limits\.max-series/);
  assert.equal(gate.reason, changes[0]);
  series = 10;
  used = 900;
  gate.check();
  assert.match(changes[1]!, /V8 heap 900 MiB in use of its 1000 MiB limit, over 85%/);
  used = 200;
  gate.check();
  assert.deepEqual(changes.slice(2), [undefined]);
  assert.equal(gate.reason, undefined);
});

test('limits of 0 are off', () => {
  const gate = new InstanceLimitGate({
    limits: { maxSeries: 0, maxHeapShare: 0 },
    numSeries: () => 1e9,
    onChange: () => assert.fail('no limit'),
    heap: () => ({ used_heap_size: 1, heap_size_limit: 1 }),
  });
  gate.check();
  assert.equal(gate.reason, undefined);
});
