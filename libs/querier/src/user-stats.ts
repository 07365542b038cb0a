// Mimir's /api/v1/user_stats: the requesting tenant's series in the ingesters
// and its ingestion rate, summed over one replica per partition. The answer is
// Mimir's bare JSON object (no Prometheus envelope).

import type { FastifyInstance } from 'fastify';
import { StrataError, asStrataError } from '@strata/errors';
import { TenantError, tenantFromHeader, type Authenticator } from '@strata/service';
import { PROMETHEUS_API_ERRORS } from './errors.ts';

export interface UserStats {
  numSeries: number;
  ingestionRate: number;
  apiIngestionRate: number;
  ruleIngestionRate: number;
}

/** One partition's numbers for a tenant (an ingester that reads it). */
export interface UserStatsSource {
  userStats(tenant: string): UserStats | Promise<UserStats>;
}

export interface UserStatsApiOptions {
  /** One source per partition (its serving replica); their answers are summed. */
  sources: () => readonly UserStatsSource[];
  multitenancyEnabled: boolean;
  auth?: Authenticator;
  /** Default: /api/v1 and /prometheus/api/v1. */
  prefixes?: readonly string[];
}

export async function sumUserStats(sources: readonly UserStatsSource[], tenant: string): Promise<UserStats> {
  const total: UserStats = { numSeries: 0, ingestionRate: 0, apiIngestionRate: 0, ruleIngestionRate: 0 };
  for (const s of await Promise.all(sources.map((src) => src.userStats(tenant)))) {
    total.numSeries += s.numSeries;
    total.ingestionRate += s.ingestionRate;
    total.apiIngestionRate += s.apiIngestionRate;
    total.ruleIngestionRate += s.ruleIngestionRate;
  }
  return total;
}

export function registerUserStatsApi(app: FastifyInstance, opts: UserStatsApiOptions): void {
  for (const prefix of opts.prefixes ?? ['/api/v1', '/prometheus/api/v1']) {
    app.get(`${prefix}/user_stats`, async (req, reply) => {
      try {
        const tenant = tenantFromHeader(req.headers['x-scope-orgid'], opts.multitenancyEnabled);
        opts.auth?.authenticate(tenant, req.headers.authorization);
        const sources = opts.sources();
        if (sources.length === 0) {
          throw new StrataError(
            'user-stats-unavailable',
            'unavailable',
            'no ingester in this process to ask for user stats; ask a querier that runs with -target=all or beside an ingester',
          );
        }
        return reply.send(await sumUserStats(sources, tenant));
      } catch (err) {
        const e = asStrataError(err);
        const { errorType, status } = PROMETHEUS_API_ERRORS[e.kind];
        if (err instanceof TenantError && err.challenge !== undefined) reply.header('WWW-Authenticate', err.challenge);
        return reply.code(status).send({ status: 'error', errorType, error: e.message });
      }
    });
  }
}
