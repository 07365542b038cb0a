// The drill topology on loopback: 3 Kafka brokers (RF 3, min.insync.replicas=2), 2 distributors,
// zones a and b with 2 ingesters each, the querier, Redis where a component uses it, and two
// verification-only queriers that each ask one zone's ingesters (so a zone that silently misses
// data cannot hide behind the other's fallback). Every process is started and stopped by pid.

import { join } from 'node:path';
import { Admin, ConfigResourceTypes } from '@platformatic/kafka';
import { AppProcess, LocalCluster, LocalRedis, freePorts } from '@strata/local-cluster';
import { features } from './product-features.ts';
import { sleep } from './time.ts';

export const TOPOLOGY = {
  kafka_brokers: 3,
  replication_factor: 3,
  min_insync_replicas: 2,
  partitions: 2,
  zones: ['a', 'b'],
  ingesters_per_zone: 2,
  distributors: 2,
  queriers: 1,
} as const;

/** Results newer than this are not cached: drill data is minutes old, so the cache must take recent extents. */
const RESULTS_CACHE_MAX_FRESHNESS = '30s';

export interface DrillClusterOptions {
  dataDir: string;
  /**
   * Ingesters cut and ship a block this often (a Prometheus duration), so a drill of minutes
   * crosses block cuts, uploads and offset commits as hours of production would. Undefined:
   * the product's default (2h), or no blocks at all in a build without blocks storage.
   */
  blockPeriod?: string;
  log: (line: string) => void;
}

export class DrillCluster {
  private readonly cacheRedis: LocalRedis | undefined;
  readonly local: LocalCluster;
  readonly zoneQueriers: Map<string, AppProcess>;

  private constructor(
    /** The querier's results-cache Redis (a store of its own, as a results cache is in Mimir); undefined if none is wired. */
    cacheRedis: LocalRedis | undefined,
    local: LocalCluster,
    /** Verification queriers by zone: each asks only that zone's ingesters (static list, no ring). */
    zoneQueriers: Map<string, AppProcess>,
  ) {
    this.cacheRedis = cacheRedis;
    this.local = local;
    this.zoneQueriers = zoneQueriers;
  }

  /** Every Redis the cluster runs, by what it holds: the ring KV (ring, heartbeats, HA tracker) and the results cache. */
  redisServers(): { role: string; server: LocalRedis }[] {
    const out: { role: string; server: LocalRedis }[] = [];
    if (this.local.redis) out.push({ role: 'ring KV (partition ring, heartbeats, HA tracker)', server: this.local.redis });
    if (this.cacheRedis) out.push({ role: 'querier results cache', server: this.cacheRedis });
    return out;
  }

