// /metrics text for a prom-client registry in both formats scrapers ask for: OpenMetrics 1.0
// (the one that carries exemplars; Prometheus asks for it) and the Prometheus text format 0.0.4.
// Rendered here from the registry's values rather than by prom-client, whose OpenMetrics
// rendering renames counters in place (breaking the next plain-text scrape) and whose
// exemplar-carrying metrics live only in OpenMetrics registries.

import { Registry } from 'prom-client';

export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';
export const PROMETHEUS_TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type ExpositionFormat = 'openmetrics' | 'prometheus';

type Labels = Record<string, string | number | undefined>;

interface Value {
  value: number;
  labels?: Labels;
  sharedLabels?: Labels;
  metricName?: string;
  exemplar?: { labelSet: Labels; value: number; timestamp?: number } | null;
}

/** OpenMetrics when the Accept header lists it with a non-zero quality (Prometheus does), else the text format. */
export function negotiateFormat(accept: string | undefined): ExpositionFormat {
  if (accept === undefined) return 'prometheus';
  const om = accept.split(',').some((part) => {
    const [type, ...params] = part.split(';').map((s) => s.trim());
    if (type.toLowerCase() !== 'application/openmetrics-text') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
  return om ? 'openmetrics' : 'prometheus';
}

export async function renderMetrics(registry: Registry, format: ExpositionFormat): Promise<string> {
  const om = format === 'openmetrics';
  const lines: string[] = [];
  for (const m of await registry.getMetricsAsJSON()) {
    const type = String(m.type);
    // An OpenMetrics counter family has no _total; its samples do. The text format names both with it.
    const family = om && type === 'counter' ? m.name.replace(/_total$/, '') : m.name;
    lines.push(`# HELP ${family} ${om ? escapeValue(m.help) : escapeHelp(m.help)}`);
    lines.push(`# TYPE ${family} ${type}`);
    for (const v of m.values as Value[]) {
      const name = om && type === 'counter' ? `${family}_total` : (v.metricName ?? m.name);
      let line = `${name}${formatLabels({ ...v.labels, ...v.sharedLabels })} ${formatNumber(v.value)}`;
      const e = v.exemplar;
      if (om && e && Object.keys(e.labelSet).length > 0) {
        line += ` # ${formatLabels(e.labelSet)} ${formatNumber(e.value)}`;
        if (e.timestamp !== undefined) line += ` ${e.timestamp}`;
      }
      lines.push(line);
    }
  }
  if (om) lines.push('# EOF');
  return lines.join('\n') + '\n';
}

function formatLabels(labels: Labels): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(labels)) {
    if (v === undefined) continue;
    parts.push(`${k}="${escapeValue(typeof v === 'number' ? formatNumber(v) : v)}"`);
  }
  return parts.length > 0 ? `{${parts.join(',')}}` : '';
}

function formatNumber(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function escapeValue(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** Histograms take exemplars only in an OpenMetrics registry (prom-client refuses them elsewhere); tests may pass a plain one. */
export function exemplarsEnabled(registry: Registry): boolean {
  return (registry.contentType as string) === Registry.OPENMETRICS_CONTENT_TYPE;
}
