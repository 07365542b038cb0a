// Mimir-style flags (-ingest-storage.kafka.address=host:port) with an
// environment fallback (STRATA_INGEST_STORAGE_KAFKA_ADDRESS). Flags win.

import { z } from 'zod';

export interface FlagValues {
  /** From the command line: an unknown one is an error. */
  args: Record<string, string>;
  /** From STRATA_* variables, keyed like ingest_storage_kafka_address. */
  env: Record<string, string>;
}

export function parseFlags(argv: string[], env: NodeJS.ProcessEnv = process.env): FlagValues {
  const out: Record<string, string> = {};
  const fromEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith('STRATA_') && v !== undefined) fromEnv[k.slice(7).toLowerCase()] = v;
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('-')) throw new Error(`unexpected argument "${arg}"; flags look like -name=value`);
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

/** Looks a flag up by its dotted name or its env form. */
function lookup(values: FlagValues, name: string): string | undefined {
  return values.args[name] ?? values.env[name.replace(/[.-]/g, '_')];
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
  const parsed = z.object(shape).safeParse(raw);
  if (unknown.length > 0) throw new Error(`unknown flag -${unknown[0]}${closest(unknown[0], Object.keys(shape))}`);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid flag -${String(issue.path[0])}: ${issue.message}`);
  }
  return parsed.data;
}

/** "; did you mean -x?" for the known flag nearest by edit distance, when one is near. */
function closest(name: string, known: string[]): string {
  let best = '';
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(name, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return bestDistance <= Math.max(3, name.length / 3) ? `; did you mean -${best}?` : '';
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

/** zod type for a duration flag, yielding milliseconds. */
export const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((s, ctx) => {
      try {
        return parseDuration(s);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    });

/** zod type for a boolean flag ("true"/"false"). */
export const boolFlag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((s) => s === 'true' || s === '1');
