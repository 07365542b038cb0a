// relabel_configs as Prometheus' YAML writes them (source_labels, separator, regex, modulus,
// target_label, replacement, action), checked as Prometheus checks them when it loads a config:
// a rule that could never work is refused with its index and why, so a reload keeps the old rules.

import { z } from 'zod';
import { compileRegex } from '@strata/model';
import type { RelabelAction, RelabelRule } from './relabel.ts';

const ACTIONS = ['replace', 'keep', 'drop', 'hashmod', 'labelmap', 'labeldrop', 'labelkeep', 'lowercase', 'uppercase', 'keepequal', 'dropequal'] as const;
const NEEDS_TARGET = new Set<RelabelAction>(['replace', 'hashmod', 'lowercase', 'uppercase', 'keepequal', 'dropequal']);
const DEFAULTS = { separator: ';', regex: '(.*)', replacement: '$1' };

const ruleSchema = z
  .object({
    source_labels: z.array(z.string()).optional(),
    separator: z.string().optional(),
    regex: z.string().optional(),
    modulus: z.number().int().nonnegative().optional(),
    target_label: z.string().optional(),
    replacement: z.string().optional(),
    action: z
      .string()
      .transform((a) => a.toLowerCase())
      .pipe(z.enum(ACTIONS))
      .optional(),
  })
  .strict();

type RuleYaml = z.infer<typeof ruleSchema>;

/** A list of relabel configs, compiled to rules; each invalid one is an issue naming it. */
export const relabelConfigsSchema = z.array(ruleSchema).transform((list, ctx) => {
  const rules: RelabelRule[] = [];
  list.forEach((yaml, i) => {
    const problem = invalid(yaml);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: [i], message: `relabel config ${i}: ${problem}` });
    else rules.push(compiled(yaml));
  });
  return rules;
});

function compiled(y: RuleYaml): RelabelRule {
  return {
    action: y.action ?? 'replace',
    sourceLabels: y.source_labels ?? [],
    separator: y.separator ?? DEFAULTS.separator,
    regex: y.regex ?? DEFAULTS.regex,
    targetLabel: y.target_label ?? '',
    replacement: y.replacement ?? DEFAULTS.replacement,
    modulus: y.modulus ?? 0,
  };
}

/** Why Prometheus would refuse the rule; undefined when it is fine. */
function invalid(y: RuleYaml): string | undefined {
  const action = y.action ?? 'replace';
  try {
    compileRegex(y.regex ?? DEFAULTS.regex);
  } catch (err) {
    return `invalid regex ${JSON.stringify(y.regex)}: ${(err as Error).message}`;
  }
  if (action === 'hashmod' && !y.modulus) return 'the hashmod action requires a non-zero modulus';
  if (NEEDS_TARGET.has(action) && !y.target_label) return `the ${action} action requires a target_label`;
  const onlyRegex =
    y.source_labels !== undefined || y.target_label !== undefined || y.modulus !== undefined || y.separator !== undefined || y.replacement !== undefined;
  if ((action === 'labeldrop' || action === 'labelkeep') && onlyRegex) return `the ${action} action takes only a regex, no other fields`;
  const equal = action === 'keepequal' || action === 'dropequal';
  if (equal && (y.regex !== undefined || y.modulus !== undefined || y.separator !== undefined || y.replacement !== undefined)) {
    return `the ${action} action takes only source_labels and target_label`;
  }
  return undefined;
}
