// Remote-write routes: POST /api/v1/push (Mimir's path) and /api/v1/write.
// Every error is one line of text with the status the sender acts on.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { Histogram, type Registry } from 'prom-client';
import { TenantError, tenantFromHeader, type Logger } from '@strata/service';
import { DistributorError } from './errors.ts';
import type { Distributor } from './distributor.ts';

export interface PushRoutesOptions {
  distributor: Distributor;
  multitenancyEnabled: boolean;
  logger: Logger;
  registry: Registry;
  maxBodyBytes: number;
}

export function registerPushRoutes(app: FastifyInstance, opts: PushRoutesOptions): void {
  const latency = new Histogram({
    name: 'strata_distributor_push_duration_seconds',
    help: 'Push request latency by status code.',
    labelNames: ['status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [opts.registry],
  });
  const handler = async (req: { headers: Record<string, string | string[] | undefined>; body: unknown }, reply: FastifyReply) => {
    const end = latency.startTimer();
    let tenant: string | undefined;
    try {
      tenant = tenantFromHeader(req.headers['x-scope-orgid'], opts.multitenancyEnabled);
      if (!Buffer.isBuffer(req.body)) {
        throw new DistributorError('err-strata-bad-request', 400, 'expected a snappy-compressed protobuf body (Content-Type: application/x-protobuf)');
      }
      const result = await opts.distributor.push({
        tenant,
        body: req.body,
        contentType: header(req.headers['content-type']),
        contentEncoding: header(req.headers['content-encoding']),
      });
      end({ status: result.status });
      if (result.message) return reply.code(result.status).type('text/plain').send(result.message + '\n');
      return reply.code(result.status).send();
    } catch (err) {
      const e =
        err instanceof DistributorError
          ? err
          : err instanceof TenantError
            ? new DistributorError(err.code, err.status, err.message)
            : new DistributorError('err-strata-internal', 500, String(err));
      end({ status: e.status });
      const log = e.status >= 500 ? opts.logger.warn.bind(opts.logger) : opts.logger.debug.bind(opts.logger);
      log({ tenant, code: e.code, status: e.status }, e.message);
      return reply.code(e.status).type('text/plain').send(e.message + '\n');
    }
  };
  // Any content type reaches the handler as bytes; the remote-write codec decides (415 for the wrong one).
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: opts.maxBodyBytes }, (_req, body, done) => done(null, body));
    scope.post('/api/v1/push', handler);
    scope.post('/api/v1/write', handler);
  });
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
