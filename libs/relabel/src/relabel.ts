// Prometheus' relabelling (model/relabel) of one label set by a list of rules, as metric_relabel_configs
// apply it: each rule in turn, `keep`/`drop` may drop the series, and a series left without labels is
// dropped. Rules come compiled from config.ts; nothing here throws on a user's data.

import { createHash } from 'node:crypto';
import { compileRegex, execRegex, expandRegexTemplate, type Labels, type Regex } from '@strata/model';

export type RelabelAction =
  'replace' | 'keep' | 'drop' | 'hashmod' | 'labelmap' | 'labeldrop' | 'labelkeep' | 'lowercase' | 'uppercase' | 'keepequal' | 'dropequal';

export interface RelabelRule {
  action: RelabelAction;
  sourceLabels: readonly string[];
  separator: string;
  /** The user's pattern, anchored when matched (as Prometheus anchors it). */
  regex: string;
  targetLabel: string;
  replacement: string;
  modulus: number;
}

/** The labels after the rules (sorted by name), or undefined when a rule dropped the series. Never edits `labels`. */
export function relabel(labels: Labels, rules: readonly RelabelRule[]): Labels | undefined {
  let ls: Map<string, string> | undefined;
  for (const rule of rules) {
    ls ??= new Map(labels.map((l) => [l.name, l.value]));
    if (!applyRule(ls, rule)) return undefined;
  }
  if (ls === undefined) return labels;
  const out = [...ls].filter(([, v]) => v !== '').map(([name, value]) => ({ name, value }));
  if (out.length === 0) return undefined;
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Applies one rule in place; false when it drops the series. */
function applyRule(ls: Map<string, string>, r: RelabelRule): boolean {
  const value = r.sourceLabels.map((n) => ls.get(n) ?? '').join(r.separator);
  switch (r.action) {
    case 'keep':
      return regex(r).matches(value);
    case 'drop':
      return !regex(r).matches(value);
    case 'keepequal':
      return value === (ls.get(r.targetLabel) ?? '');
    case 'dropequal':
      return value !== (ls.get(r.targetLabel) ?? '');
    case 'replace':
      replace(ls, r, value);
      return true;
    case 'hashmod':
      ls.set(r.targetLabel, String(hashMod(value, r.modulus)));
      return true;
    case 'lowercase':
      ls.set(r.targetLabel, value.toLowerCase());
      return true;
    case 'uppercase':
      ls.set(r.targetLabel, value.toUpperCase());
      return true;
    case 'labelmap':
      labelMap(ls, r);
      return true;
    case 'labeldrop':
    case 'labelkeep':
      for (const name of [...ls.keys()]) if (regex(r).matches(name) === (r.action === 'labeldrop')) ls.delete(name);
      return true;
  }
}

/** Sets target_label (its $refs expanded) to the expanded replacement when the regex matches; an empty result deletes it. */
function replace(ls: Map<string, string>, r: RelabelRule, value: string): void {
  const groups = execRegex(r.regex, value);
  if (groups === null) return;
  const target = expandRegexTemplate(r.targetLabel, groups);
  if (target === '') return;
  const result = expandRegexTemplate(r.replacement, groups);
  if (result === '') ls.delete(target);
  else ls.set(target, result);
}

/** Copies every label whose name matches to the name the replacement makes of it. */
function labelMap(ls: Map<string, string>, r: RelabelRule): void {
  for (const [name, v] of [...ls]) {
    const groups = execRegex(r.regex, name);
    if (groups !== null) ls.set(expandRegexTemplate(r.replacement, groups), v);
  }
}

function regex(r: RelabelRule): Regex {
  return compileRegex(r.regex);
}

/** Prometheus' hashmod: the MD5 of the value, its last 8 bytes as a big-endian integer, modulo. */
function hashMod(value: string, modulus: number): bigint {
  const digest = createHash('md5').update(value).digest();
  return digest.readBigUInt64BE(8) % BigInt(modulus);
}
