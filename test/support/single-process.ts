// A `-target=all` process the way `npm start` runs it (its own Kafka, multi-tenancy off unless
// the args say otherwise) in a fresh temporary directory, for e2e tests. Used by e2e tests only.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, freePorts } from '@strata/local-cluster';

export interface SingleProcess {
  strata: AppProcess;
  /** The temporary directory: the data directory is `<dir>/data`, the log `<dir>/strata.log`. */
  dir: string;
  /** Stops the process (SIGTERM) and removes the directory unless STRATA_KEEP_TEST_DATA is set. */
  stop(): Promise<void>;
}

export async function startSingleProcess(name: string, args: string[] = []): Promise<SingleProcess> {
  const dir = mkdtempSync(join(tmpdir(), `strata-${name}-`));
  const [port] = await freePorts(1);
  const strata = new AppProcess({
    name: 'strata',
    target: 'all',
    httpPort: port,
    logFile: join(dir, 'strata.log'),
    // Later flags win: a test's own -auth.multitenancy-enabled overrides the first.
    args: ['-auth.multitenancy-enabled=false', `-data-dir=${dir}/data`, `-server.http-listen-port=${port}`, ...args],
  });
  strata.start();
  await strata.waitReady(180_000);
  return {
    strata,
    dir,
    async stop() {
      await strata.kill('SIGTERM');
      if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}
