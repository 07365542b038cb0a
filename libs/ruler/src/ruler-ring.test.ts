// Two rulers on one KV: each group evaluated by exactly one of them; when one
// stops heartbeating, the other takes its groups over within the heartbeat timeout.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { FilesystemBucket } from '@strata/objstore';
import { Engine } from '@strata/promql';
import { MemoryQuerier } from '@strata/model/testing';
import { MemoryKv } from '@strata/ring';
import { createLogger } from '@strata/service';
import { parseRuleGroups } from './rule-format.ts';
import { RuleStore } from './rule-store.ts';
import { Ruler } from './ruler.ts';
import { RulerRing } from './ruler-ring.ts';

const dir = mkdtempSync(join(tmpdir(), 'ruler-ring-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const logger = createLogger('test', 'silent');

test('groups are split across healthy rulers and taken over from a dead one', async () => {
  const store = new RuleStore(new FilesystemBucket(dir));
  for (let i = 0; i < 40; i++)
    await store.put(`t${i % 3}`, 'ns', parseRuleGroups(`name: g${i}\ninterval: 1h\nrules:\n  - record: r\n    expr: vector(1)\n`)[0]);
  const kv = new MemoryKv();
  const engine = new Engine({ querier: new MemoryQuerier() });
  const make = (id: string) => {
    let ruler: Ruler | undefined;
    const ring = new RulerRing({ kv, instanceId: id, heartbeatPeriodMs: 50, heartbeatTimeoutMs: 300, logger, onChange: () => void ruler?.sync() });
    ruler = new Ruler({
      store,
      querier: { query: (p) => engine.instantQuery({ tenant: p.tenant, query: p.expr, time: p.time }) },
      pusher: { push: async () => undefined },
      logger,
      registry: new Registry(),
      evaluationIntervalMs: 60_000,
      pollIntervalMs: 3_600_000,
      resendDelayMs: 60_000,
      forOutageToleranceMs: 3_600_000,
      forGracePeriodMs: 600_000,
      externalURL: '',
      owns: (t, ns, g) => ring.owns(t, ns, g),
    });
    return { ring, ruler };
  };
  const a = make('ruler-a');
  const b = make('ruler-b');
  await kv.start();
  await a.ring.start();
  await b.ring.start();
  // a started before b registered: it re-syncs when the ring changes; wait for both to agree.
  const owned = (r: Ruler) => ['t0', 't1', 't2'].flatMap((t) => r.groups(t).map((g) => `${t}/${g.group.name}`));
  await a.ruler.start();
  await b.ruler.start();
  await a.ruler.sync();
  const ga = owned(a.ruler);
  const gb = owned(b.ruler);
  assert.equal(ga.length + gb.length, 40, 'every group has one owner');
  assert.deepEqual(
    ga.filter((g) => gb.includes(g)),
    [],
    'no group has two',
  );
  assert.ok(ga.length > 5 && gb.length > 5, `both rulers own groups (${ga.length}/${gb.length})`);

  // b dies without leaving the ring: a owns everything once b's heartbeat is older than the timeout.
  const died = Date.now();
  b.ring.halt();
  await b.ruler.stop();
  while (owned(a.ruler).length < 40) {
    assert.ok(Date.now() - died < 2_000, 'takeover within the heartbeat timeout (+ one period)');
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(Date.now() - died >= 250, 'not before the heartbeat timeout');
  await a.ring.stop();
  await a.ruler.stop();
  await kv.stop();
});
