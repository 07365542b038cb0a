// A whole Strata cluster on loopback for tests and drills: real Kafka,
// distributor(s), ingesters in two zones (ingester-zone-<z>-<n> per
// partition n) and a querier, each its own process; with `queryFrontend`, a query-scheduler, a
// query-frontend and queriers that pull their work from the scheduler.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTopic, startKafka, type LocalKafka } from '@strata/local-kafka';
import { AppProcess } from './app-process.ts';
import { freePorts } from './free-ports.ts';
import { LocalRedis } from './local-redis.ts';

export interface LocalClusterOptions {
  dataDir: string;
  partitions?: number;
  zones?: string[];
  kafkaBrokers?: 1 | 3;
  distributors?: number;
  topic?: string;
  /** Extra flags per app kind. */
  extraArgs?: Partial<Record<'distributor' | 'ingester' | 'querier' | 'compactor' | 'query-frontend' | 'query-scheduler', string[]>>;
  /** Where blocks go (ingesters, querier, compactor): default a filesystem bucket in <dataDir>/bucket. */
  bucketArgs?: string[];
  /** Also run a compactor process. */
  compactor?: boolean;
  /** Also run a query-scheduler and a query-frontend (frontendUrl); the queriers pull queries from the scheduler. */
  queryFrontend?: boolean;
  /** Querier processes: querier, querier-1, ... (default 1). */
  queriers?: number;
  /**
   * Run a real redis-server and point every distributor, ingester and querier at it
   * (-ring.store=redis: the partition ring, heartbeats, the HA tracker); start() then
   * also waits until the distributor sees every partition ACTIVE.
   */
  redis?: boolean;
  log?: (line: string) => void;
}

export class LocalCluster {
  private redisServer: LocalRedis | undefined;

  readonly kafka: LocalKafka;
  readonly processes: Map<string, AppProcess>;
  readonly topic: string;

  private constructor(kafka: LocalKafka, processes: Map<string, AppProcess>, topic: string) {
    this.kafka = kafka;
    this.processes = processes;
    this.topic = topic;
  }

