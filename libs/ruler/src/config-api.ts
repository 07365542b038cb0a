// Mimir's ruler config API: GET/POST/DELETE /prometheus/config/v1/rules[/<namespace>[/<group>]],
// YAML in and out, tenant from X-Scope-OrgID. An edge: the one place ruler
// errors become HTTP statuses (plain-text bodies, as Mimir answers).

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { stringify as stringifyYaml } from 'yaml';
import { asStrataError } from '@strata/errors';
import { ADMIN_HTTP_STATUS, TenantError, tenantFromHeader, type Authenticator, type Logger } from '@strata/service';
import { RulerError } from './errors.ts';
import { groupToYamlObject, parseRuleGroups } from './rule-format.ts';
import type { RuleStore, StoredGroup } from './rule-store.ts';

export interface RulerConfigApiOptions {
  store: RuleStore;
  multitenancyEnabled: boolean;
  auth?: Authenticator;
  logger: Logger;
  /** Called after a tenant's rules changed (the ruler reloads them at once). */
  onChange(tenant: string): void;
  /** Default: ['/prometheus/config/v1/rules']. */
  prefixes?: string[];
}

type Params = { namespace?: string; group?: string };

export function registerRulerConfigApi(app: FastifyInstance, opts: RulerConfigApiOptions): void {
  const { store } = opts;
  const handle = (fn: (tenant: string, p: Params, req: FastifyRequest) => Promise<{ status: number; yaml?: unknown; json?: unknown }>) => async (req: FastifyRequest, reply: FastifyReply) => {
    let tenant: string | undefined;
    try {
      tenant = tenantFromHeader(req.headers['x-scope-orgid'], opts.multitenancyEnabled);
      opts.auth?.authenticate(tenant, req.headers.authorization);
      const out = await fn(tenant, req.params as Params, req);
      if (out.yaml !== undefined) return reply.code(out.status).header('content-type', 'application/yaml').send(stringifyYaml(out.yaml, { lineWidth: 0 }));
      return reply.code(out.status).send(out.json ?? { status: 'success', data: null, errorType: '', error: '' });
    } catch (err) {
      const e = asStrataError(err);
      const status = ADMIN_HTTP_STATUS[e.kind];
      if (status >= 500) opts.logger.warn({ tenant, err: e.message }, 'ruler config API request failed');
      if (err instanceof TenantError && err.challenge !== undefined) reply.header('WWW-Authenticate', err.challenge);
      return reply.code(status).header('content-type', 'text/plain; charset=utf-8').send(`${e.message}\n`);
    }
  };
  const byNamespace = (groups: StoredGroup[]) => {
    const out: Record<string, unknown[]> = {};
    for (const g of groups) (out[g.namespace] ??= []).push(groupToYamlObject(g.group));
    return out;
  };
  const notFound = (what: string) => new RulerError('rules-not-found', 'not-found', what);

  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    for (const prefix of opts.prefixes ?? ['/prometheus/config/v1/rules']) {
      scope.get(
        prefix,
        handle(async (tenant) => {
          const groups = await store.list(tenant);
          if (groups.length === 0) throw notFound('no rule groups found');
          return { status: 200, yaml: byNamespace(groups) };
        }),
      );
      scope.get(
        `${prefix}/:namespace`,
        handle(async (tenant, p) => {
          const groups = await store.list(tenant, p.namespace!);
          if (groups.length === 0) throw notFound('no rule groups found');
          return { status: 200, yaml: byNamespace(groups) };
        }),
      );
      scope.get(
        `${prefix}/:namespace/:group`,
        handle(async (tenant, p) => {
          const g = await store.get(tenant, p.namespace!, p.group!);
          if (!g) throw notFound('group does not exist');
          return { status: 200, yaml: groupToYamlObject(g) };
        }),
      );
      scope.post(
        `${prefix}/:namespace`,
        handle(async (tenant, p, req) => {
          const body = typeof req.body === 'string' ? req.body : '';
          if (body.trim() === '') throw new RulerError('invalid-rule-group', 'bad-input', 'the body must be a rule group in YAML (name, interval, rules)');
          const groups = parseRuleGroups(body);
          for (const g of groups) await store.put(tenant, p.namespace!, g);
          opts.onChange(tenant);
          return { status: 202 };
        }),
      );
      scope.delete(
        `${prefix}/:namespace`,
        handle(async (tenant, p) => {
          const n = await store.deleteNamespace(tenant, p.namespace!);
          if (n === 0) throw notFound('namespace does not exist');
          opts.onChange(tenant);
          return { status: 202 };
        }),
      );
      scope.delete(
        `${prefix}/:namespace/:group`,
        handle(async (tenant, p) => {
          if (!(await store.get(tenant, p.namespace!, p.group!))) throw notFound('group does not exist');
          await store.delete(tenant, p.namespace!, p.group!);
          opts.onChange(tenant);
          return { status: 202 };
        }),
      );
    }
  });
}
