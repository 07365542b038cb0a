// A real Prometheus 3 (built by the bootstrap) on a free loopback port, as the reference of
// differential tests: started with the flags a test asks for, ready when /-/ready answers,
// killed by pid. Used by e2e tests only.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePorts } from '@strata/local-cluster';
import { waitFor } from './client.ts';
import { PROMETHEUS3 } from './promtool.ts';

export interface Prometheus3 {
  url: string;
  stop(): void;
}

/** Prometheus 3 with its data and `prometheus.yml` (`config`) under `dir`, plus `flags`; fails naming its stderr if it never gets ready. */
export async function startPrometheus3(dir: string, flags: string[], config = 'global:\n  scrape_interval: 1m\n'): Promise<Prometheus3> {
  const [port] = await freePorts(1);
  writeFileSync(join(dir, 'prometheus.yml'), config);
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    PROMETHEUS3,
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'prometheus')}`, `--web.listen-address=127.0.0.1:${port}`, ...flags],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const stop = () => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
  };
  await waitFor('Prometheus 3 ready', async () => ((await fetch(`${url}/-/ready`).catch(() => undefined))?.ok ? true : undefined), 60_000).catch(
    (err: Error) => {
      stop();
      assert.fail(`${err.message}\nprometheus stderr: ${stderr}`);
    },
  );
  return { url, stop };
}
