// The ingester's own HTTP endpoints (Mimir's paths).

import type { FastifyInstance } from 'fastify';
import type { Logger } from '@strata/service';
import type { Ingester } from './ingester.ts';

export function registerIngesterRoutes(app: FastifyInstance, opts: { ingester: Ingester; logger: Logger }): void {
  // Cuts every head into blocks and ships them. ?wait=true answers when done (Mimir answers at once otherwise).
  app.post('/ingester/flush', async (req, reply) => {
    const wait = (req.query as Record<string, string | undefined>).wait === 'true';
    const run = opts.ingester.flush();
    if (!wait) {
      run.catch((err: Error) => opts.logger.error({ err: err.message }, 'flush failed'));
      return reply.code(204).send();
    }
    try {
      await run;
      return reply.code(204).send();
    } catch (err) {
      return reply
        .code(500)
        .type('text/plain')
        .send(`flush failed: ${(err as Error).message}\n`);
    }
  });
}
