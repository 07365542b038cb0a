// The logger shape this lib accepts (a pino Logger fits), and the bridge that routes kafkajs's
// own logging into it at warn and above. kafkajs must never print on its own.
import { logLevel, type logCreator } from 'kafkajs';

export interface Logger {
  info(obj: object, msg?: string): void;
  info(msg: string): void;
  warn(obj: object, msg?: string): void;
  warn(msg: string): void;
  error(obj: object, msg?: string): void;
  error(msg: string): void;
}

const noop = (): void => undefined;
export const silentLogger: Logger = { info: noop, warn: noop, error: noop };

const REPEAT_WINDOW_MS = 10_000;

/**
 * kafkajs log entries at WARN/ERROR go to `logger.warn` (kafkajs calls routine retries errors);
 * the same message from the same namespace is logged at most once per 10s, with a count.
 */
export function kafkajsLogCreator(logger: Logger): logCreator {
  const seen = new Map<string, { at: number; suppressed: number }>();
  return () =>
    ({ namespace, level, log }) => {
      if (level > logLevel.WARN || level === logLevel.NOTHING) return;
      const { message, timestamp: _ts, logger: _name, ...extra } = log;
      const key = `${namespace}\0${message}`;
      const now = Date.now();
      const last = seen.get(key);
      if (last !== undefined && now - last.at < REPEAT_WINDOW_MS) {
        last.suppressed++;
        return;
      }
      if (seen.size > 1000) seen.clear();
      seen.set(key, { at: now, suppressed: 0 });
      const repeated = last?.suppressed ? { repeatedTimes: last.suppressed } : {};
      logger.warn({ kafkajs: namespace, ...extra, ...repeated }, `kafkajs: ${message}`);
    };
}
