// A real GCS emulator on loopback (fake-gcs-server, which the test bootstrap builds into
// .cache/) for tests and local drills: the GCS backend is exercised over HTTP through
// the official SDK, not against a fake client.

import { startEmulator } from './emulator-process.ts';

export interface LocalGcsServer {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  bucket: string;
  /** The -blocks-storage.* flags that point a Strata app at this server. */
  flags(): string[];
  stop(): Promise<void>;
}

/** Starts fake-gcs-server (`binary`) in memory on 127.0.0.1 and a free port, with one bucket. */
export async function startGcsServer(opts: { binary: string; bucket?: string; host?: string }): Promise<LocalGcsServer> {
  const bucket = opts.bucket ?? 'strata-blocks';
  const host = opts.host ?? '127.0.0.1';
  const proc = await startEmulator({
    name: 'fake-gcs-server',
    command: opts.binary,
    host,
    argsFor: (port) => ['-scheme', 'http', '-host', host, '-port', String(port), '-backend', 'memory', '-log-level', 'error'],
    ready: async (port) => (await fetch(`http://${host}:${port}/storage/v1/b`)).ok,
  });
  const endpoint = `http://${host}:${proc.port}`;
  const res = await fetch(`${endpoint}/storage/v1/b?project=strata`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: bucket }),
  });
  if (!res.ok) {
    await proc.stop();
    throw new Error(`fake-gcs-server: creating bucket ${bucket}: ${res.status} ${await res.text()}`);
  }
  return {
    endpoint,
    bucket,
    flags: () => ['-blocks-storage.backend=gcs', `-blocks-storage.gcs.endpoint=${endpoint}`, `-blocks-storage.gcs.bucket-name=${bucket}`],
    stop: () => proc.stop(),
  };
}
