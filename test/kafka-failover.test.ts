// A partition leader's death under a steady push load, end to end: 3 real Kafka brokers (RF 3,
// min.insync.replicas=2), one Strata process (distributor, ingester, querier), senders pushing
// back to back. The leader of the ingest partition is killed with SIGKILL; the new leader's
// election is timed from the brokers' side (metadata from a survivor). Then: every acknowledged
// sample reads back, no push waited longer than 2 s beyond the election (the bound),
// and any 503 says what happened and that retrying is safe.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin } from '@platformatic/kafka';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { ensureTopic, startKafka, type LocalKafka } from '@strata/local-kafka';
import { api, push, waitFor, type VectorSample } from './support/client.ts';

const TOPIC = 'ingest';
const SENDERS = 4;
const SERIES_PER_PUSH = 10;
/** The bound: no push waits longer than this beyond the new leader's election. */
const BEYOND_ELECTION_MS = 2000;

interface Attempt {
  push: number;
  startedAt: number;
  endedAt: number;
  status: number;
  body: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Kafka failover: kill -9 of a partition leader under push load', { timeout: 300_000 }, () => {
  let dir: string;
  let kafka: LocalKafka;
  let strata: AppProcess;
  const attempts: Attempt[] = [];
  const acked = new Set<number>();
  let killedAt = 0;
  let electedAt = 0;
  let oldLeader = -1;
  let newLeader = -1;

  /** Partition 0's leader as a surviving broker sees it (-1 while there is none). */
  async function leaderOf(admin: Admin): Promise<number> {
    const { topics } = await admin.metadata({ topics: [TOPIC], forceUpdate: true });
    return topics.get(TOPIC)?.partitions[0]?.leader ?? -1;
  }

  function admin(brokers: string[]): Admin {
    return new Admin({ clientId: 'failover-test', bootstrapBrokers: brokers, requestTimeout: 1000, connectTimeout: 500, retries: 0 });
  }

