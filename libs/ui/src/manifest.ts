// The committed bundle's manifest: a digest of what it was built from (the
// sources under web/, the build script, the bundled packages' versions) and a
// digest of each built file, so a test can tell a stale or hand-edited dist/.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const UI_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DIST_DIR = join(UI_ROOT, 'dist');
const REPO_ROOT = join(UI_ROOT, '..', '..');
/** The build script is a source too: a change to how the bundle is made must rebuild it. */
const BUILD_SCRIPT = join(REPO_ROOT, 'scripts', 'build-ui.ts');

export interface UiManifest {
  sourcesDigest: string;
  /** Built file (relative to dist/, "/"-separated) → sha256. */
  files: Record<string, string>;
}

export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p).split(sep).join('/'));
    }
  };
  walk(dir);
  return out;
}

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The digest of every input of the bundle, recomputed by the test against the manifest. */
export function sourcesDigest(): string {
  const h = createHash('sha256');
  const add = (name: string, content: Buffer | string) => h.update(`${name}\0${sha256(content)}\n`);
  for (const f of listFiles(join(UI_ROOT, 'web'))) add(`web/${f}`, readFileSync(join(UI_ROOT, 'web', f)));
  add('src/types.ts', readFileSync(join(UI_ROOT, 'src', 'types.ts')));
  add('scripts/build-ui.ts', readFileSync(BUILD_SCRIPT));
  const pkg = JSON.parse(readFileSync(join(UI_ROOT, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string> };
  // The bundled packages, and the bundler (a root devDependency, as the build script is the root's).
  for (const dep of [...Object.keys(pkg.devDependencies ?? {}), 'vite'].sort()) add(`dep:${dep}`, installedVersion(dep));
  return h.digest('hex');
}

/** The version npm installed (packages' exports often hide their package.json from require.resolve). */
function installedVersion(dep: string): string {
  for (const dir of [join(UI_ROOT, 'node_modules'), join(REPO_ROOT, 'node_modules')]) {
    const p = join(dir, dep, 'package.json');
    if (existsSync(p)) return (JSON.parse(readFileSync(p, 'utf8')) as { version: string }).version;
  }
  throw new Error(`${dep} is not installed (npm ci): the UI bundle's sources cannot be checked without it`);
}

export function readManifest(): UiManifest {
  return JSON.parse(readFileSync(join(DIST_DIR, 'manifest.json'), 'utf8')) as UiManifest;
}
