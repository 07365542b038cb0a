// Tenant resolution shared by push and query: X-Scope-OrgID when
// multi-tenancy is on, "anonymous" when off. Ids follow Mimir's rules (dskit
// tenant.ValidTenantID plus Mimir's reserved name) so a bucket path or Kafka
// key made from one is always safe.

const MAX_TENANT_ID_LENGTH = 150;
const TENANT_ID = /^[a-zA-Z0-9!\-_.*'()]+$/;
/** Mimir keeps its own data under this tenant id in the bucket. */
const RESERVED_TENANT_IDS = new Set(['__mimir_cluster']);

export const ANONYMOUS_TENANT = 'anonymous';

export class TenantError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    /** For a 401: the WWW-Authenticate challenge to answer with. */
    readonly challenge?: string,
  ) {
    super(message);
  }
}

/** Resolves the tenant of a request; throws TenantError (401 or 400). */
export function tenantFromHeader(header: string | string[] | undefined, multitenancyEnabled: boolean): string {
  if (!multitenancyEnabled) return ANONYMOUS_TENANT;
  const id = Array.isArray(header) ? header[0] : header;
  if (id === undefined || id === '') {
    throw new TenantError('err-strata-missing-org-id', 401, 'no org id: set the X-Scope-OrgID header to your tenant id');
  }
  validateTenantId(id);
  return id;
}

export function validateTenantId(id: string): void {
  const invalid = (why: string) =>
    new TenantError('err-strata-invalid-tenant-id', 400, `tenant id ${JSON.stringify(id.slice(0, 160))} is invalid: ${why}`);
  if (id.length > MAX_TENANT_ID_LENGTH) throw invalid(`longer than ${MAX_TENANT_ID_LENGTH} characters`);
  if (id === '.' || id === '..') throw invalid('may not be "." or ".."');
  if (!TENANT_ID.test(id)) throw invalid("may contain only letters, digits and !-_.*'() (query federation with \"|\" is not supported)");
  if (RESERVED_TENANT_IDS.has(id)) throw invalid('reserved for internal use');
}
