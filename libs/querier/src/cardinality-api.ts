// Mimir's cardinality API (/api/v1/cardinality/label_names, /label_values and
// /active_series) over the caller's tenant's in-memory series (the ingesters'
// head window; active series: a sample in the last 20 minutes): Mimir's bare
// JSON shapes, `selector` and `limit` parameters.

import { compareUtf8, labelsToRecord, type Matcher } from '@strata/model';
import { parseSelector } from '@strata/promql';
import type { ExtraRoute, RawReply, RequestContext } from './api.ts';
import { badData } from './errors.ts';

export interface CardinalityOptions {
  /** The window counted (the ingesters' head), in ms. */
  headWindowMs: number;
  /** A series is active with a sample this recent (Mimir's -ingester.active-series-metrics-idle-timeout, 20m). */
  activeWindowMs?: number;
  now?: () => number;
}

/** Mimir's default idle timeout of an active series. */
const ACTIVE_WINDOW_MS = 20 * 60_000;

const MAX_LIMIT = 500;

function limitParam(p: URLSearchParams): number {
  const raw = p.get('limit');
  if (raw === null || raw === '') return 20;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > MAX_LIMIT) throw badData(`limit param must be an integer between 0 and ${MAX_LIMIT}`);
  return n;
}

function selectorParam(p: URLSearchParams): Matcher[] {
  const raw = p.get('selector');
  if (raw === null || raw === '') return [{ type: '=~', name: '__name__', value: '.+' }];
  try {
    return parseSelector(raw);
  } catch (err) {
    throw badData(`failed to parse selector: ${(err as Error).message}`);
  }
}

const json = (body: unknown): RawReply => ({ raw: true, status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

export function cardinalityRoutes(opts: CardinalityOptions): ExtraRoute[] {
  const now = opts.now ?? Date.now;
  const series = ({ params, tenant, querier, signal }: RequestContext) => {
    const maxt = now();
    return querier.select({ tenant, matchers: selectorParam(params), mint: maxt - opts.headWindowMs, maxt, signal });
  };

  const labelNames = async (ctx: RequestContext) => {
    const limit = limitParam(ctx.params);
    const values = new Map<string, Set<string>>();
    for (const s of await series(ctx)) {
      for (const l of s.labels) {
        let set = values.get(l.name);
        if (!set) values.set(l.name, (set = new Set()));
        set.add(l.value);
      }
    }
    let total = 0;
    for (const v of values.values()) total += v.size;
    const cardinality = [...values.entries()]
      .map(([label_name, v]) => ({ label_name, label_values_count: v.size }))
      .sort((a, b) => b.label_values_count - a.label_values_count || compareUtf8(a.label_name, b.label_name))
      .slice(0, limit);
    return json({ label_values_count_total: total, label_names_count: values.size, cardinality });
  };

  const labelValues = async (ctx: RequestContext) => {
    const names = ctx.params.getAll('label_names[]');
    if (names.length === 0) throw badData('label_names param is required');
    const limit = limitParam(ctx.params);
    const all = await series(ctx);
    const labels = names.map((name) => {
      const counts = new Map<string, number>();
      let seriesCount = 0;
      for (const s of all) {
        const v = s.labels.find((l) => l.name === name)?.value;
        if (v === undefined) continue;
        seriesCount++;
        counts.set(v, (counts.get(v) ?? 0) + 1);
      }
      return {
        label_name: name,
        label_values_count: counts.size,
        series_count: seriesCount,
        cardinality: [...counts.entries()]
          .map(([label_value, series_count]) => ({ label_value, series_count }))
          .sort((a, b) => b.series_count - a.series_count || compareUtf8(a.label_value, b.label_value))
          .slice(0, limit),
      };
    });
    labels.sort((a, b) => b.series_count - a.series_count || compareUtf8(a.label_name, b.label_name));
    return json({ series_count_total: all.length, labels });
  };

  // Mimir requires the selector here; the series are label sets, sorted.
  const activeSeries = async ({ params, tenant, querier, signal }: RequestContext) => {
    if (!params.has('selector')) throw badData("missing 'selector' parameter");
    const maxt = now();
    const found = await querier.select({ tenant, matchers: selectorParam(params), mint: maxt - (opts.activeWindowMs ?? ACTIVE_WINDOW_MS), maxt, signal });
    const seen = new Map<string, Record<string, string>>();
    for (const s of found) {
      const rec = labelsToRecord(s.labels);
      seen.set(JSON.stringify(rec), rec);
    }
    return json({ data: [...seen.entries()].sort(([a], [b]) => compareUtf8(a, b)).map(([, rec]) => rec) });
  };

  return [
    { endpoint: 'cardinality_active_series', path: '/cardinality/active_series', methods: ['GET', 'POST'], handler: activeSeries },
    { endpoint: 'cardinality_label_names', path: '/cardinality/label_names', methods: ['GET', 'POST'], handler: labelNames },
    { endpoint: 'cardinality_label_values', path: '/cardinality/label_values', methods: ['GET', 'POST'], handler: labelValues },
  ];
}