  static async start(opts: LocalClusterOptions): Promise<LocalCluster> {
    const partitions = opts.partitions ?? 2;
    const topic = opts.topic ?? 'ingest';
    const brokerCount = opts.kafkaBrokers ?? 1;
    const log = opts.log ?? (() => undefined);
    mkdirSync(join(opts.dataDir, 'logs'), { recursive: true });
    const kafka = await startKafka({ dataDir: join(opts.dataDir, 'kafka'), brokers: brokerCount, log });
    const cluster = new LocalCluster(kafka, new Map<string, AppProcess>(), topic);
    const cleanup = () => cluster.killAllNow();
    process.once('exit', cleanup);
    try {
      if (opts.redis) {
        cluster.redisServer = await LocalRedis.start(join(opts.dataDir, 'redis'));
        log(`redis-server on ${cluster.redisServer.endpoint} (pid ${cluster.redisServer.pid})`);
      }
      await ensureTopic({
        brokers: kafka.brokers,
        topic,
        partitions,
        replicationFactor: brokerCount,
        minInsyncReplicas: brokerCount === 3 ? 2 : undefined,
      });
      await cluster.addProcesses(opts, partitions);
      for (const p of cluster.processes.values()) p.start();
      await Promise.all([...cluster.processes.values()].map((p) => p.waitReady()));
      if (cluster.redisServer) await cluster.waitPartitionsActive(partitions);
      log(`cluster ready: distributor ${cluster.distributorUrl}, querier ${cluster.querierUrl}`);
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  /** Every process of the cluster, not started: ingesters (a zone's per partition), distributors, the querier, a compactor. */
  private async addProcesses(opts: LocalClusterOptions, partitions: number): Promise<void> {
    const zones = opts.zones ?? ['a', 'b'];
    const ingesterIds = zones.flatMap((z) => Array.from({ length: partitions }, (_, n) => `ingester-zone-${z}-${n}`));
    const distributorNames = Array.from({ length: opts.distributors ?? 1 }, (_, i) => (i === 0 ? 'distributor' : `distributor-${i}`));
    const querierNames = Array.from({ length: opts.queriers ?? 1 }, (_, i) => (i === 0 ? 'querier' : `querier-${i}`));
    const ports = await freePorts(
      ingesterIds.length * 2 + distributorNames.length + querierNames.length + (opts.compactor ? 1 : 0) + (opts.queryFrontend ? 4 : 0),
    );
    const common: CommonArgs = {
      opts,
      kafka: [`-ingest-storage.kafka.address=${this.kafka.brokers.join(',')}`, `-ingest-storage.kafka.topic=${this.topic}`],
      ring: this.redisServer ? ['-ring.store=redis', `-ring.redis.endpoint=${this.redisServer.endpoint}`] : [],
      bucket: opts.bucketArgs ?? [`-blocks-storage.filesystem.dir=${join(opts.dataDir, 'bucket')}`],
    };
    const grpcAddresses: string[] = [];
    for (const id of ingesterIds) {
      const [httpPort, grpcPort] = [ports.pop()!, ports.pop()!];
      grpcAddresses.push(`${id}=127.0.0.1:${grpcPort}`);
      this.add(ingester(common, id, httpPort, grpcPort));
    }
    for (const name of distributorNames) this.add(distributor(common, name, ports.pop()!));
    let schedulerAddress: string | undefined;
    if (opts.queryFrontend) {
      const [schedulerHttp, schedulerGrpc, frontendHttp, frontendGrpc] = [ports.pop()!, ports.pop()!, ports.pop()!, ports.pop()!];
      schedulerAddress = `127.0.0.1:${schedulerGrpc}`;
      this.add(queryScheduler(common, schedulerHttp, schedulerGrpc));
      this.add(queryFrontend(common, frontendHttp, frontendGrpc, schedulerAddress));
    }
    for (const name of querierNames) this.add(querier(common, name, ports.pop()!, grpcAddresses, schedulerAddress));
    if (opts.compactor) this.add(compactor(common, ports.pop()!));
  }

  private add(p: AppProcess): void {
    this.processes.set(p.name, p);
  }

  get distributorUrl(): string {
    return this.process('distributor').url;
  }

  get querierUrl(): string {
    return this.process('querier').url;
  }

  /** The query-frontend of a cluster started with `queryFrontend: true`. */
  get frontendUrl(): string {
    return this.process('query-frontend').url;
  }

  /** The redis-server of a cluster started with `redis: true`. */
  get redis(): LocalRedis | undefined {
    return this.redisServer;
  }

  /** Polls the distributor's ring page until partitions 0..n-1 are ACTIVE (ingesters register them PENDING). */
  async waitPartitionsActive(n: number, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = 'no answer yet';
    while (Date.now() < deadline) {
      try {
        const res = await fetch(`${this.distributorUrl}/ingester/partition-ring`, {
          headers: { accept: 'application/json' },
          signal: AbortSignal.timeout(2000),
        });
        const ring = (await res.json()) as { source: string; partitions: { id: number; state: string }[] };
        const active = ring.partitions.filter((p) => p.state === 'ACTIVE').map((p) => p.id);
        if (ring.source === 'kv' && Array.from({ length: n }, (_, i) => i).every((i) => active.includes(i))) return;
        last = `source ${ring.source}, ${ring.partitions.map((p) => `${p.id}:${p.state}`).join(' ')}`;
      } catch (err) {
        last = (err as Error).message;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`partitions 0..${n - 1} not ACTIVE in the ring after ${timeoutMs}ms (last: ${last})`);
  }

  process(name: string): AppProcess {
    const p = this.processes.get(name);
    if (!p) throw new Error(`no process named ${name}; have ${[...this.processes.keys()].join(', ')}`);
    return p;
  }

  ingesters(zone?: string): AppProcess[] {
    return [...this.processes.values()].filter((p) => p.opts.target === 'ingester' && (zone === undefined || p.name.startsWith(`ingester-zone-${zone}-`)));
  }

  async stop(): Promise<void> {
    await Promise.all([...this.processes.values()].map((p) => p.kill('SIGTERM')));
    await this.kafka.stop();
    await this.redisServer?.kill('SIGTERM');
  }

  private killAllNow(): void {
    for (const p of this.processes.values()) p.killNow();
    this.redisServer?.killNow();
  }
}

/** What every process of a cluster is given. */
interface CommonArgs {
  opts: LocalClusterOptions;
  kafka: string[];
  /** The ring in redis, when the cluster has one. */
  ring: string[];
  bucket: string[];
}

function logFile(c: CommonArgs, name: string): string {
  return join(c.opts.dataDir, 'logs', `${name}.log`);
}

function ingester(c: CommonArgs, id: string, httpPort: number, grpcPort: number): AppProcess {
  return new AppProcess({
    name: id,
    target: 'ingester',
    httpPort,
    logFile: logFile(c, id),
    args: [
      ...c.kafka,
      `-ingester.ring.instance-id=${id}`,
      `-server.http-listen-port=${httpPort}`,
      `-server.grpc-listen-port=${grpcPort}`,
      // Each ingester its own local blocks directory; all of them one bucket.
      `-blocks-storage.tsdb.dir=${join(c.opts.dataDir, id, 'tsdb')}`,
      ...c.bucket,
      ...c.ring,
      ...(c.opts.extraArgs?.ingester ?? []),
    ],
  });
}

function distributor(c: CommonArgs, name: string, httpPort: number): AppProcess {
  return new AppProcess({
    name,
    target: 'distributor',
    httpPort,
    logFile: logFile(c, name),
    args: [...c.kafka, `-server.http-listen-port=${httpPort}`, ...c.ring, ...(c.opts.extraArgs?.distributor ?? [])],
  });
}

function querier(c: CommonArgs, name: string, httpPort: number, grpcAddresses: string[], schedulerAddress: string | undefined): AppProcess {
  return new AppProcess({
    name,
    target: 'querier',
    httpPort,
    logFile: logFile(c, name),
    args: [
      ...(schedulerAddress ? [`-querier.scheduler-address=${schedulerAddress}`, `-querier.id=${name}`] : []),
      // The querier reads the partitions' last produced offsets for X-Read-Consistency: strong.
      ...c.kafka,
      `-server.http-listen-port=${httpPort}`,
      `-querier.ingester-addresses=${grpcAddresses.join(',')}`,
      ...c.bucket,
      ...c.ring,
      ...(c.opts.extraArgs?.querier ?? []),
    ],
  });
}

function compactor(c: CommonArgs, httpPort: number): AppProcess {
  return new AppProcess({
    name: 'compactor',
    target: 'compactor',
    httpPort,
    logFile: logFile(c, 'compactor'),
    args: [
      `-server.http-listen-port=${httpPort}`,
      `-compactor.data-dir=${join(c.opts.dataDir, 'compactor')}`,
      ...c.bucket,
      ...(c.opts.extraArgs?.compactor ?? []),
    ],
  });
}

function queryScheduler(c: CommonArgs, httpPort: number, grpcPort: number): AppProcess {
  return new AppProcess({
    name: 'query-scheduler',
    target: 'query-scheduler',
    httpPort,
    logFile: logFile(c, 'query-scheduler'),
    args: [`-server.http-listen-port=${httpPort}`, `-server.grpc-listen-port=${grpcPort}`, ...(c.opts.extraArgs?.['query-scheduler'] ?? [])],
  });
}

function queryFrontend(c: CommonArgs, httpPort: number, grpcPort: number, schedulerAddress: string): AppProcess {
  return new AppProcess({
    name: 'query-frontend',
    target: 'query-frontend',
    httpPort,
    logFile: logFile(c, 'query-frontend'),
    args: [
      `-server.http-listen-port=${httpPort}`,
      `-server.grpc-listen-port=${grpcPort}`,
      `-query-frontend.scheduler-address=${schedulerAddress}`,
      ...(c.opts.extraArgs?.['query-frontend'] ?? []),
    ],
  });
}
