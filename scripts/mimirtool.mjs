// mimirtool (Grafana Mimir's CLI) for the block-upload e2e test: `mimirtool backfill` is the
// real client of the upload API. Mimir's go.mod has replace directives, so `go install` refuses
// it: the test bootstrap downloads the module, builds cmd/mimirtool inside a copy of it and keeps
// the binary in the git-ignored cache, once. Plain Node; needs `go` (1.24 or newer).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropGoCaches, goBuildInModule } from './go-install.mjs';

export const MIMIR_VERSION = 'v1.3.1-0.20260423142704-aced80d74930';
const MODULE = 'github.com/grafana/mimir';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(root, '.cache', `mimirtool-${MIMIR_VERSION}`);
export const MIMIRTOOL = join(dir, 'bin', 'mimirtool');

export function fetchMimirtool() {
  if (existsSync(MIMIRTOOL)) {
    console.log(`strata mimirtool: ${MIMIR_VERSION} already present in ${dirname(MIMIRTOOL)}`);
    return;
  }
  goBuildInModule({
    name: 'mimirtool',
    what: `mimirtool ${MIMIR_VERSION}`,
    module: MODULE,
    version: MIMIR_VERSION,
    pkg: './cmd/mimirtool',
    dir,
    out: MIMIRTOOL,
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  fetchMimirtool();
  dropGoCaches();
}
