// What /api/v1/status/buildinfo reports: the version in the repository's
// package.json and the git commit checked out at start ("unknown" without git).

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export function readBuildInfo(repoRoot: string): { version: string; revision: string; branch: string } {
  let version = 'unknown';
  try {
    version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    // A packaged build without the manifest.
  }
  const git = (...args: string[]) => {
    try {
      return (
        execFileSync('git', args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 })
          .toString()
          .trim() || 'unknown'
      );
    } catch {
      return 'unknown';
    }
  };
  return {
    version,
    revision: process.env.STRATA_REVISION ?? git('rev-parse', 'HEAD'),
    branch: process.env.STRATA_BRANCH ?? git('rev-parse', '--abbrev-ref', 'HEAD'),
  };
}
