// Mimir-style flags (-ingest-storage.kafka.address=host:port) with an
// environment fallback (STRATA_INGEST_STORAGE_KAFKA_ADDRESS) and a YAML config
// file below both (-config.file). Command line, then environment, then file.

import { z } from 'zod';
import { StrataError } from '@strata/errors';

export interface FlagValues {
  /** From the command line: an unknown one is an error. */
  args: Record<string, string>;
  /** From STRATA_* variables, keyed like ingest_storage_kafka_address. */
  env: Record<string, string>;
  /** From -config.file, keyed by flag name (already checked: every key is a known flag). */
  file?: Record<string, string>;
}

export function parseFlags(argv: string[], env: NodeJS.ProcessEnv = process.env): FlagValues {
  const out: Record<string, string> = {};
  const fromEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith('STRATA_') && v !== undefined) fromEnv[k.slice(7).toLowerCase()] = v;
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('-')) throw new StrataError('unexpected-argument', 'bad-input', `unexpected argument "${arg}"; flags look like -name=value`);
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    if (eq >= 0) out[body.slice(0, eq)] = body.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('-')) out[body] = argv[++i];
    else out[body] = 'true';
  }
  return { args: out, env: fromEnv };
}

/** Whether the command line or the environment sets the flag (so a derived default must not replace it). */
export function isFlagSet(values: FlagValues, name: string): boolean {
  return lookup(values, name) !== undefined;
}

/** Looks a flag up by its dotted name, its env form, then in the config file. */
export function lookup(values: FlagValues, name: string): string | undefined {
  return values.args[name] ?? values.env[name.replace(/[.-]/g, '_')] ?? values.file?.[name];
}

/**
 * Parses the flags a schema names (keys are flag names). Unknown flags are an
 * error so a typo never silently falls back to a default.
 */
export function flagsToConfig<S extends z.ZodRawShape>(shape: S, values: FlagValues): z.infer<z.ZodObject<S>> {
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(shape)) {
    const v = lookup(values, name);
    if (v !== undefined) raw[name] = v;
  }
  const unknown = Object.keys(values.args).filter((k) => !(k in shape));
  if (unknown.length > 0) {
    const near = closest(unknown[0], Object.keys(shape));
    throw new StrataError(
      'unknown-flag',
      'bad-input',
      `unknown flag -${unknown[0]}${near === undefined ? '' : `; did you mean -${near}?`} (-help lists every flag)`,
    );
  }
  const parsed = z.object(shape).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = String(issue.path[0]);
    const where =
      values.args[name] !== undefined
        ? ''
        : values.env[name.replace(/[.-]/g, '_')] !== undefined
          ? ` (from STRATA_${name.replace(/[.-]/g, '_').toUpperCase()})`
          : ' (from -config.file)';
    // One line whatever zod says: the value given, the flag, what is wrong with it.
    const message = issue.message.replace(/\s*\n\s*/g, ' ');
    throw new StrataError('invalid-flag', 'bad-input', `invalid value ${JSON.stringify(raw[name])} for -${name}${where}: ${message}`);
  }
  return parsed.data;
}

/** The known name nearest `name` by edit distance, when one is near enough to be a typo of it. */
export function closest(name: string, known: readonly string[]): string | undefined {
  let best = '';
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(name, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return bestDistance <= Math.max(3, name.length / 3) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 };

/** Parses a Prometheus duration ("1h30m", "10s", "500ms") into milliseconds. */
export function parseDuration(text: string): number {
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  const re = /(\d+)(ms|[smhdwy])/g;
  let total = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    if (m.index !== consumed) break;
    total += Number(m[1]) * UNITS[m[2]];
    consumed += m[0].length;
  }
  if (consumed !== text.length || text.length === 0) throw new Error(`invalid duration "${text}" (use e.g. 10s, 5m, 2h)`);
  return total;
}

/** zod type for a flag written as text and parsed by `parse`, whose error message becomes the flag's. */
export const parsedFlag = (fallback: string, parse: (text: string) => number) =>
  z
    .string()
    .default(fallback)
    .transform((s, ctx) => {
      try {
        return parse(s);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    });

/** zod type for a duration flag, yielding milliseconds. */
export const duration = (fallback: string) => parsedFlag(fallback, parseDuration);

/** zod type for a boolean flag ("true"/"false"). */
export const boolFlag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((s) => s === 'true' || s === '1');

/** 600000 → "10m", 5400000 → "1h30m", 500 → "500ms". */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
    ['ms', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  return parts.join('');
}
