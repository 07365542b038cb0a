// The module registry (Mimir's pkg/mimir/modules.go): every module, what it
// needs, and the one place each shared part is built from the config.

import { resolve } from 'node:path';
import { describeKafkaSecurity } from '@strata/kafka';
import { ensureTopic, startKafka, type LocalKafka } from '@strata/local-kafka';
import { Overrides, overridesPage } from '@strata/limits';
import { createBucket } from '@strata/objstore';
import { createKv } from '@strata/ring';
import { createAuthenticator, listen, type Service } from '@strata/service';
import { registerUi } from '@strata/ui';
import { configPage, failureSignal, servicesPage, type ModuleInit, type Strata, type StrataModule } from '@strata/runtime';
import { initCompactor } from '@strata/app-compactor';
import { initDistributor } from '@strata/app-distributor';
import { initIngester } from '@strata/app-ingester';
import { initQuerier } from '@strata/app-querier';
import { initQueryFrontend } from '@strata/app-query-frontend';
import { initQueryScheduler } from '@strata/app-query-scheduler';
import { initRuler } from '@strata/app-ruler';

export const MODULES: Record<string, StrataModule> = {
  server: { internal: true, init: initServer },
  /** The operator's web UI on the HTTP port: pages for whatever else this process runs. */
  ui: { internal: true, deps: ['server'], init: initUi },
  tracing: { internal: true, init: (t) => [{ name: 'tracing', start: () => t.tracing.start(), stop: () => t.tracing.stop() }] },
  'runtime-config': { internal: true, init: initRuntimeConfig },
  auth: { internal: true, init: initAuth },
  'ring-kv': { internal: true, init: initRingKv },
  kafka: { internal: true, init: initKafka },
  bucket: { internal: true, init: initBucket },
  distributor: { deps: ['server', 'ui', 'tracing', 'runtime-config', 'auth', 'ring-kv', 'kafka'], init: initDistributor },
  ingester: { deps: ['server', 'ui', 'tracing', 'runtime-config', 'ring-kv', 'kafka', 'bucket'], init: initIngester },
  querier: { deps: ['server', 'ui', 'tracing', 'runtime-config', 'auth', 'ring-kv', 'kafka', 'bucket'], after: ['ingester'], init: initQuerier },
  /** The per-tenant fair queue between query-frontends and querier workers (-querier.scheduler-address). */
  'query-scheduler': { deps: ['server', 'ui'], init: initQueryScheduler },
  /** The read API's front door: queries go through a query-scheduler to queriers (not in `all` yet). */
  'query-frontend': { deps: ['server', 'ui', 'runtime-config', 'auth'], init: initQueryFrontend },
  compactor: { deps: ['server', 'ui', 'runtime-config', 'auth', 'bucket'], init: initCompactor },
  /** Rules evaluate through this process' querier; output goes through its distributor (or -ruler.push-url). */
  ruler: { deps: ['server', 'tracing', 'runtime-config', 'auth', 'ring-kv', 'bucket', 'querier'], after: ['distributor'], init: initRuler },
  /** The single process: both zones are one failure domain here, so it runs one ingester (zone a). */
  all: { deps: ['distributor', 'ingester', 'querier', 'compactor', 'ruler'] },
};

/** The HTTP server listens first and closes last, so /ready tells the truth from start to exit. */
function initServer(t: Strata): ReturnType<ModuleInit> {
  return [
    {
      name: 'server',
      start: async () => {
        const host = t.config['server.http-listen-address'];
        const port = await listen(t.http, host, t.config['server.http-listen-port']);
        const base = `http://${host}:${port}`;
        t.logger.info(
          { port, targets: t.targets },
          `Strata (${t.targets.join(',')}) listening on ${base}: ${t.endpoints.map((e) => e.replaceAll('$BASE', base)).join(', ')}, ready ${base}/ready, metrics ${base}/metrics, web UI ${base}/`,
        );
      },
      stop: () => t.http.close(),
    },
  ];
}

