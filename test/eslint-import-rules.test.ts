// The layout's import rules (scripts/eslint-import-rules.mjs, on in eslint.config.js): a role app
// imports no other app folder, the binary imports roles by package, and an import that closes a
// cycle is an error even when it imports only types. Run on the real tree with edited file texts.

import { test } from 'node:test';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';
import plugin from '../scripts/eslint-import-rules.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const at = (path: string) => join(ROOT, path);
const tester = new RuleTester({ languageOptions: { parser: tseslint.parser } });

test('a role app imports libs only; the binary imports a role by its package', () => {
  tester.run('no-cross-app-import', plugin.rules['no-cross-app-import'], {
    valid: [
      { filename: at('apps/compactor/src/module.ts'), code: "import type { Strata } from '@strata/runtime';\nimport { Compactor } from '@strata/compactor';" },
      { filename: at('apps/strata/src/modules.ts'), code: "import { initCompactor } from '@strata/app-compactor';\nimport { MODULES } from './registry.ts';" },
      { filename: at('libs/ring/src/ring-page.ts'), code: "import { ringStatusJson } from './http.ts';" },
    ],
    invalid: [
      { filename: at('apps/compactor/src/module.ts'), code: "import type { Strata } from '../../strata/src/strata.ts';", errors: [{ messageId: 'role' }] },
      { filename: at('apps/querier/src/module.ts'), code: "import { initIngester } from '@strata/app-ingester';", errors: [{ messageId: 'role' }] },
      { filename: at('apps/ruler/src/module.ts'), code: "export { MODULES } from '@strata/app-strata';", errors: [{ messageId: 'role' }] },
      { filename: at('apps/strata/src/modules.ts'), code: "import { initRuler } from '../../ruler/src/module.ts';", errors: [{ messageId: 'binary' }] },
    ],
  });
});

test('an import that closes a cycle is an error, type-only imports included', () => {
  tester.run('no-import-cycle', plugin.rules['no-import-cycle'], {
    valid: [
      { filename: at('libs/tsdb/src/head/histogram-series.ts'), code: "import type { EncodedChunk } from '../chunkenc/chunk-encoding.ts';" },
      { filename: at('apps/strata/src/run.ts'), code: "import { MODULES } from './modules.ts';\nimport { Strata } from '@strata/runtime';" },
    ],
    invalid: [
      {
        // memory-series.ts imports chunk-encoding.ts: the way back is one step.
        filename: at('libs/tsdb/src/chunkenc/chunk-encoding.ts'),
        code: "import type { MemorySeries } from '../head/memory-series.ts';",
        errors: [
          {
            messageId: 'cycle',
            data: { path: 'libs/tsdb/src/chunkenc/chunk-encoding.ts → libs/tsdb/src/head/memory-series.ts → libs/tsdb/src/chunkenc/chunk-encoding.ts' },
          },
        ],
      },
      {
        // Through a lib's public surface: @strata/runtime's Strata imports @strata/ingester's types.
        filename: at('libs/ingester/src/ingester-pages.ts'),
        code: "import type { Strata } from '@strata/runtime';",
        errors: [{ messageId: 'cycle' }],
      },
    ],
  });
});
