// The bench's one table: a column per system, Strata's and VictoriaMetrics'
// ratios to Prometheus beside them, and the load average each figure was taken at.

import type { QueryFigures, ReplayFigures, SearchOutcome, SteadyFigures } from './phases.ts';
import type { DiskFigure } from './targets.ts';

export interface TargetReport {
  name: string;
  key: 'strata' | 'prometheus' | 'victoria';
  protocol: string;
  error?: string;
  search?: SearchOutcome;
  steady?: SteadyFigures;
  queries?: QueryFigures;
  disk?: DiskFigure[];
  samplesWritten?: number;
  replay?: ReplayFigures;
  loadStart: string;
  loadEnd?: string;
}

const int = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? 'n/m' : Math.round(v).toLocaleString('en-US'));
const dec = (v: number | undefined, d = 1) => (v === undefined || !Number.isFinite(v) ? 'n/m' : v.toFixed(d));

interface Row {
  label: string;
  values: (t: TargetReport) => number | undefined;
  format: (v: number | undefined) => string;
}

function diskPerSample(t: TargetReport, i: number): number | undefined {
  const d = t.disk?.[i];
  if (!d || d.bytes === undefined || !t.samplesWritten) return undefined;
  return d.bytes / t.samplesWritten;
}

const ROWS: Row[] = [
  { label: 'max sustained samples/s (no failed push)', values: (t) => t.search?.maxRate, format: int },
  { label: 'samples per CPU-second (all processes, at ½ max)', values: (t) => t.steady?.samplesPerCpuSecond, format: int },
  { label: 'RSS bytes per series (Δ over idle, ½ max)', values: (t) => t.steady?.rssPerSeries, format: int },
  { label: 'push latency p50 ms at ½ max', values: (t) => t.steady?.result.p50, format: (v) => dec(v) },
  { label: 'push latency p99 ms at ½ max', values: (t) => t.steady?.result.p99, format: (v) => dec(v) },
  { label: 'disk bytes/sample, primary (see below)', values: (t) => diskPerSample(t, 0), format: (v) => dec(v, 2) },
  { label: 'disk bytes/sample, secondary (see below)', values: (t) => diskPerSample(t, 1), format: (v) => dec(v, 2) },
  { label: 'query p50 ms (fixed set)', values: (t) => t.queries?.p50, format: (v) => dec(v) },
  { label: 'query p99 ms (fixed set)', values: (t) => t.queries?.p99, format: (v) => dec(v) },
];

export function renderTable(reports: TargetReport[]): string {
  const prom = reports.find((r) => r.key === 'prometheus');
  const cols: { title: string; cell: (row: Row) => string }[] = [];
  for (const r of reports) {
    cols.push({ title: r.name, cell: (row) => (r.error ? 'error' : row.format(row.values(r))) });
    if (r.key !== 'prometheus' && prom) {
      cols.push({
        title: '×Prom',
        cell: (row) => {
          const a = row.values(r);
          const b = row.values(prom);
          return a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? '' : `${(a / b).toFixed(2)}×`;
        },
      });
    }
  }
  return formatTable(
    ['figure', ...cols.map((c) => c.title)],
    ROWS.map((row) => [row.label, ...cols.map((c) => c.cell(row))]),
  );
}

/** A Markdown table: the first column left-aligned, the others right-aligned. */
export function formatTable(header: string[], body: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => '| ' + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ') + ' |';
  const out = [line(header), '|' + widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|') + '|', ...body.map(line)];
  return out.join('\n');
}

export function renderNotes(reports: TargetReport[]): string {
  const lines: string[] = [];
  for (const r of reports) {
    lines.push(`${r.name} (remote write ${r.protocol}): load average at start ${r.loadStart}, at end ${r.loadEnd ?? '?'}`);
    if (r.error) lines.push(`  error: ${r.error}`);
    const s = r.search;
    if (s) {
      const b = s.best;
      lines.push(
        `  max rate: ${b ? `${int(b.result.achievedRate)}/s achieved at a ${int(b.rate)}/s step (M×N ${b.result.amplificationM.toFixed(1)}×${b.result.amplificationN}, ${b.result.series} series), load ${b.load}` : 'no step passed'}; ` +
          `first failing step: ${s.steps.filter((x) => !x.ok).map((x) => `${int(x.rate)}/s (${x.why})`)[0] ?? 'none (stopped by the time budget or --max-rate)'}`,
      );
    }
    const st = r.steady;
    if (st) {
      const top = Object.entries(st.cpuByProcess)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${v.toFixed(1)}s`)
        .join(', ');
      lines.push(
        `  ½ max: ${int(st.result.achievedRate)}/s for ${((st.result.endedAt - st.result.startedAt) / 1000).toFixed(0)}s over ${st.result.shards} shards, ${st.result.failedSamples} failed, ` +
          `CPU ${st.cpuSeconds.toFixed(1)}s (${top}), load ${st.load}; the target took ${(st.settledMs / 1000).toFixed(1)}s to settle before it`,
      );
      if (st.breakdown) lines.push(`  ${st.breakdown}`);
      lines.push(
        `  memory: ${int(st.seriesInMemory)} series holding ${int(st.samplesPerSeries)} samples each; RSS of the series holders ${int(st.rssNow / 2 ** 20)} MiB (idle ${int(st.rssIdle / 2 ** 20)} MiB), ` +
          `all processes ${int(st.rssAllProcesses / 2 ** 20)} MiB; total RSS/series ${int(st.rssNow / Math.max(1, st.seriesInMemory))} B`,
      );
    }
    for (const [i, d] of (r.disk ?? []).entries()) {
      lines.push(
        `  disk ${i === 0 ? 'primary' : 'secondary'}: ${d.what}: ${d.bytes === undefined ? 'not measured' : `${int(d.bytes)} B for ${int(r.samplesWritten)} samples`}${d.note ? ` (${d.note})` : ''}`,
      );
    }
    for (const q of r.queries?.perQuery ?? []) {
      lines.push(
        `  query ${q.kind} ${q.query}: p50 ${dec(q.p50)}ms p99 ${dec(q.p99)}ms, ${q.results} series in result${q.errors ? `, ${q.errors} errors (${q.firstError})` : ''}`,
      );
    }
    const rp = r.replay;
    if (rp) {
      lines.push(
        `  replay: ingester-zone-b-0 down ${(rp.downMs / 1000).toFixed(0)}s, then replayed ${int(rp.replayedSamples)} samples in ${dec(rp.replayMs / 1000)}s ` +
          `(${int(rp.replayRate)}/s; startup before the first sample ${dec(rp.startupMs / 1000)}s) vs live ${int(rp.liveRatePerIngester)}/s per ingester: ${dec(rp.ratio)}× live${rp.ready ? '' : ' (NOT ready before the deadline)'}; load ${rp.load}`,
      );
    }
  }
  return lines.join('\n');
}
