// Prometheus' rules and alerts API (web/api/v1 RuleDiscovery, AlertDiscovery)
// over the groups this ruler evaluates: GET /api/v1/rules with type,
// rule_name[], rule_group[], file[] filters, and GET /api/v1/alerts.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { asStrataError } from '@strata/errors';
import { labelsToRecord } from '@strata/model';
import { formatExpr, parseExpr } from '@strata/promql';
import { PROMETHEUS_API_ERRORS } from '@strata/querier';
import { TenantError, tenantFromHeader, type Authenticator } from '@strata/service';
import type { EvaluatedGroup } from './group.ts';
import { RulerError } from './errors.ts';
import { AlertingRule, type Alert, type Rule } from './rules.ts';

export interface RulesApiOptions {
  groups(tenant: string): { namespace: string; group: EvaluatedGroup }[];
  multitenancyEnabled: boolean;
  auth?: Authenticator;
  /** Default: ['/api/v1', '/prometheus/api/v1']. */
  prefixes?: string[];
}

export function registerRulesApi(app: FastifyInstance, opts: RulesApiOptions): void {
  const run = (fn: (tenant: string, params: URLSearchParams) => unknown) => async (req: FastifyRequest, reply: FastifyReply) => {
    try {
      const tenant = tenantFromHeader(req.headers['x-scope-orgid'], opts.multitenancyEnabled);
      opts.auth?.authenticate(tenant, req.headers.authorization);
      const url = req.raw.url ?? '';
      const q = url.indexOf('?');
      return await reply.code(200).send({ status: 'success', data: fn(tenant, new URLSearchParams(q >= 0 ? url.slice(q + 1) : '')) });
    } catch (err) {
      const e = asStrataError(err);
      const { errorType, status } = PROMETHEUS_API_ERRORS[e.kind];
      if (err instanceof TenantError && err.challenge !== undefined) reply.header('WWW-Authenticate', err.challenge);
      return reply.code(status).send({ status: 'error', errorType, error: e.message });
    }
  };
  for (const prefix of opts.prefixes ?? ['/api/v1', '/prometheus/api/v1']) {
    app.get(
      `${prefix}/rules`,
      run((tenant, p) => rulesData(opts.groups(tenant), p)),
    );
    app.get(
      `${prefix}/alerts`,
      run((tenant) => ({
        alerts: opts
          .groups(tenant)
          .flatMap(({ group }) => group.rules.filter((r): r is AlertingRule => r instanceof AlertingRule).flatMap((r) => r.activeAlerts()))
          .map(alertJson),
      })),
    );
  }
}

function rulesData(groups: { namespace: string; group: EvaluatedGroup }[], p: URLSearchParams): unknown {
  const type = p.get('type') ?? '';
  if (type !== '' && type !== 'alert' && type !== 'record') throw new RulerError('bad-rules-type', 'bad-input', `not supported value "${type}"`);
  const names = new Set(p.getAll('rule_name[]'));
  const groupNames = new Set(p.getAll('rule_group[]'));
  const files = new Set(p.getAll('file[]'));
  const excludeAlerts = p.get('exclude_alerts') === 'true';
  const filtered = type !== '' || names.size > 0;
  const out: unknown[] = [];
  for (const { namespace, group } of groups) {
    if (files.size > 0 && !files.has(namespace)) continue;
    if (groupNames.size > 0 && !groupNames.has(group.name)) continue;
    const rules = group.rules
      .filter((r) => (type === 'alert' ? r.type === 'alerting' : type === 'record' ? r.type === 'recording' : true))
      .filter((r) => names.size === 0 || names.has(r.name))
      .map((r) => ruleJson(r, excludeAlerts));
    if (filtered && rules.length === 0) continue;
    out.push({
      name: group.name,
      file: namespace,
      rules,
      interval: group.intervalMs / 1000,
      limit: group.limit,
      evaluationTime: group.evaluationTime,
      lastEvaluation: rfc3339(group.lastEvaluation),
    });
  }
  return { groups: out };
}

function ruleJson(r: Rule, excludeAlerts: boolean): unknown {
  const common = {
    name: r.name,
    query: queryString(r.expr),
    // Prometheus omits a recording rule's labels when it has none (an alerting rule's never).
    ...(Object.keys(r.labels).length > 0 ? { labels: r.labels } : {}),
    health: r.health,
    ...(r.lastError !== '' ? { lastError: r.lastError } : {}),
    evaluationTime: r.evaluationTime,
    lastEvaluation: rfc3339(r.lastEvaluation),
  };
  if (!(r instanceof AlertingRule)) return { ...common, type: 'recording' };
  return {
    state: r.state(),
    name: r.name,
    query: common.query,
    duration: r.holdDuration / 1000,
    keepFiringFor: r.keepFiringFor / 1000,
    labels: r.labels,
    annotations: r.annotations,
    ...(excludeAlerts ? {} : { alerts: r.activeAlerts().map(alertJson) }),
    health: r.health,
    ...(r.lastError !== '' ? { lastError: r.lastError } : {}),
    evaluationTime: r.evaluationTime,
    lastEvaluation: common.lastEvaluation,
    type: 'alerting',
  };
}

function alertJson(a: Alert): unknown {
  return {
    labels: labelsToRecord(a.labels),
    annotations: a.annotations,
    state: a.state,
    activeAt: rfc3339(a.activeAt),
    ...(a.keepFiringSince !== 0 ? { keepFiringSince: rfc3339(a.keepFiringSince) } : {}),
    value: formatFloatE(a.value),
  };
}

/** The expression as Prometheus prints a parsed query (the rules API shows that, not the file's text). */
function queryString(expr: string): string {
  try {
    return formatExpr(parseExpr(expr, { enableExperimentalFunctions: true, enableDurationExpressions: true }));
  } catch {
    return expr;
  }
}

/** Go's time.Time JSON (RFC 3339, fraction without trailing zeros); 0 is Go's zero time. */
export function rfc3339(ms: number): string {
  if (ms === 0) return '0001-01-01T00:00:00Z';
  const iso = new Date(ms).toISOString();
  return iso.replace(/\.000Z$/, 'Z').replace(/(\.\d*?)0+Z$/, '$1Z');
}

/** strconv.FormatFloat(v, 'e', -1, 64): the shortest mantissa, a two-digit exponent. */
export function formatFloatE(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  return v.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
}
