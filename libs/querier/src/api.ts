// The Prometheus HTTP API at /api/v1 and /prometheus/api/v1: query,
// query_range, series, labels, label values, query_exemplars, metadata,
// format_query and status/buildinfo; GET or POST form bodies, Prometheus' JSON
// envelope and error types. X-Read-Consistency: strong reads through
// ingesters that consumed every acknowledged write first.

import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import type { ExemplarQuerier, Matcher, MetadataQuerier, Querier } from '@strata/model';
import { compareUtf8, labelsToRecord } from '@strata/model';
import type { Engine, QueryResult, QueryStats, RangeQueryParams, StatsLevel } from '@strata/promql';
import { checkRangeResolution, formatValue, parseExpr, parseSelector, prettyExpr, toPrometheusData, walk } from '@strata/promql';
import { asStrataError } from '@strata/errors';
import { TenantError, tenantFromHeader, type Authenticator, type Logger } from '@strata/service';
import { ApiMetrics } from './api-metrics.ts';
import { parseReadConsistency, type StrongReads } from './consistency.ts';
import { PROMETHEUS_API_ERRORS, badData } from './errors.ts';
import { MAX_TIME, MIN_TIME, matchParams, parseDurationParam, parseStep, parseTime, range, required, unescapeLabelName } from './params.ts';
import type { ResultsCache } from './results-cache.ts';
import { clampRangeStart, clampToLookback } from './query-lookback.ts';
import { SpanKind, SpanStatusCode, defaultTracer, exemplarLabels, extractTraceContext, inSpan, type Tracer } from '@strata/tracing';

export type ApiQuerier = Querier & Partial<ExemplarQuerier & MetadataQuerier>;

/** What /api/v1/status/buildinfo reports. */
export interface BuildInfo {
  version: string;
  revision: string;
  branch: string;
  buildUser: string;
  buildDate: string;
  goVersion: string;
}

export interface PrometheusApiOptions {
  querier: ApiQuerier;
  engine: Engine;
  multitenancyEnabled: boolean;
  logger: Logger;
  registry: Registry;
  /** Route prefixes, e.g. ['/api/v1', '/prometheus/api/v1']. */
  prefixes: string[];
  /** Serves X-Read-Consistency: strong; without it such requests are refused. */
  strongReads?: StrongReads;
  /** Splits and caches range queries (eventual consistency only). */
  resultsCache?: ResultsCache;
  buildInfo?: Partial<BuildInfo>;
  /** Per-tenant credentials (-auth.tokens-file), checked before anything is read. None: no auth. */
  auth?: Authenticator;
  /** A span per API request, continuing an incoming `traceparent`. Default: the global (no-op) tracer. */
  tracer?: Tracer;
  /** Wraps every querier a request reads through (the deletion filter: deleted series and tenants read as gone). */
  readFilter?: (q: ApiQuerier) => ApiQuerier;
  /** More routes sharing the tenant, auth, tracing and error handling (status, remote read, admin, cardinality). */
  routes?: ExtraRoute[];
  /** The tenant's max_query_lookback (ms; 0: none), read per request from the runtime overrides. */
  maxQueryLookbackMs?: (tenant: string) => number;
  now?: () => number;
}

export interface RequestContext {
  params: URLSearchParams;
  /** The raw body of a non-form POST (remote read's protobuf), else undefined. */
  body: Buffer | undefined;
  tenant: string;
  signal: AbortSignal;
  querier: ApiQuerier;
  strong: boolean;
  /** The oldest time the tenant may read (max_query_lookback); -Infinity: no limit. */
  minTime: number;
}

/** What a handler answers: Prometheus' JSON envelope's data (and annotations), or a non-JSON reply. */
export type Handler = (ctx: RequestContext) => Promise<Envelope | RawReply>;

/** A reply that is not the JSON envelope (remote read's protobuf, the admin API's 204). */
export interface RawReply {
  raw: true;
  status: number;
  headers?: Record<string, string>;
  body?: Buffer | string | Readable;
}

