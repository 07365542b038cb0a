// Starts services in dependency order, stops them in reverse on SIGTERM/SIGINT.
// A service that fails to start brings the process down loudly.

import type { Logger } from 'pino';

export interface Service {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function runServices(services: Service[], logger: Logger): Promise<void> {
  const started: Service[] = [];
  let stopping = false;
  const stopAll = async (why: string, code: number) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason: why }, 'stopping');
    for (const s of started.reverse()) {
      try {
        await s.stop();
      } catch (err) {
        logger.error({ err, service: s.name }, 'service failed to stop cleanly');
      }
    }
    logger.info('stopped');
    process.exit(code);
  };
  process.on('SIGTERM', () => void stopAll('SIGTERM', 0));
  process.on('SIGINT', () => void stopAll('SIGINT', 0));
  for (const s of services) {
    try {
      await s.start();
      started.push(s);
    } catch (err) {
      logger.fatal({ err: (err as Error).message, service: s.name }, `${s.name} failed to start`);
      await stopAll(`${s.name} failed to start`, 1);
      return;
    }
  }
}
