// telemetrygen (OpenTelemetry's load generator) for the OTLP e2e test: `npm test`'s bootstrap
// builds it from the Go module proxy into the git-ignored cache, once, as it does Prometheus 3.
// Plain Node; needs `go` (1.24 or newer).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropGoCaches, goInstall } from './go-install.mjs';

export const TELEMETRYGEN_VERSION = 'v0.161.0';
const MODULE = 'github.com/open-telemetry/opentelemetry-collector-contrib/cmd/telemetrygen';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(root, '.cache', `telemetrygen-${TELEMETRYGEN_VERSION}`);
export const TELEMETRYGEN = join(dir, 'bin', 'telemetrygen');

export function fetchTelemetrygen() {
  if (existsSync(TELEMETRYGEN)) {
    console.log(`strata telemetrygen: ${TELEMETRYGEN_VERSION} already present in ${dirname(TELEMETRYGEN)}`);
    return;
  }
  goInstall({
    name: 'telemetrygen',
    what: `telemetrygen ${TELEMETRYGEN_VERSION}`,
    packages: [`${MODULE}@${TELEMETRYGEN_VERSION}`],
    bin: dirname(TELEMETRYGEN),
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  fetchTelemetrygen();
  dropGoCaches();
}