export interface Envelope {
  data: unknown;
  warnings?: string[];
  infos?: string[];
  /** Response headers besides the envelope (the query's figures for the query-frontend's log). */
  headers?: Record<string, string>;
}

/** The header a query's figures travel in to the query-frontend (its slow-query log): `key=value` pairs. */
export const QUERY_STATS_HEADER = 'x-strata-query-stats';

/** A route beyond the built-in ones: its path under each prefix, methods, and handler. */
export interface ExtraRoute {
  endpoint: string;
  path: string;
  methods: ('GET' | 'POST' | 'PUT')[];
  handler: Handler;
  /** Served at these prefixes instead of `opts.prefixes` (e.g. Mimir's /compactor). */
  prefixes?: string[];
}

export function registerPrometheusApi(app: FastifyInstance, opts: PrometheusApiOptions): void {
  new PrometheusApi(opts).register(app);
}

/** The API's endpoints, one function each as in Prometheus' web/api/v1/api.go, and what every request goes through. */
class PrometheusApi {
  private readonly opts: PrometheusApiOptions;
  private readonly metrics: ApiMetrics;
  private readonly tracer: Tracer;
  private readonly buildInfo: BuildInfo;

  constructor(opts: PrometheusApiOptions) {
    this.opts = opts;
    this.metrics = new ApiMetrics(opts.registry);
    this.tracer = opts.tracer ?? defaultTracer();
    this.buildInfo = {
      version: '0.1.0',
      revision: process.env.STRATA_REVISION ?? 'unknown',
      branch: process.env.STRATA_BRANCH ?? 'unknown',
      buildUser: 'strata',
      buildDate: 'unknown',
      goVersion: `node ${process.version}`,
      ...opts.buildInfo,
    };
  }

  /** The built-in endpoints by name, each served at `<prefix>/<name>`. */
  private handlers(): Record<string, Handler> {
    const { engine, resultsCache } = this.opts;
    return {
      query: (ctx) => query(engine, ctx),
      query_range: (ctx) => queryRange(engine, resultsCache, ctx),
      series,
      labels,
      query_exemplars: queryExemplars,
      metadata,
      format_query: formatQuery,
    };
  }

