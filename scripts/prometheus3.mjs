// Prometheus 3 for the tests that need its semantics (UTF-8 names, remote write 2.0
// and OTLP receivers, `promtool tsdb dump` of native histograms): Debian only has
// 2.42, so `npm test`'s bootstrap builds prometheus and promtool from the Go module
// proxy into the git-ignored cache, once. Plain Node; needs `go` (1.24 or newer).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropGoCaches, goInstall } from './go-install.mjs';

// Go module versions v0.3XX.Y are Prometheus v3.XX.Y.
export const PROMETHEUS3_VERSION = '3.16.0';
const MODULE_VERSION = 'v0.316.0';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const PROMETHEUS3_DIR = join(root, '.cache', `prometheus-${PROMETHEUS3_VERSION}`);

export function fetchPrometheus3() {
  const bin = join(PROMETHEUS3_DIR, 'bin');
  if (existsSync(join(bin, 'prometheus')) && existsSync(join(bin, 'promtool'))) {
    console.log(`strata prometheus3: Prometheus ${PROMETHEUS3_VERSION} already present in ${bin}`);
    return;
  }
  goInstall({
    name: 'prometheus3',
    what: `prometheus and promtool ${PROMETHEUS3_VERSION}`,
    packages: [`github.com/prometheus/prometheus/cmd/prometheus@${MODULE_VERSION}`, `github.com/prometheus/prometheus/cmd/promtool@${MODULE_VERSION}`],
    // Without the service discoveries (cloud SDKs, Kubernetes' client), which the tests never use:
    // 281 s instead of 925 s to build here, half the binary.
    tags: ['remove_all_sd'],
    bin,
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  fetchPrometheus3();
  dropGoCaches();
}
