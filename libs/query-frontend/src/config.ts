// Query-frontend flags (Mimir's names).

import { z } from 'zod';
import { duration } from '@strata/service';

export const queryFrontendConfigShape = {
  'query-frontend.scheduler-address': z
    .string()
    .default('')
    .describe("host:port of the query-scheduler's gRPC server the frontend enqueues queries with.")
    .meta({ yaml: 'frontend.scheduler_address' }),
  'query-frontend.instance-addr': z
    .string()
    .default('')
    .describe('Where queriers reach this frontend (host; its gRPC port is added); empty: -server.grpc-listen-address.')
    .meta({ yaml: 'frontend.instance_addr' }),
  'query-frontend.log-queries-longer-than': duration('0s')
    .describe('A query that takes longer leaves one log line (tenant, query, range, step, wall and queue time, querier); 0s: none.')
    .meta({ yaml: 'frontend.log_queries_longer_than' }),
  'query-frontend.max-queriers-per-tenant': z.coerce
    .number()
    .int()
    .nonnegative()
    .default(0)
    .describe("Queriers one tenant's queries may use (a shuffle shard of them); 0: all.")
    .meta({ yaml: 'limits.max_queriers_per_tenant' }),
};

export type QueryFrontendConfig = z.infer<z.ZodObject<typeof queryFrontendConfigShape>>;
