// -version: the package version, the git revision when the binary runs from a
// checkout (or STRATA_REVISION, e.g. set by an image build), and the Node.js version:
// the same build info /api/v1/status/buildinfo reports.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBuildInfo } from '@strata/service';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export function versionLine(): string {
  const { version, revision } = readBuildInfo(ROOT);
  const short = /^[0-9a-f]{40}$/.test(revision) ? revision.slice(0, 12) : revision;
  return `strata ${version} (revision ${short}, node ${process.version})`;
}
