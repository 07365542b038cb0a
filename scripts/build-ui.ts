// `npm run build:ui`: type-checks and bundles libs/ui/web into libs/ui/dist
// (committed, so `npm start` needs no build), then writes the manifest the
// bundle test checks. Run it after changing anything under libs/ui/web.

import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'vite';
import { DIST_DIR, UI_ROOT, listFiles, sha256, sourcesDigest, type UiManifest } from '@strata/ui';

const web = join(UI_ROOT, 'web');
const tsc = spawnSync(process.execPath, [join(UI_ROOT, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(web, 'tsconfig.json')], {
  stdio: 'inherit',
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

await build({
  root: web,
  base: '/ui/',
  logLevel: 'warn',
  configFile: false,
  build: { outDir: DIST_DIR, emptyOutDir: true, assetsDir: 'assets', sourcemap: false, chunkSizeWarningLimit: 1024, reportCompressedSize: false },
});

const files: Record<string, string> = {};
for (const f of listFiles(DIST_DIR)) if (f !== 'manifest.json') files[f] = sha256(readFileSync(join(DIST_DIR, f)));
const manifest: UiManifest = { sourcesDigest: sourcesDigest(), files };
writeFileSync(join(DIST_DIR, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
for (const [f, digest] of Object.entries(files)) console.log(`libs/ui/dist/${f}  ${readFileSync(join(DIST_DIR, f)).length} bytes  ${digest.slice(0, 12)}`);
