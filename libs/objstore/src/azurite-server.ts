// A real Azure Blob Storage emulator on loopback (Azurite's blob service, a dev
// dependency, as a child process) for tests and local drills: the Azure backend is
// exercised over HTTP with shared-key signatures through the official SDK.

import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { ContainerClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { startEmulator } from './emulator-process.ts';

/** Azurite's well-known development account (public, in Azure's docs). */
const ACCOUNT = 'devstoreaccount1';
const KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface LocalAzuriteServer {
  /** http://127.0.0.1:<port>/devstoreaccount1 */
  endpoint: string;
  container: string;
  /** The -blocks-storage.* flags that point a Strata app at this server. */
  flags(): string[];
  /** The same account as an Azure storage connection string. */
  connectionString(): string;
  stop(): Promise<void>;
}

/** Starts Azurite's blob service storing under `dir`, on 127.0.0.1 and a free port, with one container. */
export async function startAzuriteServer(opts: { dir: string; container?: string; host?: string }): Promise<LocalAzuriteServer> {
  const container = opts.container ?? 'strata-blocks';
  const host = opts.host ?? '127.0.0.1';
  await mkdir(opts.dir, { recursive: true });
  // Resolved at run time: azurite is only present where dev dependencies are.
  const main = join(dirname(createRequire(import.meta.url).resolve('azurite/package.json')), 'dist', 'src', 'blob', 'main.js');
  const proc = await startEmulator({
    name: 'azurite-blob',
    command: process.execPath,
    host,
    argsFor: (port) => [main, '--blobHost', host, '--blobPort', String(port), '--location', opts.dir, '--skipApiVersionCheck', '--silent', '--loose'],
    // Any HTTP answer (400 for a bare GET) means the blob service listens.
    ready: async (port) => (await fetch(`http://${host}:${port}/${ACCOUNT}`)).status > 0,
  });
  const endpoint = `http://${host}:${proc.port}/${ACCOUNT}`;
  try {
    await new ContainerClient(`${endpoint}/${container}`, new StorageSharedKeyCredential(ACCOUNT, KEY)).createIfNotExists();
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return {
    endpoint,
    container,
    flags: () => [
      '-blocks-storage.backend=azure',
      `-blocks-storage.azure.endpoint=${endpoint}`,
      `-blocks-storage.azure.account-name=${ACCOUNT}`,
      `-blocks-storage.azure.account-key=${KEY}`,
      `-blocks-storage.azure.container-name=${container}`,
    ],
    connectionString: () => `DefaultEndpointsProtocol=http;AccountName=${ACCOUNT};AccountKey=${KEY};BlobEndpoint=${endpoint};`,
    stop: () => proc.stop(),
  };
}
