// Prometheus' rule-file format (rulefmt): a group's name, interval, limit,
// query_offset and rules, parsed from YAML and validated the way Prometheus
// validates a rules file. Never evaluates anything.

import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { formatDuration, parseDuration, parseExpr } from '@strata/promql';
import { RulerError } from './errors.ts';
import { parseTemplate } from './template.ts';

export interface RuleDesc {
  record?: string;
  alert?: string;
  expr: string;
  /** ms */
  for?: number;
  /** ms */
  keepFiringFor?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RuleGroupDesc {
  name: string;
  /** ms; undefined: the ruler's -ruler.evaluation-interval. */
  interval?: number;
  limit?: number;
  /** ms */
  queryOffset?: number;
  rules: RuleDesc[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const GROUP_KEYS = new Set(['name', 'interval', 'limit', 'query_offset', 'rules']);
const RULE_KEYS = new Set(['record', 'alert', 'expr', 'for', 'keep_firing_for', 'labels', 'annotations']);

const bad = (message: string) => new RulerError('invalid-rule-group', 'bad-input', message);

/** One group (Mimir's POST body) or a rules file (`groups:`); throws RulerError (bad-input) naming what is wrong. */
export function parseRuleGroups(text: string): RuleGroupDesc[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw bad(`the body is not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isObject(doc)) throw bad('the body must be a rule group (name, interval, rules) or a rules file (groups: [...])');
  const raw = 'groups' in doc ? doc.groups : [doc];
  if (!Array.isArray(raw)) throw bad('groups: must be a list of rule groups');
  const groups = raw.map((g, i) => parseGroup(g, i));
  const seen = new Set<string>();
  for (const g of groups) {
    if (seen.has(g.name)) throw bad(`${g.name}: repeated in the same file: groupname must be unique within a file`);
    seen.add(g.name);
  }
  return groups;
}

function parseGroup(g: unknown, index: number): RuleGroupDesc {
  if (!isObject(g)) throw bad(`group ${index + 1}: not a mapping`);
  for (const k of Object.keys(g)) if (!GROUP_KEYS.has(k)) throw bad(`group ${index + 1}: field ${k} not found in type rulefmt.RuleGroup`);
  if (typeof g.name !== 'string' || g.name === '') throw bad(`group ${index + 1}: groupname must not be empty`);
  const name = g.name;
  const out: RuleGroupDesc = { name, rules: [] };
  if (g.interval !== undefined) out.interval = durationField(g.interval, `group "${name}": interval`);
  if (out.interval === 0) delete out.interval;
  if (g.query_offset !== undefined) out.queryOffset = durationField(g.query_offset, `group "${name}": query_offset`);
  if (g.limit !== undefined) {
    if (typeof g.limit !== 'number' || !Number.isInteger(g.limit) || g.limit < 0) throw bad(`group "${name}": limit must be a non-negative integer`);
    out.limit = g.limit;
  }
  if (g.rules === undefined || g.rules === null) return out;
  if (!Array.isArray(g.rules)) throw bad(`group "${name}": rules must be a list`);
  out.rules = g.rules.map((r, i) => parseRule(r, `group "${name}", rule ${i + 1}`));
  return out;
}

function parseRule(r: unknown, where: string): RuleDesc {
  if (!isObject(r)) throw bad(`${where}: not a mapping`);
  for (const k of Object.keys(r)) if (!RULE_KEYS.has(k)) throw bad(`${where}: field ${k} not found in type rulefmt.Rule`);
  const record = optionalString(r.record, `${where}: record`);
  const alert = optionalString(r.alert, `${where}: alert`);
  if (record !== undefined && alert !== undefined) throw bad(`${where}: only one of 'record' and 'alert' must be set`);
  if (record === undefined && alert === undefined) throw bad(`${where}: one of 'record' or 'alert' must be set`);
  const ruleName = record ?? alert!;
  const at = `${where} (${record !== undefined ? 'record' : 'alert'}: ${ruleName})`;
  if (record !== undefined && !METRIC_NAME.test(record)) throw bad(`${at}: invalid recording rule name: ${record}`);
  if (alert === '') throw bad(`${at}: alert name must not be empty`);
  const expr = typeof r.expr === 'string' ? r.expr : typeof r.expr === 'number' ? String(r.expr) : undefined;
  if (expr === undefined || expr.trim() === '') throw bad(`${at}: field 'expr' must be set in rule`);
  try {
    parseExpr(expr, { enableExperimentalFunctions: true, enableDurationExpressions: true });
  } catch (err) {
    throw bad(`${at}: could not parse expression: ${(err as Error).message}`);
  }
  const out: RuleDesc = { expr };
  if (record !== undefined) {
    out.record = record;
    if (r.for !== undefined) throw bad(`${at}: invalid field 'for' in recording rule`);
    if (r.keep_firing_for !== undefined) throw bad(`${at}: invalid field 'keep_firing_for' in recording rule`);
    if (r.annotations !== undefined) throw bad(`${at}: invalid field 'annotations' in recording rule`);
  } else {
    out.alert = alert;
    if (r.for !== undefined) out.for = durationField(r.for, `${at}: for`);
    if (r.keep_firing_for !== undefined) out.keepFiringFor = durationField(r.keep_firing_for, `${at}: keep_firing_for`);
  }
  if (r.labels !== undefined && r.labels !== null) out.labels = stringMap(r.labels, `${at}: labels`, true);
  if (r.annotations !== undefined && r.annotations !== null) out.annotations = stringMap(r.annotations, `${at}: annotations`, false);
  // Templates must parse (Prometheus checks them when it loads the file).
  for (const [k, v] of [...Object.entries(out.labels ?? {}), ...Object.entries(out.annotations ?? {})]) {
    try {
      parseTemplate(v);
    } catch (err) {
      throw bad(`${at}: template of ${k}: ${(err as Error).message}`);
    }
  }
  return out;
}

/** The group in rule-file YAML, with Prometheus' field names and durations. */
export function groupToYamlObject(g: RuleGroupDesc): Record<string, unknown> {
  const out: Record<string, unknown> = { name: g.name };
  if (g.interval !== undefined) out.interval = formatDuration(g.interval);
  if (g.limit !== undefined && g.limit !== 0) out.limit = g.limit;
  if (g.queryOffset !== undefined && g.queryOffset !== 0) out.query_offset = formatDuration(g.queryOffset);
  out.rules = g.rules.map((r) => {
    const o: Record<string, unknown> = r.record !== undefined ? { record: r.record } : { alert: r.alert };
    o.expr = r.expr;
    if (r.for !== undefined && r.for !== 0) o.for = formatDuration(r.for);
    if (r.keepFiringFor !== undefined && r.keepFiringFor !== 0) o.keep_firing_for = formatDuration(r.keepFiringFor);
    if (r.labels && Object.keys(r.labels).length > 0) o.labels = r.labels;
    if (r.annotations && Object.keys(r.annotations).length > 0) o.annotations = r.annotations;
    return o;
  });
  return out;
}

export function groupToYaml(g: RuleGroupDesc): string {
  return stringifyYaml(groupToYamlObject(g), { lineWidth: 0 });
}

function durationField(v: unknown, where: string): number {
  if (typeof v !== 'string') throw bad(`${where}: not a valid duration string: ${JSON.stringify(v)}`);
  try {
    const ms = parseDuration(v);
    if (ms < 0) throw new Error('negative');
    return ms;
  } catch {
    throw bad(`${where}: not a valid duration string: "${v}"`);
  }
}

function optionalString(v: unknown, where: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw bad(`${where} must be a string`);
  return v;
}

function stringMap(v: unknown, where: string, isLabels: boolean): Record<string, string> {
  if (!isObject(v)) throw bad(`${where} must be a mapping`);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (!LABEL_NAME.test(k)) throw bad(`${where}: invalid label name: ${k}`);
    if (isLabels && k === '__name__') throw bad(`${where}: invalid label name: ${k}`);
    if (typeof val !== 'string' && typeof val !== 'number' && typeof val !== 'boolean') throw bad(`${where}: value of ${k} must be a string`);
    out[k] = String(val);
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
