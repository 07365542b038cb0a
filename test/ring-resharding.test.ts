// Adding a partition to the ring moves few series, and only to itself, across
// real processes, a real Kafka broker and a real redis-server: a 4-partition
// ring takes 2000 series; a fifth ingester registers its partition PENDING,
// turns it ACTIVE, and the same series pushed again land where they did,
// except a share ≤ 1.5/4 that now lands on the new partition. Where a series
// landed is read back from Kafka, not from the distributor's word.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin, Consumer, ListOffsetTimestamps, MessagesStreamModes } from '@platformatic/kafka';
import { LocalCluster } from '@strata/local-cluster';
import { PARTITION_RING_KEY, RedisKv, type PartitionRingDesc, type RingStatusJson } from '@strata/ring';
import { fromMessage } from '@strata/kafka';
import { decodeRecordValue } from '@strata/remote-write';
import { push, waitFor } from './support/client.ts';

const TENANT = 'team-reshard';
const SERIES = 2000;
const OLD = 4; // partitions 0..3 ACTIVE before; partition 4 is the one added

describe('adding a partition to the ring (multi-process)', { timeout: 300_000 }, () => {
  let cluster: LocalCluster;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-resharding-'));
    // The topic has 5 partitions from the start (Kafka partitions cannot be added without
    // remapping keys anyway); the ring decides which of them take writes.
    cluster = await LocalCluster.start({
      dataDir: dir,
      partitions: OLD + 1,
      zones: ['a'],
      redis: true,
      extraArgs: {
        ingester: ['-ingester.partition-ring.min-partition-owners-duration=1s', '-ingester.ring.heartbeat-period=1s'],
      },
    });
  });

  after(async () => {
    await cluster?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('a fifth partition going PENDING → ACTIVE takes ≤ 1.5/4 of the series, all from the others to itself; the rest stay put', async () => {
    const newcomer = cluster.process(`ingester-zone-a-${OLD}`);

    // Bring the ring to four partitions: partition 4 is scaled down the way an operator does it
    // (INACTIVE, owner leaves on shutdown) and then removed, as delete-inactive-partition-after would.
    let res = await fetch(`${newcomer.url}/ingester/prepare-partition-downscale`, { method: 'POST' });
    assert.equal(res.status, 200, await res.text());
    res = await fetch(`${newcomer.url}/ingester/prepare-shutdown`, { method: 'POST' });
    assert.equal(res.status, 204);
    await newcomer.kill('SIGTERM');
    // The distributor must see it INACTIVE and ownerless before it vanishes, or it keeps it as "lost from the KV".
    await waitForRing('partition 4 INACTIVE without owners', (r) => r.partitions.some((p) => p.id === OLD && p.state === 'INACTIVE' && p.owners.length === 0));
    const kv = new RedisKv({ endpoint: cluster.redis!.endpoint, timeoutMs: 2000 });
    await kv.start();
    try {
      await kv.cas<PartitionRingDesc>(PARTITION_RING_KEY, (cur) => {
        assert.ok(cur?.partitions[OLD]?.state === 'INACTIVE', 'partition 4 is INACTIVE before it is removed');
        delete cur.partitions[OLD];
        return { value: cur };
      });
    } finally {
      await kv.stop();
    }
    const before4 = await waitForRing('a ring of partitions 0-3 only', (r) => r.partitions.length === OLD);
    assert.deepEqual(before4.write_partitions, [0, 1, 2, 3]);

    const t1 = Date.now() - 60_000;
    await pushAll(t1);

    // The fifth ingester starts: it registers partition 4 PENDING, and ACTIVE once it has owned it for 1s.
    newcomer.start();
    await newcomer.waitReady();
    const after5 = await waitForRing('partition 4 ACTIVE and written to', (r) => r.write_partitions?.length === OLD + 1);
    assert.deepEqual(after5.write_partitions, [0, 1, 2, 3, 4]);
    const ringShare = after5.partitions.find((p) => p.id === OLD)!.ownership;

    const t2 = t1 + 15_000;
    await pushAll(t2);

    // Where each series landed, per push, from the records in Kafka.
    const landed = await readPartitions();
    const first = landed.get(t1)!;
    const second = landed.get(t2)!;
    assert.equal(first.size, SERIES, 'every series of the first push is in Kafka once');
    assert.equal(second.size, SERIES, 'every series of the second push is in Kafka once');
    assert.ok(![...first.values()].includes(OLD), 'nothing went to partition 4 while it was out of the ring');

    let moved = 0;
    for (const [series, was] of first) {
      const now = second.get(series);
      assert.ok(now !== undefined, `${series} missing from the second push`);
      if (now === was) continue;
      moved++;
      assert.equal(now, OLD, `${series} moved from partition ${was} to ${now}, not to the new partition`);
    }
    const share = moved / SERIES;
    console.log(
      `resharding: adding partition 4 to 4 ACTIVE partitions moved ${moved} of ${SERIES} series (${(share * 100).toFixed(1)}%; ring share of partition 4: ${(ringShare * 100).toFixed(1)}%; bound 1.5/4 = 37.5%)`,
    );
    assert.ok(moved > 0, 'no series moved to the new partition');
    assert.ok(share <= 1.5 / OLD, `moved share ${share} is above 1.5/${OLD}`);
  });

  async function ringPage(): Promise<RingStatusJson> {
    const res = await fetch(`${cluster.distributorUrl}/ingester/partition-ring`, { headers: { accept: 'application/json' } });
    assert.equal(res.status, 200);
    return (await res.json()) as RingStatusJson;
  }

  /** Polls the distributor's ring page until it reads the KV's ring and `ok` holds. */
  function waitForRing(what: string, ok: (r: RingStatusJson) => boolean): Promise<RingStatusJson> {
    return waitFor(
      what,
      async () => {
        const r = await ringPage();
        return r.source === 'kv' && ok(r) ? r : undefined;
      },
      30_000,
    );
  }

  async function pushAll(t: number): Promise<void> {
    const batch = 500;
    for (let from = 0; from < SERIES; from += batch) {
      const timeseries = Array.from({ length: batch }, (_, k) => ({
        labels: [
          { name: '__name__', value: 'reshard_metric' },
          { name: 'series', value: String(from + k) },
        ],
        samples: [{ value: from + k, timestamp: t }],
      }));
      const r = await push(cluster.distributorUrl, timeseries, { 'X-Scope-OrgID': TENANT });
      assert.equal(r.status, 200, `push at ${t}: ${r.status} ${r.body}`);
    }
  }

  /** Every record of the topic: sample timestamp → (series label → partition). A series twice in one push fails. */
  async function readPartitions(): Promise<Map<number, Map<string, number>>> {
    const admin = new Admin({ clientId: 'resharding-test', bootstrapBrokers: cluster.kafka.brokers });
    let high: Map<number, bigint>;
    try {
      const md = await admin.metadata({ topics: [cluster.topic], forceUpdate: true });
      const count = md.topics.get(cluster.topic)?.partitionsCount ?? 0;
      const [offsets] = await admin.listOffsets({
        topics: [
          {
            name: cluster.topic,
            partitions: Array.from({ length: count }, (_, partitionIndex) => ({ partitionIndex, timestamp: ListOffsetTimestamps.LATEST })),
          },
        ],
      });
      high = new Map(offsets.partitions.map((o) => [o.partitionIndex, o.offset]));
    } finally {
      await admin.close();
    }
    const out = new Map<number, Map<string, number>>();
    // Collected and asserted after the read, so one bad record does not hide the others.
    const problems: string[] = [];
    const next = new Map<number, bigint>();
    const caughtUp = () => [...high].every(([p, h]) => (next.get(p) ?? 0n) >= h);
    const consumer = new Consumer({ clientId: 'resharding-test', groupId: `resharding-test-${process.pid}`, bootstrapBrokers: cluster.kafka.brokers });
    try {
      if (!caughtUp()) {
        const stream = await consumer.consume({ topics: [cluster.topic], mode: MessagesStreamModes.EARLIEST, autocommit: false });
        const timer = setTimeout(() => void stream.close(), 30_000);
        try {
          for await (const message of stream) {
            const { partition, offset } = message;
            // Read as an ingester reads it (the record contract of @strata/kafka), whatever the producer's codec.
            const record = fromMessage({ ...message, headers: [...message.headers] });
            if (record.tenant !== TENANT) problems.push(`record key ${record.tenant} at ${partition}/${offset}`);
            for (const s of decodeRecordValue(record.value, record.format).timeseries) {
              const name = s.labels.find((l) => l.name === 'series')!.value;
              const t = s.timestamps[0];
              let m = out.get(t);
              if (!m) out.set(t, (m = new Map()));
              if (m.has(name)) problems.push(`series ${name} written twice at ${t} (partitions ${m.get(name)} and ${partition})`);
              m.set(name, partition);
            }
            next.set(partition, offset + 1n);
            if (caughtUp()) break;
          }
        } finally {
          clearTimeout(timer);
          await stream.close();
        }
      }
      assert.ok(
        caughtUp(),
        `every record read back from Kafka: read up to ${JSON.stringify([...next].map(([p, o]) => [p, String(o)]))} of ${JSON.stringify([...high].map(([p, o]) => [p, String(o)]))}`,
      );
    } finally {
      await consumer.close();
    }
    assert.deepEqual(problems, []);
    return out;
  }
});
