// `npm run lint` (part of `npm test`): type-aware checks that catch what review misses
// (a promise nobody awaits, an `any` that spreads), and the import boundaries of the
// layout: no lib imports an app, no role app imports another app, no import cycle
// (type imports counted), the PromQL and storage engines import no transport, libs
// reach each other only through their public surface and take only the UI's types.
import tseslint from 'typescript-eslint';
import strataImports from './scripts/eslint-import-rules.mjs';

const TRANSPORTS = ['fastify', '@grpc/grpc-js', '@grpc/proto-loader', 'kafkajs', 'ioredis', 'node:http', 'node:http2', 'node:net', '@aws-sdk/*'];
const TRANSPORT_LIBS = ['@strata/kafka', '@strata/ingester-rpc', '@strata/querier', '@strata/distributor', '@strata/service', '@strata/objstore'];

const deepImports = {
  group: ['@strata/*/src/*', '@strata/*/src', '**/libs/*/src/*', '**/libs/*/src'],
  message: 'import a lib through its public surface (@strata/<lib>, or its ./testing export), never its src/ files',
};
// Inside libs/<lib>/src a relative import stays in the lib.
const otherLibsSrc = { group: ['../../*/src/*', '../../*/src'], message: 'import another lib as @strata/<lib>, never its src/ files' };
// node:test's test()/describe() return promises the runner awaits.
const nodeTest = { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] };

export default tseslint.config(
  { ignores: ['node_modules/**', '**/node_modules/**', 'data/**', '.cache/**', 'chaos/reports/**'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [nodeTest] }],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      'no-restricted-imports': ['error', { patterns: [deepImports] }],
    },
  },
  {
    // The whole tree's import graph (apps, libs, test, chaos, scripts): a cycle is an error in every file on it.
    files: ['**/*.ts'],
    plugins: { strata: strataImports },
    rules: { 'strata/no-import-cycle': 'error' },
  },
  {
    // apps/<role>/ holds its role's wiring over libs; only the binary, apps/strata, imports the roles (as @strata/app-<role>).
    files: ['apps/**/*.ts'],
    rules: { 'strata/no-cross-app-import': ['error', { binary: 'strata' }] },
  },
  {
    // An `any` in shipped code spreads silently; in a test it is a JSON body an assertion reads, and a
    // wrong shape fails the assertion anyway.
    files: ['apps/**/*.ts', 'libs/**/*.ts', 'scripts/**/*.ts', 'chaos/**/*.ts', 'test/support/**/*.ts', 'test/bench/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'error',
      '@typescript-eslint/no-unsafe-member-access': 'error',
      '@typescript-eslint/no-unsafe-call': 'error',
      '@typescript-eslint/no-unsafe-return': 'error',
      '@typescript-eslint/no-unsafe-argument': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    files: ['libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            deepImports,
            otherLibsSrc,
            { group: ['**/apps/**', '@strata/app-*'], message: 'a lib never imports an app: apps wire libs, not the other way round' },
          ],
        },
      ],
    },
  },
  {
    // A component hands the UI plain data (its StatusPage beside it); registering the UI is the binary's.
    files: ['libs/**/*.ts'],
    ignores: ['libs/ui/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@strata/ui',
              allowTypeImports: true,
              message: "a lib takes only the UI's types (StatusPage, StatusValue, ...): `import type`; apps/strata registers the UI",
            },
          ],
        },
      ],
    },
  },
  {
    // The UI renders what the modules hand it and knows none of them, so any lib can put its page beside it.
    files: ['libs/ui/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            deepImports,
            otherLibsSrc,
            { group: ['**/apps/**', '@strata/*'], message: 'the UI imports no other Strata lib or app: components depend on its types, never the reverse' },
          ],
        },
      ],
    },
  },
  {
    // STYLE.md: functions made of named steps. 80 lines, blank lines and comments counted, in shipped code.
    files: ['libs/**/src/**/*.ts', 'apps/**/src/**/*.ts', 'libs/ui/web/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80 }] },
  },
  {
    files: ['libs/promql/src/**/*.ts', 'libs/tsdb/src/**/*.ts', 'libs/model/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...TRANSPORTS.filter((t) => !t.includes('*')), ...TRANSPORT_LIBS].map((name) => ({
            name,
            message: 'the PromQL engine and the storage engine know no transport: take data through the Querier seam',
          })),
          patterns: [
            deepImports,
            otherLibsSrc,
            { group: ['@aws-sdk/*', '**/apps/**'], message: 'the PromQL and storage engines import no transport and no app' },
          ],
        },
      ],
    },
  },
);
