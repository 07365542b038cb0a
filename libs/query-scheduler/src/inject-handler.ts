// A querier worker's handler that runs a query's HTTP request against the querier's own HTTP
// routes in process (fastify's inject): the query is answered exactly as if it had been sent
// to the querier directly.

import type { FastifyInstance, HTTPMethods } from 'fastify';
import type { QueryHandler } from './querier-worker.ts';
import { headersFromWire, headersToWire } from './wire.ts';

export function injectingHandler(app: FastifyInstance): QueryHandler {
  return async (_tenant, req) => {
    const res = await app.inject({
      method: req.method as HTTPMethods,
      url: req.url,
      headers: headersFromWire(req.headers),
      ...(req.body.length > 0 ? { payload: req.body } : {}),
    });
    return { code: res.statusCode, headers: headersToWire(res.headers), body: res.rawPayload };
  };
}
