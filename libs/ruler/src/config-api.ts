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

/** What an endpoint answers: YAML, JSON, or Mimir's empty success envelope. */
interface Answer {
  status: number;
  yaml?: unknown;
  json?: unknown;
}

type Endpoint = (tenant: string, p: Params, req: FastifyRequest) => Promise<Answer>;

export function registerRulerConfigApi(app: FastifyInstance, opts: RulerConfigApiOptions): void {
  const api = new RulerConfigApi(opts);
  const handle = (fn: Endpoint) => (req: FastifyRequest, reply: FastifyReply) => api.handle(fn, req, reply);
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
    for (const prefix of opts.prefixes ?? ['/prometheus/config/v1/rules']) {
      scope.get(
        prefix,
        handle((tenant) => api.listRules(tenant)),
      );
      scope.get(
        `${prefix}/:namespace`,
        handle((tenant, p) => api.listRules(tenant, p.namespace!)),
      );
      scope.get(
        `${prefix}/:namespace/:group`,
        handle((tenant, p) => api.getRuleGroup(tenant, p.namespace!, p.group!)),
      );
      scope.post(
        `${prefix}/:namespace`,
        handle((tenant, p, req) => api.setRuleGroups(tenant, p.namespace!, req.body)),
      );
      scope.delete(
        `${prefix}/:namespace`,
        handle((tenant, p) => api.deleteNamespace(tenant, p.namespace!)),
      );
      scope.delete(
        `${prefix}/:namespace/:group`,
        handle((tenant, p) => api.deleteRuleGroup(tenant, p.namespace!, p.group!)),
      );
    }
  });
}

/** One method per endpoint, as Mimir's ruler API has; handle() is the edge every request goes through. */
class RulerConfigApi {
  private readonly opts: RulerConfigApiOptions;

  constructor(opts: RulerConfigApiOptions) {
    this.opts = opts;
  }

  /** Tenant and credentials, the endpoint, and its answer or error (plain text, its kind's status). */
  async handle(fn: Endpoint, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    let tenant: string | undefined;
    try {
      tenant = tenantFromHeader(req.headers['x-scope-orgid'], this.opts.multitenancyEnabled);
      this.opts.auth?.authenticate(tenant, req.headers.authorization);
      const out = await fn(tenant, req.params as Params, req);
      if (out.yaml !== undefined)
        return reply
          .code(out.status)
          .header('content-type', 'application/yaml')
          .send(stringifyYaml(out.yaml, { lineWidth: 0 }));
      return reply.code(out.status).send(out.json ?? { status: 'success', data: null, errorType: '', error: '' });
    } catch (err) {
      const e = asStrataError(err);
      const status = ADMIN_HTTP_STATUS[e.kind];
      if (status >= 500) this.opts.logger.warn({ tenant, err: e.message }, 'ruler config API request failed');
      if (err instanceof TenantError && err.challenge !== undefined) reply.header('WWW-Authenticate', err.challenge);
      return reply.code(status).header('content-type', 'text/plain; charset=utf-8').send(`${e.message}\n`);
    }
  }

  /** The tenant's rule groups (of one namespace, when given) by namespace. */
  async listRules(tenant: string, namespace?: string): Promise<Answer> {
    const groups = await this.opts.store.list(tenant, namespace);
    if (groups.length === 0) throw notFound('no rule groups found');
    return { status: 200, yaml: byNamespace(groups) };
  }

  async getRuleGroup(tenant: string, namespace: string, group: string): Promise<Answer> {
    const g = await this.opts.store.get(tenant, namespace, group);
    if (!g) throw notFound('group does not exist');
    return { status: 200, yaml: groupToYamlObject(g) };
  }

  /** The body's rule groups stored in the namespace (each replacing the group of its name). */
  async setRuleGroups(tenant: string, namespace: string, body: unknown): Promise<Answer> {
    const yaml = typeof body === 'string' ? body : '';
    if (yaml.trim() === '') throw new RulerError('invalid-rule-group', 'bad-input', 'the body must be a rule group in YAML (name, interval, rules)');
    const groups = parseRuleGroups(yaml);
    for (const g of groups) await this.opts.store.put(tenant, namespace, g);
    this.opts.onChange(tenant);
    return { status: 202 };
  }

  async deleteNamespace(tenant: string, namespace: string): Promise<Answer> {
    const n = await this.opts.store.deleteNamespace(tenant, namespace);
    if (n === 0) throw notFound('namespace does not exist');
    this.opts.onChange(tenant);
    return { status: 202 };
  }

  async deleteRuleGroup(tenant: string, namespace: string, group: string): Promise<Answer> {
    if (!(await this.opts.store.get(tenant, namespace, group))) throw notFound('group does not exist');
    await this.opts.store.delete(tenant, namespace, group);
    this.opts.onChange(tenant);
    return { status: 202 };
  }
}

function byNamespace(groups: StoredGroup[]): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const g of groups) (out[g.namespace] ??= []).push(groupToYamlObject(g.group));
  return out;
}

function notFound(what: string): RulerError {
  return new RulerError('rules-not-found', 'not-found', what);
}