  /** Pushes one new set of series per attempt round, back to back, retrying a 5xx like Prometheus does (100 ms backoff). */
  async function sender(index: number, until: () => boolean): Promise<void> {
    for (let n = index; !until(); n += SENDERS) {
      const t = Date.now();
      const series = Array.from({ length: SERIES_PER_PUSH }, (_, s) => ({
        labels: [
          { name: '__name__', value: 'failover_push' },
          { name: 'push', value: String(n) },
          { name: 's', value: String(s) },
        ],
        samples: [{ value: n, timestamp: t }],
      }));
      for (;;) {
        const startedAt = Date.now();
        const res = await push(strata.url, series).catch((err: Error) => ({ status: 0, body: err.message }));
        attempts.push({ push: n, startedAt, endedAt: Date.now(), status: res.status, body: res.body });
        if (res.status >= 200 && res.status < 300) {
          acked.add(n);
          break;
        }
        if (res.status !== 503 && res.status !== 0) throw new Error(`push ${n}: ${res.status} ${res.body}`);
        await sleep(100);
      }
    }
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-failover-'));
    kafka = await startKafka({ dataDir: join(dir, 'kafka'), brokers: 3 });
    await ensureTopic({ brokers: kafka.brokers, topic: TOPIC, partitions: 1, replicationFactor: 3, minInsyncReplicas: 2 });
    const [port] = await freePorts(1);
    strata = new AppProcess({
      name: 'strata',
      target: 'all',
      httpPort: port,
      logFile: join(dir, 'strata.log'),
      args: [
        '-auth.multitenancy-enabled=false',
        `-data-dir=${dir}/data`,
        `-server.http-listen-port=${port}`,
        `-ingest-storage.kafka.address=${kafka.brokers.join(',')}`,
      ],
    });
    strata.start();
    await strata.waitReady(180_000);
  });

  after(async () => {
    await strata?.kill('SIGTERM');
    await kafka?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
    else console.log(`data kept in ${dir}`);
  });

  test('no acked sample lost, no push waits > 2 s beyond the election, any 503 names the cause', async () => {
    const probe = admin(kafka.brokers);
    oldLeader = await leaderOf(probe);
    await probe.close();
    const i = oldLeader - 1; // local-kafka node ids are index + 1
    assert.ok(kafka.brokers[i] !== undefined, `partition 0 led by node ${oldLeader}`);

    let stop = false;
    const senders = Array.from({ length: SENDERS }, (_, s) => sender(s, () => stop));
    await sleep(3000);
    assert.ok(acked.size > 0, 'pushes are acknowledged before the kill');

    // The survivors' view of partition 0, polled from the kill on: the election is when they name a new leader.
    const survivors = admin(kafka.brokers.filter((_, j) => j !== i));
    const pid = kafka.pids[i];
    killedAt = Date.now();
    await kafka.stopBroker(i, 'SIGKILL');
    for (;;) {
      const leader = await leaderOf(survivors).catch(() => -1);
      if (leader >= 0 && leader !== oldLeader) {
        electedAt = Date.now();
        newLeader = leader;
        break;
      }
      assert.ok(Date.now() - killedAt < 60_000, 'no new leader within 60s');
      await sleep(25);
    }
    await survivors.close();
    console.log(`killed node ${oldLeader} (pid ${pid}); node ${newLeader} leads partition 0 after ${electedAt - killedAt}ms`);
    await sleep(4000);
    stop = true;
    await Promise.all(senders);

    // A push waits from its first attempt to its 2xx, retries included: how long beyond the
    // election (or beyond its first attempt, if that came after the election)?
    const pushes = new Map<number, { first: number; ackedAt: number }>();
    for (const a of attempts) {
      const p = pushes.get(a.push) ?? { first: a.startedAt, ackedAt: Number.NaN };
      if (a.status >= 200 && a.status < 300) p.ackedAt = a.endedAt;
      pushes.set(a.push, p);
    }
    const waits = [...pushes].map(([n, p]) => ({ n, ...p, beyond: p.ackedAt - Math.max(p.first, electedAt) }));
    const worst = waits.reduce((w, p) => (p.beyond > w.beyond ? p : w));
    const stall = Math.max(...waits.filter((p) => p.ackedAt >= killedAt).map((p) => p.ackedAt - Math.max(p.first, killedAt)));
    const failed = attempts.filter((a) => a.status < 200 || a.status >= 300);
    console.log(
      `${pushes.size} pushes (${attempts.length} attempts), ${acked.size} acked, ${failed.length} attempts answered otherwise; ` +
        `longest push stall after the kill ${stall}ms, election ${electedAt - killedAt}ms after the kill; worst wait beyond the election ${worst.beyond}ms`,
    );
    for (const f of failed) console.log(`  push ${f.push} answered ${f.status} after ${f.endedAt - f.startedAt}ms: ${f.body.trim()}`);

    assert.equal(acked.size, pushes.size, 'every push was acknowledged in the end');
    assert.ok(worst.beyond <= BEYOND_ELECTION_MS, `push ${worst.n} was acknowledged ${worst.beyond}ms after the election`);
    for (const f of failed) {
      assert.equal(f.status, 503, `push ${f.push}: ${f.status} ${f.body}`);
      assert.match(f.body, /Kafka leader lost|Kafka broker unreachable|timeout waiting for Kafka's acks/, `push ${f.push}: ${f.body}`);
      assert.match(f.body, /retry it with backoff, that is safe/);
      assert.doesNotMatch(f.body, /partitions were just added/);
    }

    // Read back: every acknowledged push has all its series.
    const at = String(Date.now() / 1000);
    const missing = await waitFor(
      'every acked push reads back',
      async () => {
        const r = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', {
          query: 'count by (push) (last_over_time(failover_push[30m]))',
          time: at,
        });
        const got = new Map(r.data.result.map((v) => [Number(v.metric.push), Number(v.value[1])]));
        const lost = [...acked].filter((n) => got.get(n) !== SERIES_PER_PUSH);
        return lost.length === 0 ? lost : undefined;
      },
      60_000,
    ).catch((err: Error) => err.message);
    assert.deepEqual(missing, [], `acked pushes missing after the failover: ${String(missing)}`);
  });
});
