import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestQueue, shuffleShard } from './request-queue.ts';

async function drain(q: RequestQueue<string>, querier: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push((await q.next(querier)).item);
  return out;
}

test("tenants are served round-robin: a tenant's backlog delays another's next query by one slot at most", async () => {
  const q = new RequestQueue<string>({ maxOutstandingPerTenant: 1000 });
  q.registerQuerier('q1');
  for (let i = 0; i < 100; i++) q.enqueue('noisy', `noisy-${i}`);
  q.enqueue('quiet', 'quiet-0');
  q.enqueue('quiet', 'quiet-1');
  assert.deepEqual(await drain(q, 'q1', 5), ['noisy-0', 'quiet-0', 'noisy-1', 'quiet-1', 'noisy-2']);
  // A tenant arriving later joins the rotation after the current tenants.
  q.enqueue('late', 'late-0');
  assert.deepEqual(await drain(q, 'q1', 3), ['noisy-3', 'late-0', 'noisy-4']);
});

test('over the outstanding limit: 429 naming the limit and the flag; the tenant may queue again once one is taken', async () => {
  const q = new RequestQueue<string>({ maxOutstandingPerTenant: 2 });
  q.enqueue('a', '1');
  q.enqueue('a', '2');
  assert.throws(() => q.enqueue('a', '3'), {
    code: 'err-strata-too-many-outstanding-requests',
    kind: 'limit',
    message: /tenant a \(limit: 2\).*-query-scheduler.max-outstanding-requests-per-tenant/,
  });
  q.enqueue('b', '1'); // other tenants are not affected
  q.registerQuerier('q1');
  assert.equal((await q.next('q1')).item, '1');
  q.enqueue('a', '3');
  assert.deepEqual(
    q.lengths(),
    new Map([
      ['a', 2],
      ['b', 1],
    ]),
  );
});

test('a waiting querier gets the next enqueued item; an aborted wait leaves no waiter behind', async () => {
  let now = 1000;
  const q = new RequestQueue<string>({ maxOutstandingPerTenant: 10, now: () => now });
  q.registerQuerier('q1');
  const abort = new AbortController();
  const gone = q.next('q1', abort.signal);
  abort.abort(new Error('worker closed'));
  await assert.rejects(gone, /worker closed/);
  assert.equal(q.waitingWorkers(), 0);
  const waiting = q.next('q1');
  now = 1500;
  q.enqueue('a', 'x');
  now = 1700;
  assert.deepEqual(await waiting, { tenant: 'a', item: 'x', waitedMs: 0 });
  q.enqueue('a', 'y');
  now = 1900;
  assert.equal((await q.next('q1')).waitedMs, 200);
});

test('cancel removes a queued item; the tenant leaves the rotation when it has none left', async () => {
  const q = new RequestQueue<string>({ maxOutstandingPerTenant: 10 });
  q.enqueue('a', 'a1');
  q.enqueue('b', 'b1');
  q.enqueue('c', 'c1');
  assert.equal(
    q.cancel('b', (x) => x === 'b1'),
    true,
  );
  assert.equal(
    q.cancel('b', (x) => x === 'b1'),
    false,
  );
  q.registerQuerier('q1');
  assert.deepEqual(await drain(q, 'q1', 2), ['a1', 'c1']);
  assert.deepEqual(q.lengths(), new Map());
});

test("max queriers per tenant: a tenant's queries go only to its shard; other queriers serve other tenants", async () => {
  const q = new RequestQueue<string>({ maxOutstandingPerTenant: 100 });
  for (const id of ['q1', 'q2', 'q3', 'q4']) q.registerQuerier(id);
  for (let i = 0; i < 8; i++) q.enqueue('sharded', `s${i}`, 2);
  const shard = q.shardOf('sharded');
  assert.equal(shard?.size, 2);
  const outside = ['q1', 'q2', 'q3', 'q4'].filter((id) => !shard?.has(id));
  // A querier outside the shard waits: nothing it may take.
  const waiting = q.next(outside[0]);
  q.enqueue('other', 'o1');
  assert.equal((await waiting).item, 'o1');
  for (const id of shard ?? []) assert.equal((await q.next(id)).tenant, 'sharded');
  // The shard is the same whatever order the queriers connected in.
  assert.deepEqual(shuffleShard('sharded', ['q4', 'q3', 'q2', 'q1'], 2), [...(shard ?? [])]);
});

test('shuffle shards spread tenants over different queriers, and a querier leaving reshards onto the rest', async () => {
  const ids = Array.from({ length: 10 }, (_, i) => `querier-${i}`);
  const shards = new Set(Array.from({ length: 20 }, (_, t) => shuffleShard(`tenant-${t}`, ids, 3).sort().join(',')));
  assert.ok(shards.size >= 15, `20 tenants got ${shards.size} distinct shards of 3 out of 10`);

  const q = new RequestQueue<string>({ maxOutstandingPerTenant: 100 });
  for (const id of ids.slice(0, 3)) q.registerQuerier(id);
  q.enqueue('t', 'x', 2);
  const [gone, kept] = [...(q.shardOf('t') ?? [])];
  const spare = ids.slice(0, 3).find((id) => id !== gone && id !== kept) ?? '';
  const waiting = q.next(spare);
  q.unregisterQuerier(gone);
  // Two queriers left for a shard of two: every querier may take the tenant's work now.
  assert.equal((await waiting).item, 'x');
});

test('stop fails waiting queriers and new work, and hands back what was queued', async () => {
  const q = new RequestQueue<string>({ maxOutstandingPerTenant: 10 });
  q.registerQuerier('q1');
  q.enqueue('a', 'left');
  const left = q.stop();
  assert.deepEqual(
    left.map((d) => d.item),
    ['left'],
  );
  await assert.rejects(q.next('q1'), { code: 'err-strata-scheduler-stopping', kind: 'unavailable' });
  assert.throws(() => q.enqueue('a', 'x'), { code: 'err-strata-scheduler-stopping' });
});
