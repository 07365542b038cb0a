// -help: every flag of a composed config, grouped by the lib whose shape defines
// it, with its default and one line on what it is for. The text lives on the
// schemas themselves (zod `.describe()`), so a flag cannot exist without it.

import type { z } from 'zod';

/** The flags one lib defines, under the name -help shows them. */
export interface FlagGroup {
  name: string;
  shape: z.ZodRawShape;
}

interface Walked {
  defaultValue?: string;
  choices?: string[];
}

/** Looks through pipes (transforms), optionals and defaults for the default as typed on a command line, and enum choices. */
function walk(schema: z.ZodType): Walked {
  const out: Walked = {};
  let s: z.ZodType | undefined = schema;
  for (let depth = 0; s !== undefined && depth < 10; depth++) {
    const def = s._zod.def as unknown as { type: string; in?: z.ZodType; innerType?: z.ZodType; defaultValue?: unknown; entries?: Record<string, string> };
    if (def.type === 'pipe') s = def.in;
    else if (def.type === 'default') {
      out.defaultValue ??= String(def.defaultValue);
      s = def.innerType;
    } else if (def.type === 'optional' || def.type === 'nullable') s = def.innerType;
    else {
      if (def.type === 'enum' && def.entries !== undefined) out.choices = Object.values(def.entries);
      s = undefined;
    }
  }
  return out;
}

/** The flag's default as it would be written on the command line ("10s", "8080", "true", ""), if it has one. */
export function flagDefault(schema: z.ZodType): string | undefined {
  return walk(schema).defaultValue;
}

/** The flag's one-line description (zod `.describe()`), if it has one. */
export function flagDescription(schema: z.ZodType): string | undefined {
  return schema.description;
}

/** The -help text: usage, then each group's flags with default and description. */
export function renderHelp(groups: readonly FlagGroup[], usage: string): string {
  const lines = [usage, ''];
  for (const g of groups) {
    lines.push(`${g.name}:`);
    for (const [name, schema] of Object.entries(g.shape) as [string, z.ZodType][]) {
      const { defaultValue, choices } = walk(schema);
      lines.push(`  -${name} (default: ${defaultValue === undefined || defaultValue === '' ? '""' : defaultValue})`);
      const description = flagDescription(schema) ?? '';
      const isBool = choices !== undefined && choices.includes('true') && choices.includes('false');
      const hint = choices === undefined ? '' : isBool ? ' (true or false)' : ` One of: ${choices.join(', ')}.`;
      lines.push(`      ${description}${hint}`);
    }
    lines.push('');
  }
  return lines.join('\n');
}
