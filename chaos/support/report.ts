// A drill's result: chaos/reports/<scenario>.json with the full detail, and one row appended
// to chaos/reports/SUMMARY.md. Numbers are what was measured; nothing here is filled in.

import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DEFAULT_REPORTS_DIR = fileURLToPath(new URL('../reports/', import.meta.url));

type DrillStatus = 'pass' | 'fail' | 'degraded' | 'not_applicable' | 'error';

/** The measured verdict of one drill. */
export interface DrillOutcome {
  status: DrillStatus;
  /** Why the status is not 'pass', one line each. */
  findings: string[];
  acked_samples: number | null;
  lost_samples: number | null;
  query_availability: number | null;
  catch_up_seconds: number | null;
  fault_seconds: number | null;
  /** The longest one batch waited from its first push attempt to its acknowledgement (load.longest_push_stall_ms). */
  longest_push_stall_ms: number | null;
}

export interface DrillReport extends DrillOutcome {
  scenario: string;
  duration_seconds: number;
  started_at: string;
  finished_at: string;
  commit: string;
  [detail: string]: unknown;
}

export function gitCommit(): string {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  try {
    const sha = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${sha}+dirty` : sha;
  } catch {
    return 'unknown';
  }
}

const SUMMARY_HEADER = `# Failure drill summary

One row per run of \`npm run drill -- <scenario>\`, appended; \`<scenario>.json\` beside this file
holds the latest run's detail. \`query_availability\` is the share of probe queries (exact read-back
of already-acknowledged, settled samples) answered correctly during the fault window;
\`catch_up_seconds\` runs from the heal until every process is ready and every sample acknowledged
before the heal reads back exactly; \`longest_push_stall_ms\` is the longest one batch of samples
waited from its first push attempt to its acknowledgement (retries included).

| started (UTC) | scenario | status | acked_samples | lost_samples | query_availability | catch_up_seconds | fault_seconds | longest_push_stall_ms | push errors (retried) | commit |
|---|---|---|---:|---:|---:|---:|---:|---:|---|---|
`;

export function writeReport(report: DrillReport, dir = DEFAULT_REPORTS_DIR): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${report.scenario}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
  const summary = join(dir, 'SUMMARY.md');
  if (!existsSync(summary)) writeFileSync(summary, SUMMARY_HEADER);
  appendFileSync(summary, summaryRow(report) + '\n');
  return file;
}

export function summaryRow(r: DrillReport): string {
  const num = (v: number | null): string => (v === null ? '—' : String(v));
  const load = r.load as { push_errors?: Record<string, number> } | undefined;
  const errors = Object.entries(load?.push_errors ?? {})
    .map(([k, n]) => `${k} ×${n}`)
    .join(', ');
  const status = r.status === 'pass' ? 'pass' : `${r.status}: ${r.findings.join('; ')}`.replace(/\|/g, '/');
  const cells = [
    r.started_at.replace('T', ' ').replace(/\.\d+Z$/, ''),
    r.scenario,
    status,
    num(r.acked_samples),
    num(r.lost_samples),
    num(r.query_availability),
    num(r.catch_up_seconds),
    num(r.fault_seconds),
    num(r.longest_push_stall_ms ?? null),
    errors || '—',
    r.commit,
  ];
  return `| ${cells.join(' | ')} |`;
}
