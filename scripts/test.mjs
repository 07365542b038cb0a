// `npm test`: type-checks and lints the monorepo, then runs every test file with node's
// test runner (unit tests beside the code, cross-process tests in test/), one file at a
// time, and prints each file's wall time and the slowest ten.
// `npm run test:unit` (`--unit`): only the tests beside the code (libs/, apps/), two files
// at a time, without the type-check and lint: the fast loop while working on a lib.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readTimings } from './test-timing-reporter.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pinned = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node;
if (process.version !== `v${pinned}`) {
  console.error(`strata test: runs on Node.js ${pinned} (package.json engines), not ${process.version}; start it with npm test`);
  process.exit(1);
}

function find(dir, out) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith('.test.ts')) out.push(relative(root, p));
  }
  return out;
}

const args = process.argv.slice(2);
const unit = args.includes('--unit');
const only = args.filter((a) => a !== '--unit');
const dirs = unit ? ['libs', 'apps'] : ['libs', 'apps', 'test', 'chaos'];
// Slowest first (by the last run's times; files never timed before them all), so that with
// two at a time no long file starts last while the other slot sits idle.
const timings = readTimings();
const lastMs = (f) => timings[f] ?? Infinity;
const files = only.length > 0 ? only : dirs.flatMap((d) => find(join(root, d), [])).sort((a, b) => lastMs(b) - lastMs(a) || a.localeCompare(b));
// Unit tests start at most a broker or a redis-server of their own; e2e tests start clusters and
// time failovers, so they run alone on a small machine.
const concurrency = unit ? 2 : 1;
// Unit tests load the libs as the servers do, on Node's own type stripping (tsconfig's
// erasableSyntaxOnly keeps them strippable): tsx's loader costs about half a CPU-second per file.
const loader = unit ? [] : ['--import', 'tsx'];
// V8's code cache for every module loaded (Node's NODE_COMPILE_CACHE, inherited by the processes the
// tests start): each test file loads hundreds of the same modules, and compiling them again was about
// 40 % of a small file's CPU (api-status.test.ts: 2.1 → 1.2 CPU-s).
const compileCache = process.env.NODE_COMPILE_CACHE ?? join(root, '.cache', 'node-compile-cache');

if (only.length === 0 && !unit) {
  console.log('strata test: type-checking');
  const tc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (tc.status !== 0) process.exit(tc.status ?? 1);
  // The guard rails (eslint.config.js, knip.json): type-aware lint, import boundaries, unused exports and dependencies.
  console.log('strata test: linting (npm run lint)');
  const lint = spawnSync('npm', ['run', '--silent', 'lint'], { cwd: root, stdio: 'inherit' });
  if (lint.status !== 0) process.exit(lint.status ?? 1);
}

console.log(`strata test: ${files.length} test files, ${concurrency} at a time`);
const started = Date.now();
const r = spawnSync(
  process.execPath,
  [
    ...loader,
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${join(root, 'scripts', 'test-timing-reporter.mjs')}`,
    '--test-reporter-destination=stdout',
    ...files,
  ],
  { cwd: root, stdio: 'inherit', env: { ...process.env, STRATA_TEST: '1', NODE_COMPILE_CACHE: compileCache } },
);
console.log(`strata test: ${((Date.now() - started) / 1000).toFixed(1)} s wall for ${files.length} files, exit ${r.status ?? r.signal}`);
process.exit(r.status ?? 1);
