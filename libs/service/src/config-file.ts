// -config.file: a YAML file in Mimir's layout (`server: { http_listen_port: 8080 }`)
// turned into flag values, which the command line and STRATA_* variables
// override. A key that maps to no flag is an error, never silently ignored.

import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { z } from 'zod';
import { StrataError } from '@strata/errors';
import { closest } from './flags.ts';

export interface ConfigFileOptions {
  /** Flag name → its dotted YAML path (`distributor.ingestion-rate-limit` → `limits.ingestion_rate`). */
  yamlPaths: Readonly<Record<string, string>>;
  /** -config.expand-env: replace `${VAR}` and `${VAR:default}` before parsing. */
  expandEnv: boolean;
  env?: NodeJS.ProcessEnv;
  /** Skip keys of no flag in yamlPaths instead of refusing them (reading a few flags before the full parse). */
  ignoreUnknown?: boolean;
}

/**
 * The flag's dotted path in -config.file: the one its schema declares where Mimir's
 * differs (`.meta({ yaml: 'limits.ingestion_rate' })`, beside the flag), else the
 * flag's dotted parts with '-' → '_' (-server.http-listen-port → server.http_listen_port).
 */
export function flagYamlPath(flag: string, schema: z.ZodType): string {
  const declared = schema.meta()?.yaml;
  return typeof declared === 'string' ? declared : flag.replaceAll('-', '_');
}

/** Reads and maps the file; every error is one line naming the file and what is wrong. */
export function readConfigFile(path: string, options: ConfigFileOptions): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new StrataError('invalid-config-file', 'bad-input', `-config.file=${path}: cannot read it: ${(err as Error).message}`);
  }
  return parseConfigYaml(text, path, options);
}

export function parseConfigYaml(text: string, source: string, options: ConfigFileOptions): Record<string, string> {
  const fail = (message: string) => new StrataError('invalid-config-file', 'bad-input', `-config.file=${source}: ${message}`);
  let doc: unknown;
  try {
    doc = parse(options.expandEnv ? expandEnvVars(text, options.env ?? process.env) : text);
  } catch (err) {
    throw fail(`not valid YAML: ${(err as Error).message.split('\n')[0].replace(/:\s*$/, '')}`);
  }
  if (doc === null || doc === undefined) return {};
  if (!isMapping(doc)) throw fail('expected a mapping at the top (e.g. `server: { http_listen_port: 8080 }`)');

  const flagByPath = new Map<string, string>();
  const prefixes = new Set<string>();
  for (const [flag, path] of Object.entries(options.yamlPaths)) {
    flagByPath.set(path, flag);
    const parts = path.split('.');
    for (let i = 1; i < parts.length; i++) prefixes.add(parts.slice(0, i).join('.'));
  }

  const out: Record<string, string> = {};
  const visit = (node: Record<string, unknown>, at: string) => {
    for (const [key, value] of Object.entries(node)) {
      const path = at === '' ? key : `${at}.${key}`;
      const flag = flagByPath.get(path);
      if (flag !== undefined) {
        if (value === null || value === undefined) continue;
        if (isMapping(value)) throw fail(`key "${path}" takes a value (flag -${flag}), not a mapping`);
        out[flag] = Array.isArray(value) ? value.map(String).join(',') : String(value as string | number | boolean);
      } else if (prefixes.has(path)) {
        if (value === null || value === undefined) continue;
        if (!isMapping(value)) throw fail(`key "${path}" is a section: expected a mapping`);
        visit(value, path);
      } else if (!options.ignoreUnknown) {
        const near = closest(path, [...flagByPath.keys()]);
        throw fail(`unknown key "${path}"${near === undefined ? '' : `; did you mean ${near}?`}`);
      }
    }
  };
  visit(doc, '');
  return out;
}

/** `${VAR}` → the variable (empty if unset), `${VAR:default}` → the variable or the default. */
export function expandEnvVars(text: string, env: NodeJS.ProcessEnv): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g, (_m, name: string, fallback: string | undefined) => {
    const v = env[name];
    return v !== undefined && v !== '' ? v : (fallback ?? '');
  });
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
