// Mimir's block-upload API on the compactor's HTTP port, the routes `mimirtool backfill` calls:
//   POST /api/v1/upload/block/{block}/start            body: the block's meta.json
//   POST /api/v1/upload/block/{block}/files?path=...   body: index or chunks/NNNNNN, streamed
//   POST /api/v1/upload/block/{block}/finish
//   GET  /api/v1/upload/block/{block}/check            {"result": "uploading|validating|failed|complete", "error"?}
// Errors are text/plain one-liners with Mimir's statuses (400, 404, 409, 413, 422, 429).

import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { asStrataError } from '@strata/errors';
import { ADMIN_HTTP_STATUS, tenantFromHeader, type Authenticator, type Logger } from '@strata/service';
import { BlockUploadError, MAX_UPLOAD_META_BYTES } from './block-upload-meta.ts';
import type { BlockUploads } from './block-uploads.ts';

export interface BlockUploadApiOptions {
  uploads: BlockUploads;
  multitenancyEnabled: boolean;
  auth?: Authenticator;
  logger: Logger;
}

type BlockRequest = FastifyRequest<{ Params: { block: string }; Querystring: { path?: string } }>;
type Step = (tenant: string, req: BlockRequest, body: Readable | undefined) => Promise<unknown>;

export function registerBlockUploadApi(app: FastifyInstance, opts: BlockUploadApiOptions): void {
  const tenantOf = (req: FastifyRequest) => {
    const tenant = tenantFromHeader(req.headers['x-scope-orgid'], opts.multitenancyEnabled);
    opts.auth?.authenticate(tenant, req.headers.authorization);
    return tenant;
  };
  const fail = (reply: FastifyReply, req: BlockRequest, err: unknown) => {
    const e = asStrataError(err);
    if (e.kind === 'internal') opts.logger.error({ block: req.params.block, url: req.url, err: e.message }, 'block upload request failed');
    return reply.code(ADMIN_HTTP_STATUS[e.kind]).type('text/plain').send(`${e.message}\n`);
  };
  // The bodies are the block's own bytes, whatever Content-Type the client sends (mimirtool sends
  // none): this scope hands them over as the raw stream, never parsed nor held whole in memory.
  void app.register((scope, _opts, done) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, payload, next) => next(null, payload));
    const route = (method: 'GET' | 'POST', step: string, handle: Step) =>
      scope.route<{ Params: { block: string }; Querystring: { path?: string } }>({
        method,
        url: `/api/v1/upload/block/:block/${step}`,
        handler: async (req, reply) => {
          const body = req.body as Readable | undefined;
          try {
            const answer = await handle(tenantOf(req), req, body);
            return answer === undefined ? reply.code(200).send() : reply.code(200).send(answer);
          } catch (err) {
            // What the client still sends is drained, so the connection stays usable.
            body?.resume();
            return fail(reply, req, err);
          }
        },
      });
    route('POST', 'start', async (tenant, req, body) => {
      opts.uploads.checkRequest(tenant, req.params.block);
      await opts.uploads.start(tenant, req.params.block, await readSmallBody(body, MAX_UPLOAD_META_BYTES));
    });
    route('POST', 'files', (tenant, req, body) => {
      const length = req.headers['content-length'] === undefined ? -1 : Number(req.headers['content-length']);
      return opts.uploads.uploadFile(tenant, req.params.block, req.query.path ?? '', body ?? Readable.from([]), length);
    });
    route('POST', 'finish', (tenant, req) => opts.uploads.finish(tenant, req.params.block));
    route('GET', 'check', (tenant, req) => opts.uploads.check(tenant, req.params.block));
    done();
  });
}

async function readSmallBody(body: Readable | undefined, limit: number): Promise<string> {
  if (body === undefined) return '';
  const parts: Buffer[] = [];
  let n = 0;
  for await (const chunk of body) {
    const b = chunk as Buffer;
    n += b.length;
    if (n > limit) throw new BlockUploadError('too-large', `The block metadata was too large (maximum size allowed is ${limit} bytes)`);
    parts.push(b);
  }
  return Buffer.concat(parts).toString('utf8');
}
