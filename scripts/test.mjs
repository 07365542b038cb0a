// `npm test`: type-checks and lints the monorepo, then runs every test file with node's
// test runner (unit tests beside the code, cross-process tests in test/).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

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

const only = process.argv.slice(2);
const files = only.length > 0 ? only : ['libs', 'apps', 'test', 'chaos'].flatMap((d) => find(join(root, d), [])).sort();

if (only.length === 0) {
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

console.log(`strata test: ${files.length} test files`);
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-reporter=spec', ...files],
  { cwd: root, stdio: 'inherit', env: { ...process.env, STRATA_TEST: '1' } },
);
process.exit(r.status ?? 1);
