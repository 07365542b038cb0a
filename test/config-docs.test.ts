// docs/configuration.md's flag tables are generated from the flag definitions
// (scripts/gen-config-docs.ts): regenerate them in memory and fail, naming the flags,
// while the file is behind the code. The fix is always `npm run docs:config`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BEGIN, CONFIG_DOC, END, flagRows, renderFlagReference } from '../scripts/gen-config-docs.ts';

const FIX = 'run `npm run docs:config` and commit docs/configuration.md';

function generatedPart(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  assert.ok(start >= 0 && end > start, `docs/configuration.md has lost its generated-part markers (${BEGIN} ... ${END})`);
  return doc.slice(start, end + END.length);
}

/** Flag name → its row as the file has it. */
function rowsInFile(part: string): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of part.split('\n')) {
    const m = /^\| `-([^`]+)` \|/.exec(line);
    if (m !== null) rows.set(m[1], line);
  }
  return rows;
}

test('docs/configuration.md lists every flag, with its current default, YAML path and description', () => {
  const inFile = rowsInFile(generatedPart(readFileSync(CONFIG_DOC, 'utf8')));
  const expected = flagRows();
  const missing = [...expected.keys()].filter((flag) => !inFile.has(flag));
  const removed = [...inFile.keys()].filter((flag) => !expected.has(flag));
  const stale = [...expected].filter(([flag, row]) => inFile.has(flag) && inFile.get(flag) !== row).map(([flag]) => flag);
  const problems = [
    missing.length > 0 ? `flags missing from it: -${missing.join(', -')}` : '',
    removed.length > 0 ? `flags that no longer exist: -${removed.join(', -')}` : '',
    stale.length > 0 ? `stale rows (default, YAML path or description changed): -${stale.join(', -')}` : '',
  ].filter((p) => p !== '');
  assert.deepEqual(problems, [], `docs/configuration.md is behind the flag definitions: ${problems.join('; ')}; ${FIX}`);
});

test('docs/configuration.md: the generated part is exactly what the generator writes (groups, order, headings)', () => {
  assert.equal(generatedPart(readFileSync(CONFIG_DOC, 'utf8')), renderFlagReference(), `docs/configuration.md is behind the flag definitions; ${FIX}`);
});
