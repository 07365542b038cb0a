// -version: the package version, the git revision when the binary runs from a
// checkout (or STRATA_REVISION, e.g. set by an image build), and the Node.js version.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export function versionLine(): string {
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  return `strata ${version} (revision ${revision()}, node ${process.version})`;
}

function revision(): string {
  if (process.env.STRATA_REVISION) return process.env.STRATA_REVISION;
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim() || 'unknown';
  } catch {
    return 'unknown';
  }
}
