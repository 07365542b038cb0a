// fake-gcs-server (a Google Cloud Storage emulator) for the GCS bucket tests: `npm test`'s
// bootstrap builds it from the Go module proxy into the git-ignored cache, once, as it does
// telemetrygen. Plain Node; needs `go` (1.24 or newer).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropGoCaches, goInstall } from './go-install.mjs';

export const FAKE_GCS_SERVER_VERSION = 'v1.56.1';
const MODULE = 'github.com/fsouza/fake-gcs-server';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(root, '.cache', `fake-gcs-server-${FAKE_GCS_SERVER_VERSION}`);
export const FAKE_GCS_SERVER = join(dir, 'bin', 'fake-gcs-server');

export function fetchFakeGcsServer() {
  if (existsSync(FAKE_GCS_SERVER)) {
    console.log(`strata fake-gcs-server: ${FAKE_GCS_SERVER_VERSION} already present in ${dirname(FAKE_GCS_SERVER)}`);
    return;
  }
  goInstall({
    name: 'fake-gcs-server',
    what: `fake-gcs-server ${FAKE_GCS_SERVER_VERSION}`,
    packages: [`${MODULE}@${FAKE_GCS_SERVER_VERSION}`],
    bin: dirname(FAKE_GCS_SERVER),
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  fetchFakeGcsServer();
  dropGoCaches();
}
