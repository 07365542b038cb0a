// The committed bundle is the build of the committed sources: the manifest's
// sources digest matches the sources now, and every built file is as built.
// (Checked from digests recorded at build time; the test never rebuilds.)

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DIST_DIR, listFiles, readManifest, sha256, sourcesDigest } from './manifest.ts';

const REBUILD = 'run `npm run build:ui` and commit libs/ui/dist';

test('libs/ui/dist was built from the sources under libs/ui/web as they are now', () => {
  assert.equal(
    readManifest().sourcesDigest,
    sourcesDigest(),
    `the UI sources (or the bundled packages' versions) changed since the bundle was built: ${REBUILD}`,
  );
});

test('every file in libs/ui/dist is the one the build wrote, and nothing else is there', () => {
  const { files } = readManifest();
  assert.deepEqual(
    listFiles(DIST_DIR).filter((f) => f !== 'manifest.json'),
    Object.keys(files).sort(),
    `libs/ui/dist holds other files than the build wrote: ${REBUILD}`,
  );
  for (const [f, digest] of Object.entries(files))
    assert.equal(sha256(readFileSync(join(DIST_DIR, f))), digest, `libs/ui/dist/${f} was changed after the build: ${REBUILD}`);
  assert.ok(files['index.html'], 'the bundle has its index.html');
});
