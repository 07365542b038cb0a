// The guard rail for short functions (STYLE.md, "Short functions made of named steps"): eslint.config.js
// turns on max-lines-per-function at 80 lines (blank lines and comments counted) for the code under
// libs/**/src and apps/**/src, tests excepted, so `npm run lint` fails on a longer function.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { ESLint, Linter } from 'eslint';
import tseslint from 'typescript-eslint';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

async function lengthRule(path: string): Promise<unknown> {
  const config = (await eslint.calculateConfigForFile(path)) as { rules?: Record<string, unknown> } | undefined;
  return config?.rules?.['max-lines-per-function'];
}

/** A function of `lines` lines in all, its signature and closing brace included. */
function functionOf(lines: number): string {
  const body = Array.from({ length: lines - 2 }, (_, i) => `  x += ${i};`);
  return ['export function f(x: number): number {', ...body.slice(0, -1), '  return x;', '}', ''].join('\n');
}

test('lint holds every function in libs and apps to 80 lines, tests excepted', async () => {
  for (const path of ['libs/tsdb/src/chunkenc/xor-chunk.ts', 'libs/ui/web/src/query.ts', 'apps/querier/src/module.ts', 'apps/strata/src/main.ts']) {
    assert.deepEqual(await lengthRule(path), [2, { max: 80 }], path);
  }
  for (const path of ['libs/tsdb/src/chunkenc/xor-chunk.test.ts', 'apps/strata/src/config.test.ts', 'test/single-process.test.ts', 'scripts/cluster.ts']) {
    assert.equal(await lengthRule(path), undefined, path);
  }
});

test('the rule passes a function of 80 lines and fails one of 81', async () => {
  const rule = await lengthRule('libs/tsdb/src/chunkenc/xor-chunk.ts');
  const linter = new Linter({ configType: 'flat' });
  const lint = (code: string) =>
    linter.verify(
      code,
      [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules: { 'max-lines-per-function': rule as Linter.RuleEntry } }],
      'f.ts',
    );
  assert.deepEqual(lint(functionOf(80)), []);
  const errors = lint(functionOf(81));
  assert.equal(errors.length, 1);
  assert.match(errors[0].message, /Function 'f' has too many lines \(81\)\. Maximum allowed is 80\./);
});
