// The query-frontend's HTTP side (Mimir's query-frontend): the Prometheus read API's routes,
// each request authenticated here, then carried whole through the scheduler to a querier and
// its answer returned as the querier gave it. A query slower than
// -query-frontend.log-queries-longer-than leaves one log line saying where the time went.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import { StrataError, asStrataError } from '@strata/errors';
import { PROMETHEUS_API_ERRORS, QUERY_STATS_HEADER } from '@strata/querier';
import { headersToWire, type FrontendTransport, type RoundTripResult, type WireHttpRequest } from '@strata/query-scheduler';
import { formatDuration, parseDuration, tenantFromHeader, type Authenticator, type Logger } from '@strata/service';
import type { StatusPage } from '@strata/ui';
import { queryFrontendPage } from './frontend-page.ts';
import { QueryLog, type LoggedQuery } from './query-log.ts';
import { queryRefusal, type FrontendQueryLimits, type QueryShape } from './query-limits.ts';

/** The read endpoints the frontend forwards, under each prefix (Prometheus' paths). */
export const READ_ENDPOINTS = [
  'query',
  'query_range',
  'series',
  'labels',
  'label/:name/values',
  'query_exemplars',
  'metadata',
  'format_query',
  'cardinality/label_names',
  'cardinality/label_values',
  'cardinality/active_series',
];

export interface QueryFrontendOptions {
  transport: FrontendTransport;
  /** Route prefixes, e.g. ['/api/v1', '/prometheus/api/v1']. */
  prefixes: string[];
  multitenancyEnabled: boolean;
  auth?: Authenticator;
  logger: Logger;
  /** The tenant's limits: its max queriers (-query-frontend.max-queriers-per-tenant; 0: all), max query length, blocked queries. */
  limits(tenant: string): FrontendQueryLimits & { maxQueriers: number };
  registry: Registry;
  /** -query-frontend.log-queries-longer-than, ms; 0: no slow-query log. */
  logQueriesLongerThanMs: number;
  /** A query with no answer after this long is answered 503 timeout and canceled at the scheduler (-querier.timeout). */
  timeoutMs: number;
  now?: () => number;
}

/** Request headers that describe the connection, not the query: never forwarded. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host', 'upgrade']);

/** Registers the read routes; returns the frontend's UI page (running and slowest recent queries). */
export function registerQueryFrontend(app: FastifyInstance, opts: QueryFrontendOptions): StatusPage {
  const frontend = new QueryFrontend(opts);
  void app.register(async (scope) => {
    // Form bodies go to the querier as sent.
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    for (const prefix of opts.prefixes) {
      for (const endpoint of READ_ENDPOINTS) {
        const method = endpoint === 'metadata' || endpoint.startsWith('label/') ? ['GET'] : ['GET', 'POST'];
        scope.route({ method, url: `${prefix}/${endpoint}`, handler: (req, reply) => frontend.forward(req, reply) });
      }
    }
  });
  return queryFrontendPage(frontend.log, opts.now);
}

class QueryFrontend {
  private readonly opts: QueryFrontendOptions;
  private readonly now: () => number;
  private readonly rejected: Counter<'user' | 'reason'>;
  readonly log = new QueryLog();

  constructor(opts: QueryFrontendOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
    this.rejected = new Counter({
      name: 'strata_query_frontend_rejected_queries_total',
      help: "Queries the query-frontend refused under the tenant's limits, by reason (blocked, max-total-query-length).",
      labelNames: ['user', 'reason'],
      registers: [opts.registry],
    });
  }

