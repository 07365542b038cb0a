// Process logs (pino): JSON lines by default, or logfmt (-log.format=logfmt) rewritten from
// pino's JSON by a small destination. A line logged inside a span carries trace_id and span_id,
// so a request's log lines and its trace find each other; request-scoped lines add `tenant` themselves.

import { pino, type Logger } from 'pino';
import { currentTraceIds } from '@strata/tracing';

export type { Logger };

export type LogFormat = 'json' | 'logfmt';

export function createLogger(
  component: string,
  level = process.env.STRATA_LOG_LEVEL ?? 'info',
  destination?: pino.DestinationStream,
  format: LogFormat = 'json',
): Logger {
  const options: pino.LoggerOptions = { level, base: { component }, timestamp: pino.stdTimeFunctions.isoTime, mixin: () => currentTraceIds() ?? {} };
  if (format === 'logfmt') return pino(options, logfmtDestination(destination ?? pino.destination({ fd: 1, sync: true })));
  return destination === undefined ? pino(options) : pino(options, destination);
}

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** A destination that turns each of pino's JSON lines into one logfmt line before passing it on. */
function logfmtDestination(out: pino.DestinationStream): pino.DestinationStream {
  return { write: (line: string) => out.write(toLogfmt(line)) };
}

/** `{"level":30,"time":"…","msg":"hi","n":1}` → `time=… level=info msg=hi n=1`; nested values as JSON. */
export function toLogfmt(jsonLine: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(jsonLine) as Record<string, unknown>;
  } catch {
    return jsonLine.endsWith('\n') ? jsonLine : `${jsonLine}\n`;
  }
  const { time, level, msg, ...rest } = rec;
  const parts: string[] = [];
  if (time !== undefined) parts.push(`time=${logfmtValue(time)}`);
  if (level !== undefined) parts.push(`level=${typeof level === 'number' ? (LEVEL_NAMES[level] ?? String(level)) : logfmtValue(level)}`);
  if (msg !== undefined) parts.push(`msg=${logfmtValue(msg)}`);
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) parts.push(`${k.replace(/[\s="]/g, '_')}=${logfmtValue(v)}`);
  return `${parts.join(' ')}\n`;
}

function logfmtValue(v: unknown): string {
  const s = typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' || v === null ? String(v) : JSON.stringify(v);
  return s === '' || /[\s="\\]/.test(s) || /[\u0000-\u001f]/.test(s) ? JSON.stringify(s) : s;
}
