// Turns query results into the `data` object of Prometheus' HTTP API
// (/api/v1/query and /api/v1/query_range) exactly: timestamps as seconds with
// millisecond precision, values as Go formats float64 ("NaN", "+Inf", "-Inf").

import { compareLabels, labelsToRecord } from '@strata/model';
import { formatGoFloat } from './go-compat.ts';
import type { FloatHistogram } from './histogram/float-histogram.ts';
import type { FPoint, HPoint, QueryValue } from './values.ts';

/** A [seconds, "value"] pair as Prometheus' API writes it. */
export type PrometheusPoint = [number, string];

/** A native histogram as Prometheus' API writes it: buckets are [boundary rule, lower, upper, count]. */
export interface PrometheusHistogram {
  count: string;
  sum: string;
  buckets?: [number, string, string, string][];
}

type PrometheusHistogramPoint = [number, PrometheusHistogram];

export type PrometheusData =
  | {
      resultType: 'vector';
      result: ({ metric: Record<string, string> } & ({ value: PrometheusPoint } | { histogram: PrometheusHistogramPoint }))[];
    }
  | {
      resultType: 'matrix';
      result: { metric: Record<string, string>; values?: PrometheusPoint[]; histograms?: PrometheusHistogramPoint[] }[];
    }
  | { resultType: 'scalar'; result: PrometheusPoint }
  | { resultType: 'string'; result: [number, string] };

/**
 * A float as Prometheus' API writes it (its jsonutil.MarshalFloat): Go's strconv.FormatFloat(v, 'f', -1, 64),
 * or 'e' (1e-07, 1.5e+21: two exponent digits at least) below 1e-6 and from 1e21 on; "NaN", "+Inf", "-Inf".
 */
export function formatValue(v: number): string {
  const abs = Math.abs(v);
  if (abs !== 0 && abs !== Infinity && (abs < 1e-6 || abs >= 1e21)) return v.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  return formatGoFloat(v);
}

/** Milliseconds to the seconds number Prometheus writes (1700000000123 → 1700000000.123). */
export function formatTimestamp(ms: number): number {
  return ms / 1000;
}

function point(p: FPoint): PrometheusPoint {
  return [formatTimestamp(p.t), formatValue(p.f)];
}

/** Prometheus' histogram JSON: populated buckets in ascending order with their boundary rule. */
export function formatHistogram(h: FloatHistogram): PrometheusHistogram {
  const out: PrometheusHistogram = { count: formatValue(h.count), sum: formatValue(h.sum) };
  const buckets: [number, string, string, string][] = [];
  for (const b of h.allBuckets()) {
    if (b.count === 0) continue;
    // 0: (lower, upper], 1: [lower, upper), 2: (lower, upper), 3: [lower, upper].
    const rule = b.lowerInclusive ? (b.upperInclusive ? 3 : 1) : b.upperInclusive ? 0 : 2;
    buckets.push([rule, formatValue(b.lower), formatValue(b.upper), formatValue(b.count)]);
  }
  if (buckets.length > 0) out.buckets = buckets;
  return out;
}

function histogramPoint(p: HPoint): PrometheusHistogramPoint {
  return [formatTimestamp(p.t), formatHistogram(p.h)];
}

/** The `data` object of a Prometheus API response for a query result. */
export function toPrometheusData(result: QueryValue): PrometheusData {
  switch (result.resultType) {
    case 'vector':
      return {
        resultType: 'vector',
        result: result.result.map((s) =>
          s.h ? { metric: labelsToRecord(s.metric), histogram: histogramPoint({ t: s.t, h: s.h }) } : { metric: labelsToRecord(s.metric), value: point(s) },
        ),
      };
    case 'matrix':
      return {
        resultType: 'matrix',
        result: result.result
          .slice()
          .sort((a, b) => compareLabels(a.metric, b.metric))
          .map((s) => {
            const out: { metric: Record<string, string>; values?: PrometheusPoint[]; histograms?: PrometheusHistogramPoint[] } = {
              metric: labelsToRecord(s.metric),
            };
            if (s.floats.length > 0 || !s.histograms?.length) out.values = s.floats.map(point);
            if (s.histograms?.length) out.histograms = s.histograms.map(histogramPoint);
            return out;
          }),
      };
    case 'scalar':
      return { resultType: 'scalar', result: point(result.result) };
    case 'string':
      return { resultType: 'string', result: [formatTimestamp(result.result.t), result.result.value] };
  }
}
