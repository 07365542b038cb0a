// The scale run's table: ingest, failures, memory and the span-long queries of each target side
// by side with ratios to Prometheus, then the notes a reader needs to trust or doubt a figure,
// and whether issue 44's targets were met.

import { formatAttempts, type BackfillFigures } from './scale-backfill.ts';
import type { QueryTiming } from './scale-queries.ts';
import { formatTable } from './report.ts';

export interface ScaleTargetReport {
  name: string;
  key: 'strata' | 'prometheus' | 'victoria';
  series: number;
  error?: string;
  loadStart: string;
  loadAfterBackfill?: string;
  loadEnd?: string;
  /** What the target said about its own sizing at start (Strata: memory budget, heap, limits). */
  startup: string[];
  rssIdle?: number;
  backfill?: BackfillFigures;
  /** From the end of the backfill until everything acknowledged was consumed (Strata: its ingester, from Kafka). */
  catchUpMs?: number;
  caughtUp?: boolean;
  settledMs?: number;
  rss?: number;
  /** VmHWM: the most RSS the process held at any time. */
  peakRss?: number;
  kafkaRss?: number;
  kafkaPeakRss?: number;
  /** The target's own counters after the backfill (series, samples appended, rejected). */
  counters: Record<string, number | undefined>;
  queries: QueryTiming[];
  /** Each query's answer against Prometheus'. */
  comparisons: { label: string; equal: boolean; summary: string }[];
  /** Warnings, errors and anything that is not a log line (a V8 fatal error) the target logged. */
  logProblems: { count: number; first: string[] };
  /** Set when the process went away. */
  died?: string;
}

const int = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? 'n/m' : Math.round(v).toLocaleString('en-US'));
const dec = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? 'n/m' : v.toFixed(1));
const mib = (v: number | undefined) => (v === undefined ? undefined : v / 2 ** 20);

/** Samples per second until every acknowledged sample was consumed (the same as acknowledged when a push appends). */
function ingestedRate(r: ScaleTargetReport): number | undefined {
  const b = r.backfill;
  if (!b || r.caughtUp === false) return undefined;
  return b.okSamples / (b.seconds + (r.catchUpMs ?? 0) / 1000);
}

function perSeries(bytes: number | undefined, r: ScaleTargetReport): number | undefined {
  return bytes === undefined ? undefined : bytes / r.series;
}

interface Row {
  label: string;
  value: (r: ScaleTargetReport) => number | string | undefined;
  format?: (v: number | undefined) => string;
  /** Show the ratio to Prometheus. */
  ratio?: boolean;
}

function rows(reports: ScaleTargetReport[], span: string): Row[] {
  const q = reports.find((r) => r.queries.length > 0)?.queries ?? [];
  const out: Row[] = [
    { label: 'samples acknowledged / sent', value: (r) => (r.backfill ? `${int(r.backfill.okSamples)} / ${int(r.backfill.plannedSamples)}` : undefined) },
    { label: 'backfill wall time s', value: (r) => r.backfill?.seconds, format: int },
    { label: 'ingest rate samples/s (acknowledged)', value: (r) => r.backfill?.rate, format: int, ratio: true },
    { label: 'ingest rate samples/s (until all consumed)', value: ingestedRate, format: int, ratio: true },
    { label: 'failed push attempts (any non-2xx)', value: (r) => r.backfill?.failedAttempts, format: int },
    {
      label: 'samples failed after retries + unsent',
      value: (r) => (r.backfill ? r.backfill.failedSamples + r.backfill.unsentSamples : undefined),
      format: int,
    },
    { label: 'longest time no push was answered s', value: (r) => (r.backfill ? r.backfill.longestSilenceMs / 1000 : undefined), format: int },
    { label: 'process died', value: (r) => (r.error && !r.backfill ? undefined : r.died ? 'YES' : 'no') },
    { label: "RSS at the backfill's end MiB", value: (r) => mib(r.backfill?.rssAtEnd), format: int, ratio: true },
    { label: 'RSS after settling MiB (the process)', value: (r) => mib(r.rss), format: int, ratio: true },
    { label: 'RSS bytes per series', value: (r) => perSeries(r.rss, r), format: int, ratio: true },
    {
      label: 'RSS bytes per series over idle',
      value: (r) => (r.rss === undefined || r.rssIdle === undefined ? undefined : perSeries(r.rss - r.rssIdle, r)),
      format: int,
      ratio: true,
    },
    { label: 'peak RSS MiB (VmHWM)', value: (r) => mib(r.peakRss), format: int, ratio: true },
    { label: "Kafka broker's RSS MiB (not above)", value: (r) => mib(r.kafkaRss), format: int },
  ];
  q.forEach((x, i) =>
    out.push({ label: `${x.label}: ${/^\w+/.exec(x.query)?.[0] ?? ''} over ${span}, p50 ms`, value: (r) => r.queries[i]?.p50, format: dec, ratio: true }),
  );
  out.push({
    label: "answers equal to Prometheus'",
    value: (r) => (r.key === 'prometheus' || r.comparisons.length === 0 ? undefined : r.comparisons.every((c) => c.equal) ? 'yes' : 'no'),
  });
  return out;
}

