// A whole Strata cluster on loopback for tests and drills: real Kafka,
// distributor(s), ingesters in two zones (ingester-zone-<z>-<n> per
// partition n) and a querier, each its own process.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTopic, startKafka, type LocalKafka } from '@strata/local-kafka';
import { AppProcess } from './app-process.ts';
import { freePorts } from './free-ports.ts';

export interface LocalClusterOptions {
  dataDir: string;
  partitions?: number;
  zones?: string[];
  kafkaBrokers?: 1 | 3;
  distributors?: number;
  topic?: string;
  /** Extra flags per app kind. */
  extraArgs?: Partial<Record<'distributor' | 'ingester' | 'querier', string[]>>;
  log?: (line: string) => void;
}

export class LocalCluster {
  private constructor(
    readonly kafka: LocalKafka,
    readonly processes: Map<string, AppProcess>,
    readonly topic: string,
  ) {}

  static async start(opts: LocalClusterOptions): Promise<LocalCluster> {
    const partitions = opts.partitions ?? 2;
    const zones = opts.zones ?? ['a', 'b'];
    const topic = opts.topic ?? 'ingest';
    const brokerCount = opts.kafkaBrokers ?? 1;
    const log = opts.log ?? (() => undefined);
    mkdirSync(join(opts.dataDir, 'logs'), { recursive: true });
    const kafka = await startKafka({ dataDir: join(opts.dataDir, 'kafka'), brokers: brokerCount, log });
    const processes = new Map<string, AppProcess>();
    const cluster = new LocalCluster(kafka, processes, topic);
    const cleanup = () => cluster.killAllNow();
    process.once('exit', cleanup);
    try {
      await ensureTopic({
        brokers: kafka.brokers,
        topic,
        partitions,
        replicationFactor: brokerCount,
        minInsyncReplicas: brokerCount === 3 ? 2 : undefined,
      });
      const kafkaArgs = [`-ingest-storage.kafka.address=${kafka.brokers.join(',')}`, `-ingest-storage.kafka.topic=${topic}`];
      const logFile = (name: string) => join(opts.dataDir, 'logs', `${name}.log`);
      const ingesterIds = zones.flatMap((z) => Array.from({ length: partitions }, (_, n) => `ingester-zone-${z}-${n}`));
      const distributorNames = Array.from({ length: opts.distributors ?? 1 }, (_, i) => (i === 0 ? 'distributor' : `distributor-${i}`));
      const ports = await freePorts(ingesterIds.length * 2 + distributorNames.length + 1);
      const grpcAddresses: string[] = [];
      for (const id of ingesterIds) {
        const [httpPort, grpcPort] = [ports.pop()!, ports.pop()!];
        grpcAddresses.push(`${id}=127.0.0.1:${grpcPort}`);
        processes.set(
          id,
          new AppProcess({
            name: id,
            app: 'ingester',
            httpPort,
            logFile: logFile(id),
            args: [
              ...kafkaArgs,
              `-ingester.ring.instance-id=${id}`,
              `-server.http-listen-port=${httpPort}`,
              `-server.grpc-listen-port=${grpcPort}`,
              ...(opts.extraArgs?.ingester ?? []),
            ],
          }),
        );
      }
      for (const name of distributorNames) {
        const httpPort = ports.pop()!;
        processes.set(
          name,
          new AppProcess({
            name,
            app: 'distributor',
            httpPort,
            logFile: logFile(name),
            args: [...kafkaArgs, `-server.http-listen-port=${httpPort}`, ...(opts.extraArgs?.distributor ?? [])],
          }),
        );
      }
      const querierPort = ports.pop()!;
      processes.set(
        'querier',
        new AppProcess({
          name: 'querier',
          app: 'querier',
          httpPort: querierPort,
          logFile: logFile('querier'),
          args: [
            `-server.http-listen-port=${querierPort}`,
            `-querier.ingester-addresses=${grpcAddresses.join(',')}`,
            ...(opts.extraArgs?.querier ?? []),
          ],
        }),
      );
      for (const p of processes.values()) p.start();
      await Promise.all([...processes.values()].map((p) => p.waitReady()));
      log(`cluster ready: distributor ${cluster.distributorUrl}, querier ${cluster.querierUrl}`);
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  get distributorUrl(): string {
    return this.process('distributor').url;
  }

  get querierUrl(): string {
    return this.process('querier').url;
  }

  process(name: string): AppProcess {
    const p = this.processes.get(name);
    if (!p) throw new Error(`no process named ${name}; have ${[...this.processes.keys()].join(', ')}`);
    return p;
  }

  ingesters(zone?: string): AppProcess[] {
    return [...this.processes.values()].filter((p) => p.opts.app === 'ingester' && (zone === undefined || p.name.startsWith(`ingester-zone-${zone}-`)));
  }

  async stop(): Promise<void> {
    await Promise.all([...this.processes.values()].map((p) => p.kill('SIGTERM')));
    await this.kafka.stop();
  }

  private killAllNow(): void {
    for (const p of this.processes.values()) p.killNow();
  }
}