  register(app: FastifyInstance): void {
    const handlers = this.handlers();
    void app.register(async (scope) => {
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, body));
      for (const prefix of this.opts.prefixes) {
        for (const [name, fn] of Object.entries(handlers)) {
          // Prometheus serves metadata on GET only; everything else takes POST forms too.
          const method = name === 'metadata' ? ['GET'] : ['GET', 'POST'];
          scope.route({ method, url: `${prefix}/${name}`, handler: (req, reply) => this.run(name, req, reply, fn) });
        }
        scope.route({
          method: ['GET'],
          url: `${prefix}/label/:name/values`,
          handler: (req, reply) => this.run('label_values', req, reply, (ctx) => labelValues((req.params as { name: string }).name, ctx)),
        });
        scope.route({
          method: ['GET'],
          url: `${prefix}/status/buildinfo`,
          handler: (req, reply) => this.run('buildinfo', req, reply, async () => ({ data: this.buildInfo })),
        });
      }
      for (const r of this.opts.routes ?? []) {
        for (const prefix of r.prefixes ?? this.opts.prefixes) {
          scope.route({ method: r.methods, url: `${prefix}${r.path}`, handler: (req, reply) => this.run(r.endpoint, req, reply, r.handler) });
        }
      }
    });
  }

  /** One request in a server span that continues the caller's trace. */
  private run(endpoint: string, req: FastifyRequest, reply: FastifyReply, fn: Handler): Promise<FastifyReply> {
    return inSpan(this.tracer, `querier.${endpoint}`, { kind: SpanKind.SERVER, attributes: { endpoint } }, extractTraceContext(req.headers), async (span) => {
      const out = await this.runTraced(endpoint, req, reply, fn, (tenant) => span.setAttribute('tenant', tenant));
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${reply.statusCode}` });
      return out;
    });
  }

  /** Tenant, auth, the querier to read through, the handler, and its answer or error in Prometheus' envelope. */
  private async runTraced(endpoint: string, req: FastifyRequest, reply: FastifyReply, fn: Handler, onTenant: (tenant: string) => void): Promise<FastifyReply> {
    const end = this.metrics.latency.startTimer({ endpoint }, {});
    let tenant: string | undefined;
    const query = () => requestParams(req).get('query') ?? undefined;
    const abort = new AbortController();
    // The client went away before the answer: stop evaluating. (The request's own 'close' fires once its body is read.)
    reply.raw.on('close', () => {
      if (reply.raw.writableFinished) return;
      this.metrics.canceled.inc({ endpoint });
      this.opts.logger.info({ endpoint, tenant, query: query() }, 'query canceled: the client went away');
      abort.abort();
    });
    try {
      tenant = tenantFromHeader(req.headers['x-scope-orgid'], this.opts.multitenancyEnabled);
      onTenant(tenant);
      this.opts.auth?.authenticate(tenant, req.headers.authorization);
      const strong = parseReadConsistency(req.headers['x-read-consistency']) === 'strong';
      const lookback = this.opts.maxQueryLookbackMs?.(tenant) ?? 0;
      const minTime = lookback > 0 ? (this.opts.now ?? Date.now)() - lookback : -Infinity;
      let querier = await this.querier(strong);
      if (lookback > 0) querier = clampToLookback(querier, minTime);
      const rawBody = Buffer.isBuffer(req.body) ? req.body : undefined;
      const body = await fn({ params: requestParams(req), body: rawBody, tenant, signal: abort.signal, querier, strong, minTime });
      const status = 'raw' in body ? body.status : 200;
      end({ status }, exemplarLabels());
      return sendAnswer(reply, body);
    } catch (err) {
      const e = asStrataError(err);
      const { errorType, status } = PROMETHEUS_API_ERRORS[e.kind];
      end({ status }, exemplarLabels());
      // Inside the request's span: the line carries its trace id.
      const line = { tenant, endpoint, status, code: e.code, query: query(), err: e.message };
      if (status >= 500) this.opts.logger.warn(line, 'query failed');
      else this.opts.logger.debug(line, 'query rejected');
      if (err instanceof TenantError && err.challenge !== undefined) reply.header('WWW-Authenticate', err.challenge);
      return reply.code(status).send({ status: 'error', errorType, error: e.message });
    }
  }

  /** What a request reads through: the ingesters after they consumed every acknowledged write for a strong read, behind the read filter. */
  private async querier(strong: boolean): Promise<ApiQuerier> {
    let querier: ApiQuerier = this.opts.querier;
    if (strong) {
      if (!this.opts.strongReads) {
        throw badData('X-Read-Consistency: strong needs the querier to reach Kafka; start it with -ingest-storage.kafka.address');
      }
      querier = await this.opts.strongReads.querier();
    }
    return this.opts.readFilter ? this.opts.readFilter(querier) : querier;
  }
}

function sendAnswer(reply: FastifyReply, body: Envelope | RawReply): FastifyReply {
  if ('raw' in body) {
    reply.code(body.status);
    for (const [k, v] of Object.entries(body.headers ?? {})) reply.header(k, v);
    return reply.send(body.body);
  }
  const { headers, ...envelope } = body;
  for (const [k, v] of Object.entries(headers ?? {})) reply.header(k, v);
  return reply.code(200).send({ status: 'success', ...envelope });
}

async function query(engine: Engine, { params: p, tenant, signal, querier }: RequestContext): Promise<Envelope> {
  const query = required(p, 'query');
  const time = parseTime(p.get('time'), 'time', Date.now());
  const stats = statsParam(p);
  return withAnnotations(await engine.instantQuery({ tenant, query, time, signal, querier, timeoutMs: timeoutParam(p), stats }), stats);
}

async function queryRange(engine: Engine, resultsCache: ResultsCache | undefined, ctx: RequestContext): Promise<Envelope> {
  const { params: p, tenant, signal, querier, strong } = ctx;
  const query = required(p, 'query');
  const start = parseTime(p.get('start'), 'start', NaN);
  const end = parseTime(p.get('end'), 'end', NaN);
  if (Number.isNaN(start)) throw badData('invalid parameter "start": cannot parse "" to a valid timestamp');
  if (Number.isNaN(end)) throw badData('invalid parameter "end": cannot parse "" to a valid timestamp');
  if (end < start) throw badData('invalid parameter "end": end timestamp must not be before start time');
  const step = parseStep(p.get('step'), 'step');
  if (step <= 0) throw badData('invalid parameter "step": zero or negative query resolution step widths are not accepted. Try a positive integer');
  checkRangeResolution(start, end, step);
  const stats = statsParam(p);
  // max_query_lookback: the range starts no earlier than the tenant may read (Mimir moves the start).
  const from = clampRangeStart(start, end, step, ctx.minTime);
  if (from === undefined) return { data: { resultType: 'matrix', result: [] } };
  const params: RangeQueryParams = { tenant, query, start: from, end, step, signal, querier, timeoutMs: timeoutParam(p), stats };
  const run = (q: RangeQueryParams) => engine.rangeQuery(q);
  // Strong reads want the newest data; the cache only ever holds old data, but it would skip the wait.
  // Statistics are of one evaluation, so a query that asks for them is not answered from the cache.
  const result = resultsCache && !strong && stats === 'fetched' ? await resultsCache.rangeQuery(params, run) : await run(params);
  return withAnnotations(result, stats);
}

/** Prometheus' `stats` parameter: any value asks for statistics, `all` for per-step ones too. */
function statsParam(p: URLSearchParams): StatsLevel {
  const v = p.get('stats') ?? '';
  return v === '' ? 'fetched' : v === 'all' ? 'all' : 'basic';
}

async function series({ params: p, tenant, querier }: RequestContext): Promise<Envelope> {
  const matcherSets = matchParams(p, true);
  const { mint, maxt } = range(p);
  const seen = new Map<string, Record<string, string>>();
  for (const matchers of matcherSets) {
    for (const s of await querier.select({ tenant, matchers, mint, maxt })) {
      const rec = labelsToRecord(s.labels);
      seen.set(JSON.stringify(rec), rec);
    }
  }
  return { data: limit([...seen.values()], p) };
}

async function labels({ params: p, tenant, querier }: RequestContext): Promise<Envelope> {
  const { mint, maxt } = range(p);
  const sets = matchParams(p, false);
  const names = new Set<string>();
  for (const matchers of sets.length > 0 ? sets : [[]]) {
    for (const n of await querier.labelNames({ tenant, matchers, mint, maxt })) names.add(n);
  }
  return { data: limit([...names].sort(compareUtf8), p) };
}

async function labelValues(pathName: string, { params: p, tenant, querier }: RequestContext): Promise<Envelope> {
  // Any UTF-8 name, as Prometheus 3; `U__…` is its escaped form.
  const name = unescapeLabelName(pathName);
  if (name === '' || /\p{Cs}/u.test(name)) throw badData(`invalid label name: ${JSON.stringify(pathName)}`);
  const { mint, maxt } = range(p);
  const sets = matchParams(p, false);
  const values = new Set<string>();
  for (const matchers of sets.length > 0 ? sets : [[]]) {
    for (const v of await querier.labelValues({ tenant, matchers, mint, maxt, name })) values.add(v);
  }
  return { data: limit([...values].sort(compareUtf8), p) };
}

async function queryExemplars({ params: p, tenant, querier }: RequestContext): Promise<Envelope> {
  const query = required(p, 'query');
  const mint = parseTime(p.get('start'), 'start', MIN_TIME);
  const maxt = parseTime(p.get('end'), 'end', MAX_TIME);
  if (maxt < mint) throw badData('invalid parameter "end": end timestamp must not be before start time');
  const matcherSets: Matcher[][] = [];
  walk(parseExpr(query, { enableExperimentalFunctions: true, enableDurationExpressions: true }), (node) => {
    if (node.kind === 'vectorSelector') matcherSets.push(node.matchers);
  });
  if (matcherSets.length === 0 || !querier.exemplars) return { data: [] };
  const series = await querier.exemplars({ tenant, matcherSets, mint, maxt });
  return {
    data: series.map((s) => ({
      seriesLabels: labelsToRecord(s.seriesLabels),
      exemplars: s.exemplars.map((e) => ({ labels: labelsToRecord(e.labels), value: formatValue(e.value), timestamp: e.timestamp / 1000 })),
    })),
  };
}

async function metadata({ params: p, tenant, querier }: RequestContext): Promise<Envelope> {
  const maxMetrics = intParam(p, 'limit');
  const perMetric = intParam(p, 'limit_per_metric');
  const metric = p.get('metric') ?? '';
  const entries = querier.metadata ? await querier.metadata({ tenant, metric: metric || undefined }) : [];
  const out: Record<string, { type: string; help: string; unit: string }[]> = {};
  let families = 0;
  for (const m of entries) {
    if (metric && m.metricFamilyName !== metric) continue;
    let list = out[m.metricFamilyName];
    if (!list) {
      if (maxMetrics > 0 && families >= maxMetrics) continue;
      families++;
      list = out[m.metricFamilyName] = [];
    }
    if (perMetric > 0 && list.length >= perMetric) continue;
    list.push({ type: m.type, help: m.help, unit: m.unit });
  }
  return { data: out };
}

async function formatQuery({ params: p }: RequestContext): Promise<Envelope> {
  return { data: prettyExpr(parseExpr(required(p, 'query'), { enableExperimentalFunctions: true, enableDurationExpressions: true })) };
}

/** A query's data (with its statistics when asked for) plus the warnings and infos Prometheus puts next to it (omitted when empty). */
function withAnnotations(r: QueryResult, stats: StatsLevel = 'fetched'): Envelope {
  const data = toPrometheusData(r) as Record<string, unknown>;
  if (stats !== 'fetched' && r.stats) data.stats = renderStats(r.stats);
  const out: Envelope = { data };
  if (r.warnings.length > 0) out.warnings = r.warnings;
  if (r.infos.length > 0) out.infos = r.infos;
  if (r.stats) out.headers = { [QUERY_STATS_HEADER]: statsHeader(r.stats) };
  return out;
}

/** Prometheus' stats object (timings, samples), then what Strata fetched (Mimir's query stats) under `strata`. */
function renderStats(s: QueryStats): Record<string, unknown> {
  const out: Record<string, unknown> = { timings: s.timings };
  if (s.samples) out.samples = s.samples;
  out.strata = s.fetched;
  return out;
}

function statsHeader(s: QueryStats): string {
  const f = s.fetched;
  return (
    `series=${f.fetchedSeriesCount},chunks=${f.fetchedChunksCount},chunk_bytes=${f.fetchedChunkBytes},samples=${f.fetchedSamplesCount},` +
    `shards=${f.shardedQueries},eval_seconds=${s.timings.evalTotalTime.toFixed(6)}`
  );
}

function requestParams(req: FastifyRequest): URLSearchParams {
  const url = req.raw.url ?? '';
  const q = url.indexOf('?');
  const params = new URLSearchParams(q >= 0 ? url.slice(q + 1) : '');
  if (typeof req.body === 'string') for (const [k, v] of new URLSearchParams(req.body)) params.append(k, v);
  return params;
}

function intParam(p: URLSearchParams, name: string): number {
  const raw = p.get(name);
  if (raw === null || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw badData(`invalid parameter "${name}": cannot parse "${raw}" to an integer`);
  return n;
}

function limit<T>(values: T[], p: URLSearchParams): T[] {
  const raw = p.get('limit');
  if (raw === null || raw === '') return values;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw badData(`invalid parameter "limit": cannot parse "${raw}" to a non-negative integer`);
  return n === 0 ? values : values.slice(0, n);
}

/** The `timeout` parameter (a duration), bounded by the engine's own timeout. */
function timeoutParam(p: URLSearchParams): number | undefined {
  const raw = p.get('timeout');
  if (raw === null || raw === '') return undefined;
  return parseDurationParam(raw, 'timeout');
}
