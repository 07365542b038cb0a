// telemetrygen (OpenTelemetry's load generator) for the OTLP e2e test: `npm test`'s bootstrap
// builds it from the Go module proxy into the git-ignored cache, once, as it does Prometheus 3.
// Plain Node; needs `go` (1.24 or newer).
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.status !== 0) {
    console.error('strata telemetrygen: `go` is not on PATH; install Go 1.24 or newer (the tests build telemetrygen with it)');
    process.exit(1);
  }
  const started = Date.now();
  const gopath = join(dir, 'go');
  mkdirSync(dirname(TELEMETRYGEN), { recursive: true });
  console.error(`strata telemetrygen: building telemetrygen ${TELEMETRYGEN_VERSION} with ${go.stdout.trim()} (once; a few minutes)`);
  const r = spawnSync('go', ['install', `${MODULE}@${TELEMETRYGEN_VERSION}`], {
    stdio: 'inherit',
    env: {
      ...process.env,
      GOBIN: dirname(TELEMETRYGEN),
      GOPATH: gopath,
      GOMODCACHE: join(gopath, 'mod'),
      GOCACHE: join(gopath, 'build'),
      GOFLAGS: '-mod=mod -modcacherw',
      CGO_ENABLED: '0',
    },
  });
  if (r.status !== 0) {
    console.error(`strata telemetrygen: go install failed (exit ${r.status}); is the Go module proxy reachable?`);
    process.exit(r.status ?? 1);
  }
  // The module and build caches are only needed to build.
  rmSync(gopath, { recursive: true, force: true });
  console.log(`strata telemetrygen: built in ${((Date.now() - started) / 1000).toFixed(0)}s into ${dirname(TELEMETRYGEN)}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) fetchTelemetrygen();