  static async start(opts: DrillClusterOptions): Promise<DrillCluster> {
    let redis: LocalRedis | undefined;
    const querierArgs: string[] = [];
    if (features.resultsCacheRedisFlag().length > 0) {
      redis = await LocalRedis.start(join(opts.dataDir, 'redis-results-cache'));
      opts.log(`redis-server on ${redis.endpoint} (pid ${redis.pid}) for the querier's results cache`);
      querierArgs.push(`-query-frontend.results-cache.redis.endpoint=${redis.endpoint}`, `-query-frontend.max-cache-freshness=${RESULTS_CACHE_MAX_FRESHNESS}`);
    }
    const ingesterArgs: string[] = [];
    if (opts.blockPeriod !== undefined && features.blockRangesFlag().length > 0) {
      ingesterArgs.push(`-blocks-storage.tsdb.block-ranges-period=${opts.blockPeriod}`, '-blocks-storage.tsdb.head-compaction-interval=5s');
    }
    let local: LocalCluster;
    try {
      local = await LocalCluster.start({
        dataDir: opts.dataDir,
        partitions: TOPOLOGY.partitions,
        zones: [...TOPOLOGY.zones],
        kafkaBrokers: TOPOLOGY.kafka_brokers,
        distributors: TOPOLOGY.distributors,
        // The production topology: the partition ring, heartbeats and HA tracker in a shared Redis.
        redis: features.redisRing().length > 0,
        extraArgs: { querier: querierArgs, ingester: ingesterArgs },
        log: opts.log,
      });
    } catch (err) {
      await redis?.kill('SIGTERM');
      throw err;
    }
    const zoneQueriers = new Map<string, AppProcess>();
    const cluster = new DrillCluster(redis, local, zoneQueriers);
    try {
      const addresses = ingesterAddresses(local);
      const ports = await freePorts(TOPOLOGY.zones.length);
      for (const [i, zone] of TOPOLOGY.zones.entries()) {
        const name = `verify-querier-zone-${zone}`;
        const own = addresses.filter((a) => a.startsWith(`ingester-zone-${zone}-`));
        const p = new AppProcess({
          name,
          target: 'querier',
          httpPort: ports[i],
          logFile: join(opts.dataDir, 'logs', `${name}.log`),
          args: [
            ...verifierArgs(local),
            `-server.http-listen-port=${ports[i]}`,
            `-querier.ingester-addresses=${own.join(',')}`,
            `-querier.prefer-availability-zone=${zone}`,
          ],
        });
        zoneQueriers.set(zone, p);
        p.start();
      }
      await Promise.all([...zoneQueriers.values()].map((p) => p.waitReady()));
      await verifyTopicSettings(local);
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  get querierUrl(): string {
    return this.local.querierUrl;
  }

  distributorUrls(): string[] {
    return this.distributors().map((p) => p.url);
  }

  distributors(): AppProcess[] {
    return [...this.local.processes.values()].filter((p) => p.opts.target === 'distributor');
  }

  ingesters(zone?: string): AppProcess[] {
    return this.local.ingesters(zone);
  }

  process(name: string): AppProcess {
    return this.local.process(name);
  }

  /** Index (into kafka.brokers) of the broker leading `partition` of the ingest topic. */
  async partitionLeader(partition: number): Promise<number> {
    return withAdmin(this.local, async (admin) => {
      const meta = await admin.metadata({ topics: [this.local.topic], forceUpdate: true });
      const leader = meta.topics.get(this.local.topic)?.partitions[partition]?.leader;
      const node = leader === undefined ? undefined : meta.brokers.get(leader);
      const i = node === undefined ? -1 : this.local.kafka.brokers.indexOf(`${node.host}:${node.port}`);
      if (i < 0) throw new Error(`cannot tell which local broker leads partition ${partition} (leader node ${leader})`);
      return i;
    });
  }

  /**
   * Waits until the brokers other than `deadBroker` (an index) name a new leader for `partition`,
   * as a producer refreshing its metadata would see it; resolves with that broker's index.
   */
  async waitForNewLeader(partition: number, deadBroker: number, timeoutMs = 60_000): Promise<number> {
    const survivors = this.local.kafka.brokers.filter((_, i) => i !== deadBroker);
    const admin = new Admin({ bootstrapBrokers: survivors, clientId: 'strata-drill-election', requestTimeout: 1000, connectTimeout: 500, retries: 0 });
    const deadline = Date.now() + timeoutMs;
    try {
      for (;;) {
        const meta = await admin.metadata({ topics: [this.local.topic], forceUpdate: true }).catch(() => undefined);
        const leader = meta?.topics.get(this.local.topic)?.partitions[partition]?.leader ?? -1;
        const i = leader - 1; // local-kafka node ids are index + 1
        if (leader >= 0 && i !== deadBroker) return i;
        if (Date.now() > deadline) throw new Error(`no new leader for partition ${partition} within ${timeoutMs}ms`);
        await sleep(25);
      }
    } finally {
      await admin.close().catch(() => undefined);
    }
  }

  /** The filesystem bucket's directory, if the cluster uses one. */
  bucketDir(): string | undefined {
    const flag = this.local.process('querier').opts.args.find((a) => a.startsWith('-blocks-storage.filesystem.dir='));
    return flag?.slice('-blocks-storage.filesystem.dir='.length);
  }

  /** The cluster's /metrics sample lines whose name starts with one of `prefixes`, by process. */
  async metrics(prefixes: string[]): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {};
    for (const p of this.local.processes.values()) {
      try {
        const text = await (await fetch(`${p.url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
        const lines = text.split('\n').filter((l) => prefixes.some((x) => l.startsWith(x)));
        if (lines.length > 0) out[p.name] = lines;
      } catch (err) {
        out[p.name] = [`unavailable: ${(err as Error).message}`];
      }
    }
    return out;
  }

  /**
   * What is not healthy right now: processes not answering /ready with 200 and, with a Redis ring,
   * distributors whose ring view (read from the KV) lacks an ACTIVE partition. Empty when healthy.
   */
  async notReady(): Promise<string[]> {
    const all = [...this.local.processes.values()];
    const ready = await Promise.all(all.map((p) => p.isReady()));
    const out = all.filter((_, i) => !ready[i]).map((p) => p.name);
    if (this.local.redis) {
      for (const d of this.distributors().filter((p) => p.running)) {
        const problem = await ringProblem(d.url, TOPOLOGY.partitions);
        if (problem !== undefined) out.push(`${d.name} ring (${problem})`);
      }
    }
    return out;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.zoneQueriers.values()].map((p) => p.kill('SIGTERM')));
    await this.local.stop();
    await this.cacheRedis?.kill('SIGTERM');
  }

  /** Synchronous last resort (second Ctrl-C): SIGKILL every process by pid. */
  killNow(): void {
    for (const { server } of this.redisServers()) server.killNow();
    for (const p of this.zoneQueriers.values()) p.killNow();
    for (const p of this.local.processes.values()) p.killNow();
    for (const pid of this.local.kafka.pids) {
      if (pid > 0) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  }
}

/** Why a distributor's partition ring is not complete (every partition ACTIVE, read from the KV), or undefined. */
async function ringProblem(distributorUrl: string, partitions: number): Promise<string | undefined> {
  try {
    const res = await fetch(`${distributorUrl}/ingester/partition-ring`, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(2000) });
    const ring = (await res.json()) as { source: string; partitions: { id: number; state: string }[] };
    const active = new Set(ring.partitions.filter((p) => p.state === 'ACTIVE').map((p) => p.id));
    if (ring.source === 'kv' && Array.from({ length: partitions }, (_, i) => i).every((i) => active.has(i))) return undefined;
    return `source ${ring.source}, ${ring.partitions.map((p) => `${p.id}:${p.state}`).join(' ') || 'no partitions'}`;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * The cluster querier's flags (Kafka, bucket, ...) minus what makes it the cluster's querier:
 * its port, its ingesters, zone preference and ring (which would find the other zone's ingesters
 * too), and the results cache (a verifier reads storage).
 */
function verifierArgs(local: LocalCluster): string[] {
  const own = ['-server.http-listen-port=', '-querier.ingester-addresses=', '-querier.prefer-availability-zone=', '-query-frontend.', '-ring.'];
  return local.process('querier').opts.args.filter((a) => !own.some((prefix) => a.startsWith(prefix)));
}

function ingesterAddresses(local: LocalCluster): string[] {
  const flag = local.process('querier').opts.args.find((a) => a.startsWith('-querier.ingester-addresses='));
  if (flag === undefined) throw new Error('the cluster querier has no -querier.ingester-addresses flag');
  return flag.slice('-querier.ingester-addresses='.length).split(',');
}

async function withAdmin<T>(local: LocalCluster, fn: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Admin({ bootstrapBrokers: local.kafka.brokers, clientId: 'strata-drill' });
  try {
    return await fn(admin);
  } finally {
    await admin.close().catch(() => undefined);
  }
}

/** Fails the drill early if the ingest topic is not what the drill claims to test. */
async function verifyTopicSettings(local: LocalCluster): Promise<void> {
  await withAdmin(local, async (admin) => {
    const meta = await admin.metadata({ topics: [local.topic], forceUpdate: true });
    const parts = meta.topics.get(local.topic)?.partitions ?? [];
    const rf = Math.min(...parts.map((p) => p.replicas.length));
    const configs = await admin.describeConfigs({
      resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: local.topic, configurationKeys: ['min.insync.replicas'] }],
      includeSynonyms: false,
    });
    const minIsr = Number(configs[0]?.configs.find((e) => e.name === 'min.insync.replicas')?.value);
    if (parts.length !== TOPOLOGY.partitions || rf !== TOPOLOGY.replication_factor || minIsr !== TOPOLOGY.min_insync_replicas) {
      throw new Error(
        `topic ${local.topic} has ${parts.length} partitions, RF ${rf}, min.insync.replicas ${minIsr}; the drill needs ` +
          `${TOPOLOGY.partitions}, ${TOPOLOGY.replication_factor}, ${TOPOLOGY.min_insync_replicas}`,
      );
    }
  });
}
