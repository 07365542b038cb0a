import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelsFromRecord } from '@strata/model';
import { TenantHeads, emptyAppendStats } from '@strata/tsdb';
import { IngesterClient, IngesterServer } from './index.ts';

test('a client reads what the served head holds, bit-exact, per tenant', async () => {
  const heads = new TenantHeads();
  const values = new Float64Array([1.5, 0]);
  new DataView(values.buffer).setBigUint64(8, 0x7ff0000000000002n, true);
  heads.head('t1').append(labelsFromRecord({ __name__: 'up', job: 'a' }), new Float64Array([10, 20]), values, emptyAppendStats());
  heads.head('t2').append(labelsFromRecord({ __name__: 'up', job: 'b' }), new Float64Array([10]), new Float64Array([7]), emptyAppendStats());
  const server = new IngesterServer({ querier: heads, address: '127.0.0.1:0' });
  await server.start();
  const client = new IngesterClient({ id: 'ingester-zone-a-0', address: `127.0.0.1:${server.port}`, timeoutMs: 5000 });
  try {
    const series = await client.select({ tenant: 't1', matchers: [{ type: '=', name: '__name__', value: 'up' }], mint: 0, maxt: 100 });
    assert.equal(series.length, 1);
    assert.deepEqual(series[0].labels, labelsFromRecord({ __name__: 'up', job: 'a' }));
    assert.deepEqual([...series[0].timestamps], [10, 20]);
    assert.equal(series[0].values[0], 1.5);
    assert.equal(new DataView(series[0].values.buffer).getBigUint64(8, true), 0x7ff0000000000002n);
    assert.deepEqual(await client.labelValues({ tenant: 't1', matchers: [], mint: 0, maxt: 100, name: 'job' }), ['a']);
    assert.deepEqual(await client.labelNames({ tenant: 't2', matchers: [], mint: 0, maxt: 100 }), ['__name__', 'job']);
    assert.deepEqual(await client.select({ tenant: 't3', matchers: [], mint: 0, maxt: 100 }), []);
  } finally {
    client.close();
    await server.stop();
  }
});

test('a dead ingester fails fast with its id in the error', async () => {
  const client = new IngesterClient({ id: 'ingester-zone-b-1', address: '127.0.0.1:1', timeoutMs: 1000 });
  await assert.rejects(client.labelNames({ tenant: 't', matchers: [], mint: 0, maxt: 1 }), /ingester-zone-b-1/);
  client.close();
});
