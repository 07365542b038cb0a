import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { ServiceManager, type Service } from './lifecycle.ts';

test("snapshot: each service's state in start order; a failed start fails it, stops the started ones, leaves the rest new", async () => {
  let releaseB!: () => void;
  const bStarted = new Promise<void>((r) => (releaseB = r));
  let manager!: ServiceManager;
  let duringB: ReturnType<ServiceManager['snapshot']> = [];
  const services: Service[] = [
    { name: 'a', start: async () => undefined, stop: async () => undefined },
    {
      name: 'b',
      start: async () => {
        duringB = manager.snapshot();
        releaseB();
        throw new Error('no disk');
      },
      stop: async () => undefined,
    },
    { name: 'c', start: async () => undefined, stop: async () => undefined },
  ];
  const before = { SIGTERM: process.listeners('SIGTERM'), SIGINT: process.listeners('SIGINT') };
  manager = new ServiceManager(services, pino({ level: 'silent' }));
  assert.deepEqual(
    manager.snapshot().map((s) => s.state),
    ['new', 'new', 'new'],
  );
  const code = await manager.run();
  await bStarted;
  assert.equal(code, 1);
  assert.deepEqual(
    duringB.map((s) => [s.name, s.state]),
    [
      ['a', 'running'],
      ['b', 'starting'],
      ['c', 'new'],
    ],
  );
  const after = manager.snapshot();
  assert.deepEqual(
    after.map((s) => [s.name, s.state]),
    [
      ['a', 'terminated'],
      ['b', 'failed'],
      ['c', 'new'],
    ],
  );
  assert.equal(after[1].failure, 'no disk');
  for (const sig of ['SIGTERM', 'SIGINT'] as const) for (const l of process.listeners(sig)) if (!before[sig].includes(l)) process.off(sig, l);
});
