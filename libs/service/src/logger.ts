// JSON logs (pino) by default; STRATA_LOG_FORMAT=logfmt-ish pretty lines for humans at a terminal.
// A line logged inside a span carries trace_id and span_id, so a request's log lines and its
// trace find each other; request-scoped lines add `tenant` themselves.

import { pino, type Logger } from 'pino';
import { currentTraceIds } from '@strata/tracing';

export type { Logger };

export function createLogger(component: string, level = process.env.STRATA_LOG_LEVEL ?? 'info', destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = { level, base: { component }, timestamp: pino.stdTimeFunctions.isoTime, mixin: () => currentTraceIds() ?? {} };
  return destination === undefined ? pino(options) : pino(options, destination);
}
