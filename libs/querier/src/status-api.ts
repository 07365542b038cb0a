// Prometheus' status endpoints on the querier: /status/config (the effective
// config as YAML, secrets redacted), /status/flags, /status/runtimeinfo,
// /status/tsdb (head cardinality of the caller's tenant, Prometheus' shape),
// and /parse_query (the expression tree Prometheus' UI draws).

import { availableParallelism } from 'node:os';
import { compareUtf8, type Series } from '@strata/model';
import { parseExpr } from '@strata/promql';
import { isSecretFlag } from '@strata/service';
import type { ExtraRoute, RequestContext } from './api.ts';
import { badData } from './errors.ts';
import { required } from './params.ts';
import { translateAst } from './parse-query.ts';

export interface StatusOptions {
  /** The effective config, flag name → value (what -config.file and the flags resolved to). */
  config: Record<string, unknown>;
  /** Data older than this is in blocks (storageRetention reports the compactor's retention). */
  retention?: string;
  /** The in-memory window /status/tsdb describes (the ingesters' head), in ms. */
  headWindowMs: number;
  startTime?: Date;
  now?: () => number;
}

/** Credentials are printed as Prometheus prints secrets. */
const SECRET = '<secret>';

export function redactedConfig(config: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config)) out[k] = isSecretFlag(k) && v !== '' && v !== undefined ? SECRET : v;
  return out;
}

/** Flat YAML: one `key: value` line per setting, values JSON-quoted (valid YAML scalars). */
export function configYaml(config: Record<string, unknown>): string {
  return (
    Object.keys(config)
      .sort(compareUtf8)
      .map((k) => `${k}: ${yamlScalar(config[k])}`)
      .join('\n') + '\n'
  );
}

function yamlScalar(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === undefined || v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  return JSON.stringify(v);
}

function flagValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v) ?? '';
}

export function statusRoutes(opts: StatusOptions): ExtraRoute[] {
  const now = opts.now ?? Date.now;
  const startTime = opts.startTime ?? new Date();
  const redacted = redactedConfig(opts.config);
  const yaml = configYaml(redacted);
  const flags = Object.fromEntries(Object.entries(redacted).map(([k, v]) => [k, flagValue(v)]));

  const runtimeinfo = async () => {
    const handles = (process as unknown as { _getActiveHandles?: () => unknown[] })._getActiveHandles?.().length ?? 0;
    return {
      data: {
        startTime: startTime.toISOString(),
        CWD: process.cwd(),
        reloadConfigSuccess: true,
        lastConfigTime: startTime.toISOString(),
        corruptionCount: 0,
        goroutineCount: handles,
        GOMAXPROCS: availableParallelism(),
        GOMEMLIMIT: process.constrainedMemory?.() ?? 0,
        GOGC: '',
        GODEBUG: '',
        storageRetention: opts.retention ?? 'unlimited',
      },
    };
  };

  const tsdb = async ({ params, tenant, querier, signal }: RequestContext) => {
    const raw = params.get('limit');
    const limit = raw === null || raw === '' ? 10 : Number(raw);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw badData('limit must be a positive number');
    const maxt = now();
    const mint = maxt - opts.headWindowMs;
    const series = await querier.select({ tenant, matchers: [{ type: '=~', name: '__name__', value: '.+' }], mint, maxt, signal });
    return { data: tsdbStatus(series, limit) };
  };

  const parseQuery = async ({ params }: RequestContext) => ({
    data: translateAst(parseExpr(required(params, 'query'), { enableExperimentalFunctions: true, enableDurationExpressions: true })),
  });

  return [
    { endpoint: 'status_config', path: '/status/config', methods: ['GET'], handler: async () => ({ data: { yaml } }) },
    { endpoint: 'status_flags', path: '/status/flags', methods: ['GET'], handler: async () => ({ data: flags }) },
    { endpoint: 'status_runtimeinfo', path: '/status/runtimeinfo', methods: ['GET'], handler: runtimeinfo },
    { endpoint: 'status_tsdb', path: '/status/tsdb', methods: ['GET'], handler: tsdb },
    { endpoint: 'parse_query', path: '/parse_query', methods: ['GET', 'POST'], handler: parseQuery },
  ];
}

interface Stat {
  name: string;
  value: number;
}

/** Prometheus' TSDBStatus over a set of series: head stats and the top `limit` of each table. */
export function tsdbStatus(series: Series[], limit: number) {
  const seriesByMetric = new Map<string, number>();
  const valuesByName = new Map<string, Set<string>>();
  const seriesByPair = new Map<string, number>();
  let chunkCount = 0;
  let minTime = Infinity;
  let maxTime = -Infinity;
  let pairs = 0;
  for (const s of series) {
    const n = s.timestamps.length;
    if (n > 0) {
      minTime = Math.min(minTime, s.timestamps[0]);
      maxTime = Math.max(maxTime, s.timestamps[n - 1]);
      chunkCount += Math.ceil(n / 120);
    }
    for (const l of s.labels) {
      if (l.name === '__name__') seriesByMetric.set(l.value, (seriesByMetric.get(l.value) ?? 0) + 1);
      let vs = valuesByName.get(l.name);
      if (!vs) valuesByName.set(l.name, (vs = new Set()));
      vs.add(l.value);
      const pair = `${l.name}=${l.value}`;
      if (!seriesByPair.has(pair)) pairs++;
      seriesByPair.set(pair, (seriesByPair.get(pair) ?? 0) + 1);
    }
  }
  const top = (m: Map<string, number>): Stat[] =>
    [...m.entries()]
      .map(([name, value]) => ({ name, value }))
      .sort((a, b) => b.value - a.value || compareUtf8(a.name, b.name))
      .slice(0, limit);
  const memory = new Map<string, number>();
  const counts = new Map<string, number>();
  for (const [name, vs] of valuesByName) {
    counts.set(name, vs.size);
    let bytes = 0;
    for (const v of vs) bytes += Buffer.byteLength(v);
    memory.set(name, bytes);
  }
  return {
    headStats: {
      numSeries: series.length,
      numLabelPairs: pairs,
      chunkCount,
      minTime: Number.isFinite(minTime) ? minTime : Number.MAX_SAFE_INTEGER,
      maxTime: Number.isFinite(maxTime) ? maxTime : Number.MIN_SAFE_INTEGER,
    },
    seriesCountByMetricName: top(seriesByMetric),
    labelValueCountByLabelName: top(counts),
    memoryInBytesByLabelName: top(memory),
    seriesCountByLabelValuePair: top(seriesByPair),
  };
}
