// Tenant resolution shared by push and query: X-Scope-OrgID when
// multi-tenancy is on, "anonymous" when off. Ids follow Mimir's rules (dskit
// tenant.ValidTenantID plus Mimir's reserved name) so a bucket path or Kafka
// key made from one is always safe.

import { StrataError } from '@strata/errors';

const MAX_TENANT_ID_LENGTH = 150;
const TENANT_ID = /^[a-zA-Z0-9!\-_.*'()]+$/;
/** Mimir keeps its own data under __mimir_cluster in the bucket; the ruler keeps rule groups under rules/. */
const RESERVED_TENANT_IDS = new Set(['__mimir_cluster', 'rules']);

export const ANONYMOUS_TENANT = 'anonymous';

/** Who the request is for is missing, invalid or not proven: `unauthorized` or `bad-input`. */
export class TenantError extends StrataError {
  readonly challenge?: string;

  constructor(
    name: string,
    kind: 'unauthorized' | 'bad-input',
    message: string,
    /** For `unauthorized`: the WWW-Authenticate challenge to answer with. */
    challenge?: string,
  ) {
    super(name, kind, message);
    this.challenge = challenge;
  }
}

/** Resolves the tenant of a request; throws TenantError (unauthorized without an id, bad-input for an invalid one). */
export function tenantFromHeader(header: string | string[] | undefined, multitenancyEnabled: boolean): string {
  if (!multitenancyEnabled) return ANONYMOUS_TENANT;
  const id = Array.isArray(header) ? header[0] : header;
  if (id === undefined || id === '') {
    throw new TenantError('missing-org-id', 'unauthorized', 'no org id: set the X-Scope-OrgID header to your tenant id');
  }
  validateTenantId(id);
  return id;
}

export function validateTenantId(id: string): void {
  const invalid = (why: string) => new TenantError('invalid-tenant-id', 'bad-input', `tenant id ${JSON.stringify(id.slice(0, 160))} is invalid: ${why}`);
  if (id.length > MAX_TENANT_ID_LENGTH) throw invalid(`longer than ${MAX_TENANT_ID_LENGTH} characters`);
  if (id === '.' || id === '..') throw invalid('may not be "." or ".."');
  if (!TENANT_ID.test(id)) throw invalid('may contain only letters, digits and !-_.*\'() (query federation with "|" is not supported)');
  if (RESERVED_TENANT_IDS.has(id)) throw invalid('reserved for internal use');
}
