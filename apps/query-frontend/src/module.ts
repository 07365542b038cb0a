// The query-frontend module: the Prometheus read API's front door. It authenticates each query,
// enqueues it with the query-scheduler and answers what the querier that ran it sent back to
// this process' gRPC server.

import { registerQueryFrontend } from '@strata/query-frontend';
import { FrontendTransport } from '@strata/query-scheduler';
import type { Service } from '@strata/service';
import type { Strata } from '@strata/runtime';

export function initQueryFrontend(t: Strata): Service[] {
  const { config } = t;
  if (t.runs('querier')) throw new Error('-target: query-frontend and querier in one process are not supported yet; run them as separate processes');
  const schedulerAddress = config['query-frontend.scheduler-address'];
  if (schedulerAddress === '') throw new Error('-target=query-frontend needs -query-frontend.scheduler-address (the query-scheduler it enqueues queries with)');
  // Where queriers send answers: this process' gRPC server, its port known once bound.
  let grpcPort = 0;
  const host = config['query-frontend.instance-addr'] || config['server.grpc-listen-address'];
  const transport = new FrontendTransport({ schedulerAddress, frontendAddress: () => `${host}:${grpcPort}` });
  transport.addTo(t.grpc.server);
  const page = registerQueryFrontend(t.http, {
    transport,
    prefixes: ['/api/v1', '/prometheus/api/v1'],
    multitenancyEnabled: config['auth.multitenancy-enabled'],
    auth: t.auth,
    logger: t.logger,
    limits: (tenant) => {
      const l = t.overrides.forTenant(tenant);
      return {
        maxQueriers: config['query-frontend.max-queriers-per-tenant'],
        maxTotalQueryLengthMs: l.maxTotalQueryLengthMs,
        blockedQueries: l.blockedQueries,
      };
    },
    registry: t.registry,
    logQueriesLongerThanMs: config['query-frontend.log-queries-longer-than'],
    timeoutMs: config['querier.timeout'],
  });
  t.statusPages.push(page);
  t.endpoints.push('query-frontend $BASE/prometheus/api/v1/query');
  t.readiness.push(() => (grpcPort === 0 ? 'the query-frontend has not bound its gRPC server yet' : undefined));
  return [
    {
      name: 'query-frontend',
      start: async () => {
        grpcPort = await t.grpc.start();
        t.logger.info(`query-frontend enqueues queries with the query-scheduler at ${schedulerAddress}; queriers answer on grpc://${host}:${grpcPort}`);
      },
      stop: async () => {
        transport.stop();
        await t.grpc.stop();
      },
    },
  ];
}