  async forward(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const began = this.now();
    const abort = new AbortController();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const timer = setTimeout(
      () =>
        abort.abort(new StrataError('query-timeout', 'timeout', `the query got no answer within ${formatDuration(this.opts.timeoutMs)} (-querier.timeout)`)),
      this.opts.timeoutMs,
    );
    let logged: LoggedQuery | undefined;
    try {
      const tenant = tenantFromHeader(req.headers['x-scope-orgid'], this.opts.multitenancyEnabled);
      this.opts.auth?.authenticate(tenant, req.headers.authorization);
      const limits = this.opts.limits(tenant);
      this.checkLimits(req, tenant, limits);
      logged = this.log.begin(tenant, req.url.split('?')[0], queryOf(req), began);
      const r = await this.opts.transport.roundTrip(tenant, wireRequest(req), { maxQueriers: limits.maxQueriers, signal: abort.signal });
      const wallMs = this.now() - began;
      const figures = queryFigures(r);
      this.log.end(logged, { wallMs, queueMs: r.queueTimeMs, querier: r.querierId, status: r.response.code, ...figures });
      this.logIfSlow(req, tenant, r, wallMs, figures);
      return sendResponse(reply, withQueueTime(req, r));
    } catch (err) {
      const e = asStrataError(err);
      const { errorType, status } = PROMETHEUS_API_ERRORS[e.kind];
      if (logged) this.log.end(logged, { wallMs: this.now() - began, status });
      if (status >= 500) this.opts.logger.warn({ url: req.url, err: e.message }, 'query failed in the query-frontend');
      return reply.code(status).header('content-type', 'application/json').send({ status: 'error', errorType, error: e.message });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Throws the refusal of a query or range query the tenant's limits do not allow. */
  private checkLimits(req: FastifyRequest, tenant: string, limits: FrontendQueryLimits): void {
    const shape = queryShape(req);
    const refusal = shape && queryRefusal(shape, limits);
    if (!refusal) return;
    this.rejected.inc({ user: tenant, reason: refusal.code === 'err-strata-query-blocked' ? 'blocked' : 'max-total-query-length' });
    this.opts.logger.info({ tenant, query: shape?.query, code: refusal.code }, `query refused for tenant ${tenant}: ${refusal.message}`);
    throw refusal;
  }

  private logIfSlow(req: FastifyRequest, tenant: string, r: RoundTripResult, wallMs: number, figures: QueryFigures): void {
    const threshold = this.opts.logQueriesLongerThanMs;
    if (threshold <= 0 || wallMs < threshold) return;
    const params = requestParams(req);
    this.opts.logger.info(
      {
        tenant,
        path: req.url.split('?')[0],
        query: queryOf(req),
        start: params.get('start') ?? params.get('time') ?? '',
        end: params.get('end') ?? '',
        step: params.get('step') ?? '',
        wall_ms: wallMs,
        queue_ms: r.queueTimeMs,
        fetched_series: figures.series,
        fetched_samples: figures.samples,
        fetched_chunks: figures.chunks,
        fetched_chunk_bytes: figures.chunkBytes,
        shards: figures.shards,
        querier: r.querierId,
        status: r.response.code,
      },
      `slow query: ${wallMs} ms (${r.queueTimeMs} ms in the queue) for tenant ${tenant}`,
    );
  }
}

/** What the querier said a query fetched (its QUERY_STATS_HEADER); absent for other endpoints. */
interface QueryFigures {
  series?: number;
  samples?: number;
  chunks?: number;
  chunkBytes?: number;
  shards?: number;
}

function queryFigures(r: RoundTripResult): QueryFigures {
  const raw = r.response.headers.find((h) => h.key.toLowerCase() === QUERY_STATS_HEADER)?.values[0];
  if (raw === undefined) return {};
  const kv = new Map(raw.split(',').map((p) => p.split('=') as [string, string]));
  const num = (k: string) => (kv.has(k) ? Number(kv.get(k)) : undefined);
  return { series: num('series'), samples: num('samples'), chunks: num('chunks'), chunkBytes: num('chunk_bytes'), shards: num('shards') };
}

/**
 * A stats answer with the time the query waited in the scheduler's queue as Prometheus'
 * execQueueTime (and in execTotalTime) and as `strata.queueTime`; any other answer unchanged.
 */
function withQueueTime(req: FastifyRequest, r: RoundTripResult): RoundTripResult {
  if (r.response.code !== 200 || (requestParams(req).get('stats') ?? '') === '') return r;
  let body: { data?: { stats?: { timings?: Record<string, number>; strata?: Record<string, number> } } };
  try {
    body = JSON.parse(r.response.body.toString('utf8')) as typeof body;
  } catch {
    return r;
  }
  const stats = body.data?.stats;
  if (!stats?.timings) return r;
  const queue = r.queueTimeMs / 1000;
  stats.timings.execQueueTime = (stats.timings.execQueueTime ?? 0) + queue;
  stats.timings.execTotalTime = (stats.timings.execTotalTime ?? 0) + queue;
  if (stats.strata) stats.strata.queueTime = queue;
  const headers = r.response.headers.filter((h) => h.key.toLowerCase() !== 'content-length');
  return { ...r, response: { ...r.response, headers, body: Buffer.from(JSON.stringify(body)) } };
}

/** What a request asks for: its query, or its series matchers. */
function queryOf(req: FastifyRequest): string {
  const params = requestParams(req);
  return params.get('query') ?? params.getAll('match[]').join(' ');
}

/** The request as the querier would have received it. */
function wireRequest(req: FastifyRequest): WireHttpRequest {
  const headers: Record<string, string | string[] | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) if (!HOP_HEADERS.has(k)) headers[k] = v;
  const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  return { method: req.method, url: req.url, headers: headersToWire(headers), body };
}

function sendResponse(reply: FastifyReply, r: RoundTripResult): FastifyReply {
  reply.code(r.response.code);
  for (const h of r.response.headers) if (!HOP_HEADERS.has(h.key.toLowerCase())) reply.header(h.key, h.values.length === 1 ? h.values[0] : h.values);
  return reply.send(r.response.body);
}

/** Query string and form body parameters, as the querier reads them. */
function requestParams(req: FastifyRequest): URLSearchParams {
  const params = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
  if (Buffer.isBuffer(req.body)) for (const [k, v] of new URLSearchParams(req.body.toString('utf8'))) params.append(k, v);
  return params;
}

/** The query, range and step of a query or query_range request; undefined for the other endpoints. */
function queryShape(req: FastifyRequest): QueryShape | undefined {
  const path = req.url.split('?')[0];
  const range = path.endsWith('/query_range');
  if (!range && !path.endsWith('/query')) return undefined;
  const p = requestParams(req);
  const query = p.get('query') ?? '';
  if (!range) return { query, rangeMs: 0, stepMs: 0 };
  const start = timeMs(p.get('start'));
  const end = timeMs(p.get('end'));
  return { query, rangeMs: Math.max(0, end - start), stepMs: stepMs(p.get('step')) };
}

/** A time parameter (unix seconds or RFC 3339) in ms; 0 when unreadable (the querier answers that 400). */
function timeMs(v: string | null): number {
  if (v === null) return 0;
  const n = Number(v);
  if (Number.isFinite(n)) return n * 1000;
  const d = Date.parse(v);
  return Number.isNaN(d) ? 0 : d;
}

/** A step (float seconds or a duration) in ms; 0 when unreadable. */
function stepMs(v: string | null): number {
  if (v === null) return 0;
  const n = Number(v);
  if (Number.isFinite(n)) return n * 1000;
  try {
    return parseDuration(v);
  } catch {
    return 0;
  }
}
