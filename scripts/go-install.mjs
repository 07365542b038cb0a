// Builds Go commands from the Go module proxy into a git-ignored cache directory, once: the
// tools the tests need that Debian does not have (Prometheus 3, telemetrygen). Plain Node;
// needs `go` (1.24 or newer). Exits the process with a one-line reason when it cannot.
import { mkdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * `go install`s `packages` (module paths with @version) into `bin`, with module and build caches
 * under `dir`/go that are removed afterwards (they are only needed to build). `name` prefixes its lines.
 */
export function goInstall({ name, what, packages, dir, bin }) {
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.status !== 0) {
    console.error(`strata ${name}: \`go\` is not on PATH; install Go 1.24 or newer (the tests build ${what} with it)`);
    process.exit(1);
  }
  const started = Date.now();
  const gopath = join(dir, 'go');
  mkdirSync(bin, { recursive: true });
  console.error(`strata ${name}: building ${what} with ${go.stdout.trim()} (once; a few minutes)`);
  const r = spawnSync('go', ['install', ...packages], {
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
  });
  if (r.status !== 0) {
    console.error(`strata ${name}: go install failed (exit ${r.status}); is the Go module proxy reachable?`);
    process.exit(r.status ?? 1);
  }
  rmSync(gopath, { recursive: true, force: true });
  console.log(`strata ${name}: ${what} built in ${((Date.now() - started) / 1000).toFixed(0)}s into ${bin}`);
}
