// The HTTP server every app shares: /metrics, /ready, /healthz, raw protobuf bodies,
// and a one-line startup log saying where it listens.

import Fastify, { type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import { OPENMETRICS_CONTENT_TYPE, PROMETHEUS_TEXT_CONTENT_TYPE, negotiateFormat, renderMetrics } from './exposition.ts';

export interface Readiness {
  /** undefined when ready, otherwise why not. */
  notReadyReason(): string | undefined;
}

export interface HttpServerOptions {
  logger: Logger;
  registry: Registry;
  readiness: Readiness;
  bodyLimitBytes?: number;
}

export function createHttpServer(opts: HttpServerOptions): FastifyInstance {
  const app = Fastify({ bodyLimit: opts.bodyLimitBytes ?? 64 << 20, logger: false, forceCloseConnections: true });
  for (const type of ['application/x-protobuf', 'application/octet-stream']) {
    app.addContentTypeParser(type, { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  }
  // OpenMetrics (with exemplars) for scrapers that ask for it, as Prometheus does; Prometheus text otherwise.
  app.get('/metrics', async (req, reply) => {
    const format = negotiateFormat(req.headers.accept);
    reply.header('content-type', format === 'openmetrics' ? OPENMETRICS_CONTENT_TYPE : PROMETHEUS_TEXT_CONTENT_TYPE);
    return renderMetrics(opts.registry, format);
  });
  // Liveness: the process serves HTTP. Never asks Kafka, Redis or the bucket (/metrics and /ready may:
  // the partition lag, the ring), so a slow dependency never gets every replica restarted at once.
  app.get('/healthz', async (_req, reply) => reply.code(200).type('text/plain').send('ok\n'));
  app.get('/ready', async (_req, reply) => {
    const reason = opts.readiness.notReadyReason();
    if (reason === undefined) return reply.code(200).type('text/plain').send('ready\n');
    return reply.code(503).type('text/plain').send(`not ready: ${reason}\n`);
  });
  return app;
}

/** Listens and returns the bound port (port 0 picks a free one). */
export async function listen(app: FastifyInstance, host: string, port: number): Promise<number> {
  await app.listen({ host, port });
  const addr = app.server.address();
  return typeof addr === 'object' && addr ? addr.port : port;
}
