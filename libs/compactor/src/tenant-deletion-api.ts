// Mimir's tenant deletion API: POST /compactor/delete_tenant marks the caller's
// tenant for deletion (queriers answer nothing for it from then on; the next
// cleanup deletes its blocks); GET /compactor/delete_tenant_status says whether
// that is done.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { asStrataError } from '@strata/errors';
import type { Bucket } from '@strata/objstore';
import { ADMIN_HTTP_STATUS, tenantFromHeader, type Authenticator } from '@strata/service';
import { readTenantDeletionMark, type Deletions } from '@strata/storegateway';

export interface TenantDeletionApiOptions {
  bucket: Bucket;
  /** Marks through the same cache the local queriers filter with, so they stop answering at once. */
  deletions: Deletions;
  multitenancyEnabled: boolean;
  auth?: Authenticator;
}

export function registerTenantDeletionApi(app: FastifyInstance, opts: TenantDeletionApiOptions): void {
  const tenantOf = (req: FastifyRequest) => {
    const tenant = tenantFromHeader(req.headers['x-scope-orgid'], opts.multitenancyEnabled);
    opts.auth?.authenticate(tenant, req.headers.authorization);
    return tenant;
  };
  const fail = (reply: FastifyReply, err: unknown) => {
    const e = asStrataError(err);
    return reply.code(ADMIN_HTTP_STATUS[e.kind]).type('text/plain').send(`${e.message}\n`);
  };
  app.post('/compactor/delete_tenant', async (req, reply) => {
    try {
      await opts.deletions.deleteTenant(tenantOf(req));
      return reply.code(200).send();
    } catch (err) {
      return fail(reply, err);
    }
  });
  app.get('/compactor/delete_tenant_status', async (req, reply) => {
    try {
      const tenant = tenantOf(req);
      const mark = await readTenantDeletionMark(opts.bucket, tenant);
      return reply.code(200).send({ tenant_id: tenant, blocks_deleted: mark?.finished_time !== undefined });
    } catch (err) {
      return fail(reply, err);
    }
  });
}
