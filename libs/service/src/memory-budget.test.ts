import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cgroupMemoryLimit, heapSizeMiB, memoryBudget, operatorHeapMiB, parseByteSize } from './memory-budget.ts';

const GiB = 2 ** 30;

test('byte sizes: plain bytes, Kubernetes and Mimir units; anything else is refused naming the value', () => {
  assert.equal(parseByteSize('536870912'), 512 * 2 ** 20);
  assert.equal(parseByteSize('512Mi'), 512 * 2 ** 20);
  assert.equal(parseByteSize('512MiB'), 512 * 2 ** 20);
  assert.equal(parseByteSize('4GiB'), 4 * GiB);
  assert.equal(parseByteSize('2G'), 2e9);
  assert.throws(() => parseByteSize('lots'), /invalid byte size "lots"/);
  assert.throws(() => parseByteSize('5 parsecs'), /invalid byte size/);
});

test("the cgroup limit is the smallest of the process' cgroup and its ancestors, v1 or v2; 'max' and v1's huge value mean none", () => {
  const files = (map: Record<string, string>) => (p: string) => {
    if (!(p in map)) throw new Error('ENOENT');
    return map[p];
  };
  const v2 = files({
    '/proc/self/cgroup': '0::/kubepods/pod1/c1\n',
    '/sys/fs/cgroup/kubepods/pod1/c1/memory.max': 'max\n',
    '/sys/fs/cgroup/kubepods/pod1/memory.max': `${2 * GiB}\n`,
    '/sys/fs/cgroup/kubepods/memory.max': `${8 * GiB}\n`,
  });
  assert.equal(cgroupMemoryLimit(v2), 2 * GiB);
  const v1 = files({
    '/proc/self/cgroup': '9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n',
    '/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes': `${GiB}\n`,
    '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n',
  });
  assert.equal(cgroupMemoryLimit(v1), GiB);
  assert.equal(cgroupMemoryLimit(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/memory.max': 'max\n' })), undefined);
  assert.equal(cgroupMemoryLimit(files({})), undefined, 'no /proc: no limit known');
});

test('the budget: the flag, else a cgroup limit below the machine, else 75% of the machine; the heap is 75% of it', () => {
  assert.deepEqual(memoryBudget(GiB, { cgroupLimit: 2 * GiB, machineBytes: 24 * GiB }), { bytes: GiB, source: 'flag' });
  assert.deepEqual(memoryBudget(0, { cgroupLimit: 2 * GiB, machineBytes: 24 * GiB }), { bytes: 2 * GiB, source: 'cgroup' });
  assert.deepEqual(memoryBudget(0, { cgroupLimit: 64 * GiB, machineBytes: 24 * GiB }), { bytes: 18 * GiB, source: 'machine' });
  assert.deepEqual(memoryBudget(0, { machineBytes: 24 * GiB }), { bytes: 18 * GiB, source: 'machine' });
  assert.equal(heapSizeMiB({ bytes: 512 * 2 ** 20, source: 'flag' }), 384);
});

test("an operator's --max-old-space-size, on the command line or in NODE_OPTIONS, is found (the command line wins)", () => {
  assert.equal(operatorHeapMiB([], undefined), undefined);
  assert.equal(operatorHeapMiB([], '--max-old-space-size=6144 --trace-gc'), 6144);
  assert.equal(operatorHeapMiB(['--max_old_space_size=1024'], '--max-old-space-size=6144'), 1024);
  assert.equal(operatorHeapMiB(['--import', 'tsx'], ''), undefined);
});
