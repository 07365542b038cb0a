// Builds Go commands from the Go module proxy into a git-ignored cache directory, once: the
// tools the tests need that Debian does not have (Prometheus 3, telemetrygen, mimirtool,
// fake-gcs-server). Plain Node; needs `go` (1.24 or newer). Exits the process with a one-line
// reason when it cannot.
import { chmodSync, cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// One module and build cache for all the builds: they share most of their dependencies (gRPC,
// protobuf, OpenTelemetry, Prometheus' own packages, the cloud SDKs), which are then downloaded and
// compiled once. Only needed to build: dropGoCaches() removes it when the builds are done.
const GOPATH = join(dirname(fileURLToPath(import.meta.url)), '..', '.cache', 'go');

function requireGo(name, what) {
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.status !== 0) {
    console.error(`strata ${name}: \`go\` is not on PATH; install Go 1.24 or newer (the tests build ${what} with it)`);
    process.exit(1);
  }
  return go.stdout.trim();
}

function goEnv() {
  return { ...process.env, GOPATH, GOMODCACHE: join(GOPATH, 'mod'), GOCACHE: join(GOPATH, 'build'), GOFLAGS: '-mod=mod -modcacherw', CGO_ENABLED: '0' };
}

/** Removes the builds' shared module and build caches. */
export function dropGoCaches() {
  rmSync(GOPATH, { recursive: true, force: true });
}

/** `go install`s `packages` (module paths with @version) into `bin`, with build `tags` if any. `name` prefixes its lines. */
export function goInstall({ name, what, packages, bin, tags = [] }) {
  const go = requireGo(name, what);
  const started = Date.now();
  mkdirSync(bin, { recursive: true });
  console.error(`strata ${name}: building ${what} with ${go} (once; a few minutes)`);
  const r = spawnSync('go', ['install', ...(tags.length > 0 ? ['-tags', tags.join(',')] : []), ...packages], {
    stdio: 'inherit',
    env: { ...goEnv(), GOBIN: bin },
  });
  if (r.status !== 0) {
    console.error(`strata ${name}: go install failed (exit ${r.status}); is the Go module proxy reachable?`);
    process.exit(r.status ?? 1);
  }
  console.log(`strata ${name}: ${what} built in ${((Date.now() - started) / 1000).toFixed(0)}s into ${bin}`);
}

/**
 * `go build`s `pkg` of `module`@`version` inside a copy of the module, for modules whose go.mod has
 * replace directives (`go install module/cmd@version` refuses those): `go mod download` fetches the
 * module, the copy goes to `dir`/src (removed afterwards), the binary to `out`.
 */
export function goBuildInModule({ name, what, module, version, pkg, dir, out }) {
  const go = requireGo(name, what);
  const started = Date.now();
  console.error(`strata ${name}: building ${what} with ${go} (once; several minutes)`);
  mkdirSync(dir, { recursive: true });
  console.error(`strata ${name}: go mod download ${module}@${version}`);
  const dl = spawnSync('go', ['mod', 'download', '-json', `${module}@${version}`], { cwd: dir, encoding: 'utf8', env: goEnv() });
  let moduleDir;
  try {
    moduleDir = JSON.parse(dl.stdout).Dir;
  } catch {
    // reported below
  }
  if (dl.status !== 0 || typeof moduleDir !== 'string') {
    console.error(`strata ${name}: go mod download ${module}@${version} failed (exit ${dl.status}): ${(dl.stdout + dl.stderr).trim().slice(0, 500)}`);
    process.exit(dl.status || 1);
  }
  const src = join(dir, 'src');
  rmSync(src, { recursive: true, force: true });
  console.error(`strata ${name}: copying ${moduleDir} to ${src}`);
  cpSync(moduleDir, src, { recursive: true });
  makeWritable(src);
  console.error(`strata ${name}: go build ${pkg} (downloads its dependencies from the Go module proxy)`);
  mkdirSync(dirname(out), { recursive: true });
  const r = spawnSync('go', ['build', '-o', out, pkg], { cwd: src, stdio: 'inherit', env: goEnv() });
  rmSync(src, { recursive: true, force: true });
  if (r.status !== 0) {
    console.error(`strata ${name}: go build failed (exit ${r.status}); is the Go module proxy reachable?`);
    process.exit(r.status ?? 1);
  }
  console.log(`strata ${name}: ${what} built in ${((Date.now() - started) / 1000).toFixed(0)}s into ${out}`);
}

/** The module cache's copies are read-only; the build may write go.sum and the cleanup must delete. */
function makeWritable(path) {
  chmodSync(path, 0o755);
  for (const e of readdirSync(path, { withFileTypes: true })) {
    const p = join(path, e.name);
    if (e.isDirectory()) makeWritable(p);
    else if (e.isFile()) chmodSync(p, 0o644);
  }
}
