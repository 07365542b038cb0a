// Turns query results into the `data` object of Prometheus' HTTP API
// (/api/v1/query and /api/v1/query_range) exactly: timestamps as seconds with
// millisecond precision, values as Go formats float64 ("NaN", "+Inf", "-Inf").

import { compareLabels, labelsToRecord } from '@strata/model';
import { formatGoFloat } from './go-compat.ts';
import type { FPoint, QueryValue } from './values.ts';

/** A [seconds, "value"] pair as Prometheus' API writes it. */
export type PrometheusPoint = [number, string];

export type PrometheusData =
  | { resultType: 'vector'; result: { metric: Record<string, string>; value: PrometheusPoint }[] }
  | { resultType: 'matrix'; result: { metric: Record<string, string>; values: PrometheusPoint[] }[] }
  | { resultType: 'scalar'; result: PrometheusPoint }
  | { resultType: 'string'; result: [number, string] };

/** Go's strconv.FormatFloat(v, 'f', -1, 64) with Prometheus' "NaN", "+Inf" and "-Inf". */
export function formatValue(v: number): string {
  return formatGoFloat(v);
}

/** Milliseconds to the seconds number Prometheus writes (1700000000123 → 1700000000.123). */
export function formatTimestamp(ms: number): number {
  return ms / 1000;
}

function point(p: FPoint): PrometheusPoint {
  return [formatTimestamp(p.t), formatValue(p.f)];
}

/** The `data` object of a Prometheus API response for a query result. */
export function toPrometheusData(result: QueryValue): PrometheusData {
  switch (result.resultType) {
    case 'vector':
      return {
        resultType: 'vector',
        result: result.result.map((s) => ({ metric: labelsToRecord(s.metric), value: point(s) })),
      };
    case 'matrix':
      return {
        resultType: 'matrix',
        result: result.result
          .slice()
          .sort((a, b) => compareLabels(a.metric, b.metric))
          .map((s) => ({ metric: labelsToRecord(s.metric), values: s.floats.map(point) })),
      };
    case 'scalar':
      return { resultType: 'scalar', result: point(result.result) };
    case 'string':
      return { resultType: 'string', result: [formatTimestamp(result.result.t), result.result.value] };
  }
}
