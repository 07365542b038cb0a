// JSON logs (pino) by default; STRATA_LOG_FORMAT=logfmt-ish pretty lines for humans at a terminal.

import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(component: string, level = process.env.STRATA_LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { component }, timestamp: pino.stdTimeFunctions.isoTime });
}
