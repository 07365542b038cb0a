// Failure is loud in the single process (`-target=all`), and nothing acknowledged is
// lost across it: its embedded Kafka broker killed (restarted, /ready false meanwhile),
// the process itself SIGKILLed (no orphaned broker; the next start on the same data
// directory has every acked sample), and its ingester's Kafka reader failing for good
// (the ingest topic deleted: /ready false, then exit 1).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin } from '@platformatic/kafka';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { api, generateSeries, push, waitFor, type VectorSample } from './support/client.ts';

describe('single-process failures', { timeout: 600_000 }, () => {
  let strata: AppProcess;
  let dir: string;
  const start = Math.floor(Date.now() / 1000) * 1000 - 30 * 60_000;
  /** Series pushed and acknowledged so far, one metric name per push. */
  const acked: string[] = [];
  const brokerPidFile = () => join(dir, 'data', 'kafka', 'node-1', 'broker.pid');
  const brokerPid = () => Number(readFileSync(brokerPidFile(), 'utf8').trim());
  const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/ Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));

  const pushAcked = async (metric: string) => {
    const res = await push(strata.url, generateSeries(metric, 20, 5, start + acked.length * 60_000, 10_000));
    assert.equal(res.status, 200, `${metric}: ${res.body}`);
    acked.push(metric);
  };
  /** Every acknowledged push reads back whole: 20 series × 5 samples each. */
  const assertAllAcked = async () => {
    for (const metric of acked) {
      await waitFor(`${metric}: 100 samples`, async () => {
        const r = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', {
          query: `sum(count_over_time(${metric}[1h]))`,
          time: String((start + 40 * 60_000) / 1000),
        });
        return r.data.result[0]?.value[1] === '100' ? r : undefined;
      });
    }
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-failures-'));
    const [port] = await freePorts(1);
    strata = new AppProcess({
      name: 'strata',
      target: 'all',
      httpPort: port,
      logFile: join(dir, 'strata.log'),
      args: ['-auth.multitenancy-enabled=false', `-data-dir=${dir}/data`, `-server.http-listen-port=${port}`],
    });
    strata.start();
    await strata.waitReady(180_000);
  });

  after(async () => {
    await strata?.kill('SIGKILL');
    if (existsSync(brokerPidFile())) process.kill(brokerPid(), 'SIGKILL');
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('the embedded broker killed with SIGKILL: /ready turns 503 naming it, the broker is restarted, /ready 200 again, nothing acked is lost', async () => {
    await pushAcked('before_broker_kill');
    const pid = brokerPid();
    process.kill(pid, 'SIGKILL');
    const seen = await waitFor(
      '/ready 503 while the broker restarts',
      async () => {
        const res = await fetch(`${strata.url}/ready`, { signal: AbortSignal.timeout(2000) });
        return res.status === 503 ? await res.text() : undefined;
      },
      30_000,
    );
    assert.match(seen, /embedded Kafka broker exited .*restarting/);
    await strata.waitReady(120_000);
    assert.notEqual(brokerPid(), pid, 'a new broker process');
    await pushAcked('after_broker_restart');
    await assertAllAcked();
  });

  test('the process killed with SIGKILL takes its broker with it; the next start on the same data directory has every acked sample', async () => {
    await pushAcked('before_process_kill');
    const pid = brokerPid();
    await strata.kill('SIGKILL');
    await waitFor('the orphaned broker gone', async () => (alive(pid) ? undefined : true), 15_000);
    strata.start();
    await strata.waitReady(180_000);
    await assertAllAcked();
    await pushAcked('after_process_restart');
    await assertAllAcked();
  });

  test("the ingester's Kafka reader fails for good (ingest topic deleted): /ready 503 naming it, then exit code 1", async () => {
    const log = readFileSync(strata.opts.logFile, 'utf8');
    const brokers = [...log.matchAll(/local Kafka broker ready at ([0-9.:]+)/g)].at(-1)?.[1];
    assert.ok(brokers, 'the broker address in the startup log');
    const admin = new Admin({ clientId: 'single-process-failures', bootstrapBrokers: [brokers] });
    try {
      await admin.deleteTopics({ topics: ['ingest'] });
    } finally {
      await admin.close();
    }
    let reason = '';
    await waitFor(
      '/ready 503 or the process gone',
      async () => {
        try {
          const res = await fetch(`${strata.url}/ready`, { signal: AbortSignal.timeout(2000) });
          if (res.status === 503) reason = await res.text();
          return res.status === 503 ? true : undefined;
        } catch {
          return strata.running ? undefined : true;
        }
      },
      120_000,
    );
    await strata.waitExit();
    assert.deepEqual(strata.exit, { code: 1, signal: null });
    const tail = readFileSync(strata.opts.logFile, 'utf8');
    assert.match(reason || tail, /ingester failed: topic "ingest" no longer exists/);
    assert.match(tail, /"msg":"stopped"/);
    assert.ok(!existsSync(brokerPidFile()), 'the broker was stopped with the process');
  });
});
