// What the modules share: the parsed config, the process' logger, metrics,
// HTTP server and tracer, and what each module built for the ones after it.
// Modules fill it in dependency order (the binary's registry, apps/strata/src/modules.ts);
// nothing is built twice. It holds parts, never logic of its own beyond /ready's answer.

import type { FastifyInstance } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import type { Distributor } from '@strata/distributor';
import type { Ingester, IngesterIdentity } from '@strata/ingester';
import { kafkaSecurity, type KafkaSecurity } from '@strata/kafka';
import type { Querier } from '@strata/model';
import type { Engine } from '@strata/promql';
import type { Overrides } from '@strata/limits';
import type { Bucket } from '@strata/objstore';
import type { KvClient } from '@strata/ring';
import type { Deletions } from '@strata/storegateway';
import { createHttpServer, createLogger, createMetricsRegistry, type Authenticator, type Logger, type MemoryBudget, type ServiceState } from '@strata/service';
import type { StatusPage, UiLink } from '@strata/ui';
import { Tracing } from '@strata/tracing';
import type { StrataConfig } from './config.ts';
import { ProcessGrpc } from './process-grpc.ts';

/** What the binary's parse of the flags hands the process object. */
export interface ProcessConfig {
  config: StrataConfig;
  /** -target, split: the modules asked for (their dependencies come on top). */
  targets: readonly string[];
  /** Whether the flags name a Kafka to use (otherwise -target=all starts one under -data-dir). */
  externalKafka: boolean;
  /** -server.memory-limit, or what bounds the process when it is 0. */
  budget: MemoryBudget;
}

export class Strata {
  readonly config: StrataConfig;
  readonly targets: readonly string[];
  readonly externalKafka: boolean;
  /** -server.memory-limit, or what bounds the process when it is 0. */
  readonly budget: MemoryBudget;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly tracing: Tracing;
  readonly http: FastifyInstance;
  /** Why this process is not ready, asked in order by /ready (the service manager's state comes first). */
  readonly readiness: (() => string | undefined)[] = [];
  /** What each module serves over HTTP, for the startup line. */
  readonly endpoints: string[] = [];
  /** The UI's status pages and links, added by the modules that own the data (read per request). */
  readonly statusPages: StatusPage[] = [];
  readonly uiLinks: UiLink[] = [];
  /** Set by the querier module: the Prometheus API the query page uses. */
  queryApi: { apiPrefix: string; multitenancy: boolean } | undefined;
  /** Every service's state, once main.ts built the service manager. */
  serviceStates: () => ServiceState[] = () => [];
  /** The modules this process runs, dependencies included, in start order. */
  readonly modules: readonly string[];

  /** Bootstrap brokers: the flag's, or the embedded broker's once the kafka module started it. */
  brokers: string[];
  /** SASL, TLS and rack of every Kafka client of this process (-ingest-storage.kafka.sasl-*, tls-*, client-rack). */
  readonly kafkaSecurity: KafkaSecurity;
  overrides!: Overrides;
  auth: Authenticator | undefined;
  kv!: KvClient;
  bucket!: Bucket;
  /** Delete requests and tenant deletion marks in the bucket, one cache per process (querier and compactor share it). */
  deletions: Deletions | undefined;
  /** Set by the querier module: its PromQL engine and the reads it serves (deletion filter applied), for the ruler. */
  queryEngine: { engine: Engine; querier(strong: boolean): Promise<Querier> } | undefined;
  /** Set by the distributor module: pushes in this process go through it (tenant limits apply). */
  distributor: Distributor | undefined;
  /** The ingester when it runs in this process: the querier reads it directly. */
  localIngester: { ingester: Ingester; identity: IngesterIdentity } | undefined;
  private processGrpc: ProcessGrpc | undefined;

  constructor(parsed: ProcessConfig, modules: readonly string[]) {
    this.modules = modules;
    this.config = parsed.config;
    this.targets = parsed.targets;
    this.externalKafka = parsed.externalKafka;
    this.budget = parsed.budget;
    const alone = this.targets.length === 1 ? this.targets[0] : undefined;
    const name = alone === 'all' || alone === undefined ? 'strata' : alone === 'ingester' ? this.config['ingester.ring.instance-id'] : alone;
    this.logger = createLogger(name, this.config['log.level'], undefined, this.config['log.format']);
    this.registry = createMetricsRegistry({
      component: this.targets.join(','),
      ...(alone === 'ingester' ? { instance_id: this.config['ingester.ring.instance-id'] } : {}),
    });
    new Gauge({
      name: 'strata_memory_budget_bytes',
      help: 'The memory this process may use (-server.memory-limit, else its cgroup limit or 75% of the machine).',
      registers: [this.registry],
    }).set(this.budget.bytes);
    this.tracing = new Tracing({
      serviceName: name === this.config['ingester.ring.instance-id'] ? 'ingester' : name,
      config: this.config,
      instanceId: this.runs('ingester') ? this.config['ingester.ring.instance-id'] : undefined,
      logger: this.logger,
    });
    this.kafkaSecurity = kafkaSecurity(this.config);
    this.brokers = this.config['ingest-storage.kafka.address']
      .split(',')
      .map((b) => b.trim())
      .filter((b) => b !== '');
    this.http = createHttpServer({
      logger: this.logger,
      registry: this.registry,
      readiness: { notReadyReason: () => this.notReadyReason() },
      bodyLimitBytes: this.config['distributor.max-recv-msg-size'],
    });
  }

  /** The gRPC server of the modules other than the ingester, built when first asked for. */
  get grpc(): ProcessGrpc {
    this.processGrpc ??= new ProcessGrpc(this.config['server.grpc-listen-address'], this.config['server.grpc-listen-port']);
    return this.processGrpc;
  }

  /** Whether `module` is in this process (known before any module is built). */
  runs(module: string): boolean {
    return this.modules.includes(module);
  }

  /** Why this process is not ready (/ready's answer), undefined when it is. */
  notReadyReason(): string | undefined {
    for (const r of this.readiness) {
      const reason = r();
      if (reason !== undefined) return reason;
    }
    return undefined;
  }
}
