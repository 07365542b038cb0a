// The logger shape this lib accepts (a pino Logger fits). The Kafka client never prints on its
// own: what it reports reaches the log through the writer's and the reader's own lines.

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