/** Pages are read per request, so the modules built after this one still show. */
function initUi(t: Strata): ReturnType<ModuleInit> {
  t.statusPages.push(
    servicesPage(
      () => t.serviceStates(),
      () => t.notReadyReason(),
      t.budget,
    ),
    configPage(t.config),
  );
  t.uiLinks.push({ label: 'Metrics (/metrics)', href: '/metrics' }, { label: 'Readiness (/ready)', href: '/ready' });
  registerUi(t.http, {
    targets: t.targets,
    modules: t.modules,
    endpoints: () => t.endpoints,
    pages: () => t.statusPages,
    links: () => t.uiLinks,
    query: () => t.queryApi,
  });
  return [];
}

function initRuntimeConfig(t: Strata): ReturnType<ModuleInit> {
  t.overrides = Overrides.fromFlags(t.config, { logger: t.logger, registry: t.registry });
  t.statusPages.push(overridesPage(t.overrides));
  return [{ name: 'runtime-config', start: () => t.overrides.start(), stop: () => t.overrides.stop() }];
}

function initAuth(t: Strata): ReturnType<ModuleInit> {
  const auth = createAuthenticator(t.config, { logger: t.logger, registry: t.registry });
  t.auth = auth;
  return auth ? [{ name: 'auth-tokens', start: () => auth.start(), stop: () => auth.stop() }] : [];
}

function initRingKv(t: Strata): ReturnType<ModuleInit> {
  t.kv = createKv(t.config);
  return [{ name: 'ring-kv', start: () => t.kv.start(), stop: () => t.kv.stop() }];
}

function initBucket(t: Strata): ReturnType<ModuleInit> {
  t.bucket = createBucket(t.config);
  return [{ name: 'bucket', start: async () => undefined, stop: () => t.bucket.close() }];
}

/**
 * Kafka itself only for the single process without -ingest-storage.kafka.address:
 * a local broker under <data-dir>/kafka, restarted if it dies (/ready is false
 * meanwhile); if it cannot be restarted the process stops with exit 1.
 */
async function initKafka(t: Strata): Promise<Service[]> {
  const topic = t.config['ingest-storage.kafka.topic'];
  if (!t.targets.includes('all')) return [];
  if (t.externalKafka) {
    t.logger.info({ brokers: t.brokers }, `using external Kafka at ${t.brokers.join(',')} (${describeKafkaSecurity(t.kafkaSecurity)})`);
    await ensureTopic({ brokers: t.brokers, topic, partitions: 1, replicationFactor: 1, security: t.kafkaSecurity });
    return [];
  }
  const dataDir = resolve(t.config['data-dir'], 'kafka');
  let restarting: string | undefined;
  const failure = failureSignal();
  let kafka: LocalKafka | undefined;
  const restart = async (exit: { code: number | null; signal: string | null }) => {
    restarting = `the embedded Kafka broker exited (code ${exit.code}, signal ${exit.signal}); restarting it`;
    t.logger.error({ exit }, restarting);
    try {
      await kafka!.startBroker(0);
      restarting = undefined;
      t.logger.info({ brokers: t.brokers }, 'embedded Kafka broker restarted');
    } catch (err) {
      failure.fail(new Error(`the embedded Kafka broker exited and could not be restarted: ${(err as Error).message}`));
    }
  };
  t.logger.info(`starting a local Apache Kafka broker (data in ${dataDir})`);
  kafka = await startKafka({ dataDir, brokers: 1, log: (line) => t.logger.debug(line), onUnexpectedExit: (_node, exit) => void restart(exit) });
  t.brokers = kafka.brokers;
  t.logger.info({ brokers: t.brokers }, `local Kafka broker ready at ${t.brokers.join(',')}`);
  await ensureTopic({ brokers: t.brokers, topic, partitions: 1, replicationFactor: 1 });
  t.readiness.push(() => restarting);
  return [{ name: 'kafka', start: async () => undefined, stop: () => kafka.stop(), watch: failure.watch }];
}
