// Read-after-write across processes: a push acknowledged by the distributor,
// then at once a query with X-Read-Consistency: strong to the querier, which
// has the partition's ingester wait (gRPC WaitForOffset) until it consumed the
// record. The query must see the sample every time.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCluster } from '@strata/local-cluster';
import { api, push, type VectorSample } from './support/client.ts';

const TRIES = 1000;
const TENANT = { 'X-Scope-OrgID': 'team-raw' };

describe('read-after-write with X-Read-Consistency: strong', { timeout: 600_000 }, () => {
  let cluster: LocalCluster;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-raw-'));
    cluster = await LocalCluster.start({ dataDir: dir, partitions: 2 });
  });

  after(async () => {
    await cluster?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  test(`a push is visible to the very next strong query, ${TRIES} of ${TRIES} times`, async () => {
    const base = Math.floor(Date.now() / 1000) * 1000 - TRIES * 1000;
    let seen = 0;
    const misses: string[] = [];
    const started = Date.now();
    for (let i = 0; i < TRIES; i++) {
      // Eight series spread over both partitions; each try appends the next sample of one of them.
      const series = `probe-${i % 8}`;
      const t = base + i * 1000;
      const res = await push(
        cluster.distributorUrl,
        [
          {
            labels: [
              { name: '__name__', value: 'raw_probe' },
              { name: 'series', value: series },
            ],
            samples: [{ value: i, timestamp: t }],
          },
        ],
        TENANT,
      );
      assert.equal(res.status, 200, res.body);
      const r = await api<{ result: VectorSample[] }>(
        cluster.querierUrl,
        '/prometheus/api/v1/query',
        { query: `raw_probe{series="${series}"}`, time: String(t / 1000) },
        { headers: { ...TENANT, 'X-Read-Consistency': 'strong' } },
      );
      assert.equal(r.httpStatus, 200, r.error);
      if (r.data.result[0]?.value[1] === String(i)) seen++;
      else if (misses.length < 5) misses.push(`try ${i}: ${JSON.stringify(r.data.result)}`);
    }
    console.log(
      `read-after-write: ${seen} of ${TRIES} strong queries saw the sample just pushed (${((Date.now() - started) / TRIES).toFixed(1)}ms per push+query)`,
    );
    assert.deepEqual(misses, []);
    assert.equal(seen, TRIES);
  });
});
