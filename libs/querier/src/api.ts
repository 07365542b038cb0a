// The Prometheus HTTP API (query, query_range, series, labels, label values)
// at /api/v1 and /prometheus/api/v1, GET or POST form bodies, with
// Prometheus' JSON envelope and error types.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Histogram, type Registry } from 'prom-client';
import { labelsToRecord, type Matcher, type Querier } from '@strata/model';
import { Engine, parseSelector, toPrometheusData } from '@strata/promql';
import { TenantError, tenantFromHeader, type Logger } from '@strata/service';
import { ApiError, badData } from './errors.ts';
import { MAX_TIME, MIN_TIME, parseStep, parseTime } from './params.ts';
import { PartitionUnavailableError } from './partition-querier.ts';

const MAX_POINTS_PER_SERIES = 11_000;

export interface PrometheusApiOptions {
  querier: Querier;
  engine: Engine;
  multitenancyEnabled: boolean;
  logger: Logger;
  registry: Registry;
  /** Route prefixes, e.g. ['/api/v1', '/prometheus/api/v1']. */
  prefixes: string[];
}

type Handler = (params: URLSearchParams, tenant: string, signal: AbortSignal) => Promise<unknown>;

export function registerPrometheusApi(app: FastifyInstance, opts: PrometheusApiOptions): void {
  const latency = new Histogram({
    name: 'strata_querier_request_duration_seconds',
    help: 'Query API latency by endpoint and status code.',
    labelNames: ['endpoint', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [opts.registry],
  });
  const { querier, engine } = opts;

  const handlers: Record<string, Handler> = {
    query: async (p, tenant, signal) => {
      const query = required(p, 'query');
      const time = parseTime(p.get('time'), 'time', Date.now());
      return toPrometheusData(await engine.instantQuery({ tenant, query, time, signal }));
    },
    query_range: async (p, tenant, signal) => {
      const query = required(p, 'query');
      const start = parseTime(p.get('start'), 'start', NaN);
      const end = parseTime(p.get('end'), 'end', NaN);
      if (Number.isNaN(start)) throw badData('invalid parameter "start": cannot parse "" to a valid timestamp');
      if (Number.isNaN(end)) throw badData('invalid parameter "end": cannot parse "" to a valid timestamp');
      if (end < start) throw badData('invalid parameter "end": end timestamp must not be before start time');
      const step = parseStep(p.get('step'), 'step');
      if (step <= 0) throw badData('invalid parameter "step": zero or negative query resolution step widths are not accepted. Try a positive integer');
      if ((end - start) / step > MAX_POINTS_PER_SERIES) {
        throw badData('exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)');
      }
      return toPrometheusData(await engine.rangeQuery({ tenant, query, start, end, step, signal }));
    },
    series: async (p, tenant) => {
      const matcherSets = matchParams(p, true);
      const { mint, maxt } = range(p);
      const seen = new Map<string, Record<string, string>>();
      for (const matchers of matcherSets) {
        for (const s of await querier.select({ tenant, matchers, mint, maxt })) {
          const rec = labelsToRecord(s.labels);
          seen.set(JSON.stringify(rec), rec);
        }
      }
      return [...seen.values()];
    },
    labels: async (p, tenant) => {
      const { mint, maxt } = range(p);
      const sets = matchParams(p, false);
      const names = new Set<string>();
      for (const matchers of sets.length > 0 ? sets : [[]]) {
        for (const n of await querier.labelNames({ tenant, matchers, mint, maxt })) names.add(n);
      }
      return limit([...names].sort(), p);
    },
  };

  const labelValues = async (name: string, p: URLSearchParams, tenant: string) => {
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name)) throw badData(`invalid label name: "${name}"`);
    const { mint, maxt } = range(p);
    const sets = matchParams(p, false);
    const values = new Set<string>();
    for (const matchers of sets.length > 0 ? sets : [[]]) {
      for (const v of await querier.labelValues({ tenant, matchers, mint, maxt, name })) values.add(v);
    }
    return limit([...values].sort(), p);
  };

  const run = async (endpoint: string, req: FastifyRequest, reply: FastifyReply, fn: Handler) => {
    const end = latency.startTimer({ endpoint });
    const abort = new AbortController();
    // The client went away before the answer: stop evaluating. (The request's own 'close' fires once its body is read.)
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    try {
      const tenant = tenantFromHeader(req.headers['x-scope-orgid'], opts.multitenancyEnabled);
      const data = await fn(requestParams(req), tenant, abort.signal);
      end({ status: 200 });
      return reply.code(200).send({ status: 'success', data });
    } catch (err) {
      const e = toApiError(err);
      end({ status: e.status });
      if (e.status >= 500) opts.logger.warn({ endpoint, err: e.message }, 'query failed');
      return reply.code(e.status).send({ status: 'error', errorType: e.errorType, error: e.message });
    }
  };

  void app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
      done(null, body),
    );
    for (const prefix of opts.prefixes) {
      for (const [name, fn] of Object.entries(handlers)) {
        scope.route({ method: ['GET', 'POST'], url: `${prefix}/${name}`, handler: (req, reply) => run(name, req, reply, fn) });
      }
      scope.route({
        method: ['GET'],
        url: `${prefix}/label/:name/values`,
        handler: (req, reply) =>
          run('label_values', req, reply, (p, tenant) => labelValues((req.params as { name: string }).name, p, tenant)),
      });
    }
  });
}

function requestParams(req: FastifyRequest): URLSearchParams {
  const url = req.raw.url ?? '';
  const q = url.indexOf('?');
  const params = new URLSearchParams(q >= 0 ? url.slice(q + 1) : '');
  if (typeof req.body === 'string') for (const [k, v] of new URLSearchParams(req.body)) params.append(k, v);
  return params;
}

function required(p: URLSearchParams, name: string): string {
  const v = p.get(name);
  if (v === null || v === '') throw badData(`invalid parameter "${name}": missing ${name}`);
  return v;
}

function range(p: URLSearchParams): { mint: number; maxt: number } {
  const mint = parseTime(p.get('start'), 'start', MIN_TIME);
  const maxt = parseTime(p.get('end'), 'end', MAX_TIME);
  if (maxt < mint) throw badData('invalid parameter "end": end timestamp must not be before start time');
  return { mint, maxt };
}

function matchParams(p: URLSearchParams, requireOne: boolean): Matcher[][] {
  const raw = p.getAll('match[]');
  if (raw.length === 0 && requireOne) throw badData('no match[] parameter provided');
  return raw.map((s) => {
    try {
      return parseSelector(s);
    } catch (err) {
      throw badData(`invalid parameter "match[]": ${(err as Error).message}`);
    }
  });
}

function limit(values: string[], p: URLSearchParams): string[] {
  const raw = p.get('limit');
  if (raw === null || raw === '') return values;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw badData(`invalid parameter "limit": cannot parse "${raw}" to a non-negative integer`);
  return n === 0 ? values : values.slice(0, n);
}

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof TenantError) return new ApiError('bad_data', err.message, err.status);
  const e = err as Error & { errorType?: string };
  switch (e.errorType) {
    case 'bad_data':
      return new ApiError('bad_data', e.message);
    case 'execution':
      return new ApiError('execution', e.message);
    case 'timeout':
      return new ApiError('timeout', e.message);
    case 'canceled':
      return new ApiError('canceled', e.message);
  }
  if (err instanceof PartitionUnavailableError) return new ApiError('unavailable', e.message);
  return new ApiError('internal', e.message ?? String(err));
}
