// Prometheus 3 for the tests that need its semantics (UTF-8 names, remote write 2.0
// and OTLP receivers, `promtool tsdb dump` of native histograms): Debian only has
// 2.42, so `npm test`'s bootstrap builds prometheus and promtool from the Go module
// proxy into the git-ignored cache, once. Plain Node; needs `go` (1.24 or newer).
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.status !== 0) {
    console.error('strata prometheus3: `go` is not on PATH; install Go 1.24 or newer (the tests build Prometheus 3 with it)');
    process.exit(1);
  }
  const started = Date.now();
  const gopath = join(PROMETHEUS3_DIR, 'go');
  mkdirSync(bin, { recursive: true });
  console.error(`strata prometheus3: building prometheus and promtool ${PROMETHEUS3_VERSION} with ${go.stdout.trim()} (once; a few minutes)`);
  const r = spawnSync(
    'go',
    ['install', `github.com/prometheus/prometheus/cmd/prometheus@${MODULE_VERSION}`, `github.com/prometheus/prometheus/cmd/promtool@${MODULE_VERSION}`],
    {
      stdio: 'inherit',
      env: {
        ...process.env,
        GOBIN: bin,
        GOPATH: gopath,
        GOMODCACHE: join(gopath, 'mod'),
        GOCACHE: join(gopath, 'build'),
        GOFLAGS: '-mod=mod -modcacherw',
        CGO_ENABLED: '0',
      },
    },
  );
  if (r.status !== 0) {
    console.error(`strata prometheus3: go install failed (exit ${r.status}); is the Go module proxy reachable?`);
    process.exit(r.status ?? 1);
  }
  // The module and build caches are ~3.5 GB and only needed to build.
  rmSync(gopath, { recursive: true, force: true });
  console.log(`strata prometheus3: Prometheus ${PROMETHEUS3_VERSION} built in ${((Date.now() - started) / 1000).toFixed(0)}s into ${bin}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) fetchPrometheus3();