/** `span`: what the queries cover, e.g. '6h'. */
export function renderScaleTable(reports: ScaleTargetReport[], span: string): string {
  const prom = reports.find((r) => r.key === 'prometheus');
  const header = ['figure'];
  for (const r of reports) {
    header.push(r.name);
    if (prom && r !== prom) header.push('×Prom');
  }
  const body = rows(reports, span).map((row) => {
    const cells = [row.label];
    for (const r of reports) {
      const v = row.value(r);
      cells.push(typeof v === 'string' ? v : (row.format ?? int)(v));
      if (prom && r !== prom) {
        const p = row.value(prom);
        cells.push(
          row.ratio && typeof v === 'number' && typeof p === 'number' && Number.isFinite(v) && Number.isFinite(p) && p !== 0 ? `${(v / p).toFixed(2)}×` : '',
        );
      }
    }
    return cells;
  });
  return formatTable(header, body);
}

export function renderScaleNotes(reports: ScaleTargetReport[]): string {
  const lines: string[] = [];
  for (const r of reports) {
    lines.push(`${r.name}: load average at start ${r.loadStart}, after the backfill ${r.loadAfterBackfill ?? '?'}, at end ${r.loadEnd ?? '?'}`);
    for (const s of r.startup) lines.push(`  said at start: ${s}`);
    if (r.error) lines.push(`  error: ${r.error}`);
    if (r.died) lines.push(`  DIED: ${r.died}`);
    if (r.backfill?.stalled) lines.push(`  STALLED: ${r.backfill.stalled}`);
    const b = r.backfill;
    if (b) {
      lines.push(
        `  backfill: ${b.roundsSent} rounds, ${int(b.okSamples)} of ${int(b.plannedSamples)} samples acknowledged in ${dec(b.seconds)}s; attempts by answer: ${formatAttempts(b.attempts)}; ` +
          `${b.retries} retries, ${b.failedRequests} requests failed after retries; push p50 ${dec(b.p50)}ms p99 ${dec(b.p99)}ms max ${dec(b.max)}ms`,
      );
      if (b.firstError) lines.push(`  first error: ${b.firstError}`);
      lines.push(
        `  peak RSS sampled each second during the backfill: ${int(mib(b.peakRss))} MiB${b.peakRssOthers > 0 ? ` (other processes ${int(mib(b.peakRssOthers))} MiB)` : ''}`,
      );
    }
    if (r.catchUpMs !== undefined)
      lines.push(
        `  consumed everything acknowledged ${dec(r.catchUpMs / 1000)}s after the backfill${r.caughtUp === false ? ' — NOT caught up before the deadline' : ''}`,
      );
    if (r.settledMs !== undefined) {
      lines.push(
        `  memory after settling ${dec(r.settledMs / 1000)}s: RSS ${int(mib(r.rss))} MiB (idle before the backfill ${int(mib(r.rssIdle))} MiB, peak ${int(mib(r.peakRss))} MiB) for ${int(r.series)} series` +
          `${r.kafkaRss !== undefined ? `; Kafka broker ${int(mib(r.kafkaRss))} MiB (peak ${int(mib(r.kafkaPeakRss))} MiB)` : ''}`,
      );
    }
    const counters = Object.entries(r.counters);
    if (counters.length > 0) lines.push(`  its counters: ${counters.map(([k, v]) => `${k} ${int(v)}`).join(', ')}`);
    for (const q of r.queries) {
      lines.push(
        `  ${q.label}: ${q.query} — p50 ${dec(q.p50)}ms, max ${dec(q.max)}ms over ${q.runs.length} runs (first, not counted: ${dec(q.firstRunMs)}ms); ` +
          `${q.series} series, ${int(q.points)} points${q.errors > 0 ? `; ${q.errors} errors: ${q.firstError}` : ''}`,
      );
    }
    for (const c of r.comparisons) lines.push(`  ${c.label} against Prometheus: ${c.summary}`);
    if (r.logProblems.count > 0) {
      lines.push(`  logged ${r.logProblems.count} warnings/errors; first distinct:`);
      for (const l of r.logProblems.first) lines.push(`    ${l}`);
    }
  }
  return lines.join('\n');
}

/** Issue 44's scale targets for Strata, against Prometheus' figures of the same run. */
export function renderVerdict(reports: ScaleTargetReport[]): string {
  const s = reports.find((r) => r.key === 'strata');
  const p = reports.find((r) => r.key === 'prometheus');
  if (!s) return '';
  const b = s.backfill;
  const lines = [
    `no crash and no failed push: ${!s.died && !s.error && b && !b.stalled && b.failedAttempts === 0 && b.failedSamples + b.unsentSamples === 0 ? 'met' : 'NOT met'}` +
      `${b ? ` (${b.failedAttempts} failed attempts; attempts by answer ${formatAttempts(b.attempts)}; ${b.failedSamples + b.unsentSamples} samples failed or unsent${s.died ? `; died: ${s.died}` : ''}${b.stalled ? `; ${b.stalled}` : ''})` : ''}`,
  ];
  if (p) {
    const a = perSeries(s.rss, s);
    const c = perSeries(p.rss, p);
    lines.push(
      `RSS per series ≤ Prometheus': ${a !== undefined && c !== undefined ? `${a <= c ? 'met' : 'NOT met'} (${int(a)} B against ${int(c)} B)` : 'not measured'}`,
    );
    s.queries.forEach((q, i) => {
      const pq = p.queries[i];
      const ok = pq && Number.isFinite(q.p50) && Number.isFinite(pq.p50);
      lines.push(
        `${q.label} query within 2× Prometheus': ${ok ? `${q.p50 <= 2 * pq.p50 ? 'met' : 'NOT met'} (${dec(q.p50)}ms against ${dec(pq.p50)}ms, ${(q.p50 / pq.p50).toFixed(2)}×)` : 'not measured'}`,
      );
    });
  }
  return lines.map((l) => `  ${l}`).join('\n');
}
