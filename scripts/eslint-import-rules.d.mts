// Types for eslint-import-rules.mjs (an ESLint plugin), for the test that runs its rules.
import type { ESLint } from 'eslint';

declare const plugin: ESLint.Plugin & { rules: Record<'no-import-cycle' | 'no-cross-app-import', import('eslint').Rule.RuleModule> };
export default plugin;
