// Optional per-tenant credentials on push and query: a bearer token and/or basic
// auth per tenant, from a YAML file reloaded at runtime (-auth.tokens-file).
// Secrets are held only as SHA-256 digests and compared in constant time; a
// request that fails here is answered 401 before anything is read or written.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import { boolFlag, duration } from './flags.ts';
import type { Logger } from './logger.ts';
import { ReloadingYamlFile } from './reloading-file.ts';
import { TenantError, validateTenantId } from './tenant.ts';

export const authConfigShape = {
  'auth.multitenancy-enabled': boolFlag(true)
    .describe('Tenant from the X-Scope-OrgID header; false: every request is tenant "anonymous".')
    .meta({ yaml: 'multitenancy_enabled' }),
  'auth.tokens-file': z
    .string()
    .default('')
    .describe('YAML tenants: { <tenant>: { bearer_token, basic_auth: { username, password } } }, re-read live; empty: no auth.'),
  'auth.tokens-reload-period': duration('10s').describe('How often the tokens file is re-read.'),
};

export type AuthConfig = z.infer<z.ZodObject<typeof authConfigShape>>;

const tenantCredentialsSchema = z
  .object({
    bearer_token: z.string().min(1).optional(),
    basic_auth: z
      .object({ username: z.string().min(1), password: z.string().min(1) })
      .strict()
      .optional(),
  })
  .strict()
  .refine((c) => c.bearer_token !== undefined || c.basic_auth !== undefined, 'give bearer_token, basic_auth or both');

export const tokensFileSchema = z
  .object({
    /** What a tenant without an entry gets: allow (no credentials needed) or deny (every request 401). */
    unlisted_tenants: z.enum(['allow', 'deny']).default('allow'),
    tenants: z.record(z.string(), tenantCredentialsSchema).nullable().default({}),
  })
  .strict()
  .superRefine((f, ctx) => {
    for (const tenant of Object.keys(f.tenants ?? {})) {
      try {
        validateTenantId(tenant);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['tenants', tenant], message: (err as Error).message });
      }
    }
  });

export type TokensFile = z.infer<typeof tokensFileSchema>;

/** Decides whether a request may act as a tenant. */
export interface Authenticator {
  /** Throws TenantError (unauthorized) unless `authorization` (the header) carries the tenant's credentials. */
  authenticate(tenant: string, authorization: string | undefined): void;
}

interface Compiled {
  bearer?: Buffer;
  basicUser?: Buffer;
  basicPassword?: Buffer;
}

const CHALLENGE = 'Bearer realm="strata", Basic realm="strata"';
const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
const same = (a: Buffer, b: Buffer): boolean => timingSafeEqual(a, b);

/** Checks credentials against a tokens table (see TokensFileAuthenticator for the file-backed one). */
export class TokensAuthenticator implements Authenticator {
  private tenants = new Map<string, Compiled>();
  private denyUnlisted = false;

  constructor(file?: TokensFile) {
    if (file) this.update(file);
  }

  update(file: TokensFile): void {
    const tenants = new Map<string, Compiled>();
    for (const [tenant, c] of Object.entries(file.tenants ?? {})) {
      tenants.set(tenant, {
        bearer: c.bearer_token === undefined ? undefined : digest(c.bearer_token),
        basicUser: c.basic_auth === undefined ? undefined : digest(c.basic_auth.username),
        basicPassword: c.basic_auth === undefined ? undefined : digest(c.basic_auth.password),
      });
    }
    this.tenants = tenants;
    this.denyUnlisted = file.unlisted_tenants === 'deny';
  }

  authenticate(tenant: string, authorization: string | undefined): void {
    const want = this.tenants.get(tenant);
    if (want === undefined) {
      if (!this.denyUnlisted) return;
      throw unauthorized(
        `tenant ${JSON.stringify(tenant)} has no credentials configured and unlisted tenants are denied; ask the operator to add it to the -auth.tokens-file`,
      );
    }
    const given = (authorization ?? '').trim();
    if (given === '') {
      throw unauthorized(
        `no credentials: tenant ${JSON.stringify(tenant)} requires an Authorization header (Bearer token or basic auth); set authorization or basic_auth in the sender's config`,
      );
    }
    const space = given.indexOf(' ');
    const scheme = (space < 0 ? given : given.slice(0, space)).toLowerCase();
    const rest = space < 0 ? '' : given.slice(space + 1).trim();
    let ok = false;
    if (scheme === 'bearer') {
      ok = want.bearer !== undefined && same(want.bearer, digest(rest));
    } else if (scheme === 'basic') {
      const decoded = Buffer.from(rest, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon >= 0 && want.basicUser !== undefined && want.basicPassword !== undefined) {
        // Both compared always, so the time taken does not tell which one was wrong.
        const userOk = same(want.basicUser, digest(decoded.slice(0, colon)));
        const passwordOk = same(want.basicPassword, digest(decoded.slice(colon + 1)));
        ok = userOk && passwordOk;
      }
    } else {
      throw unauthorized(`unsupported Authorization scheme ${JSON.stringify(scheme.slice(0, 20))} for tenant ${JSON.stringify(tenant)}; use Bearer or Basic`);
    }
    if (!ok) {
      throw unauthorized(
        `wrong credentials for tenant ${JSON.stringify(tenant)}; check the bearer token or the basic auth username and password the sender uses`,
      );
    }
  }
}

export interface TokensFileAuthenticatorOptions {
  path: string;
  reloadPeriodMs: number;
  logger: Logger;
  registry: Registry;
}

/** Credentials from -auth.tokens-file, reloaded on a period; a bad file keeps the last good table. */
export class TokensFileAuthenticator implements Authenticator {
  private readonly table = new TokensAuthenticator();
  private readonly file: ReloadingYamlFile<TokensFile>;

  constructor(opts: TokensFileAuthenticatorOptions) {
    this.file = new ReloadingYamlFile({
      path: opts.path,
      schema: tokensFileSchema,
      reloadPeriodMs: opts.reloadPeriodMs,
      logger: opts.logger,
      registry: opts.registry,
      metricPrefix: 'strata_auth_tokens',
      what: 'auth tokens',
      onApplied: (f) => this.table.update(f),
    });
  }

  start(): Promise<void> {
    return this.file.start();
  }

  stop(): Promise<void> {
    return this.file.stop();
  }

  reload(): Promise<string | undefined> {
    return this.file.reload();
  }

  authenticate(tenant: string, authorization: string | undefined): void {
    this.table.authenticate(tenant, authorization);
  }
}

/** The authenticator the flags ask for, or undefined when -auth.tokens-file is unset (no auth). */
export function createAuthenticator(config: AuthConfig, deps: { logger: Logger; registry: Registry }): TokensFileAuthenticator | undefined {
  const path = config['auth.tokens-file'];
  if (path === '') return undefined;
  return new TokensFileAuthenticator({ path, reloadPeriodMs: config['auth.tokens-reload-period'], ...deps });
}

function unauthorized(message: string): TenantError {
  return new TenantError('unauthorized', 'unauthorized', message, CHALLENGE);
}
