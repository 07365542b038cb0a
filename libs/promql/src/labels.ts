// Label-set operations the evaluator needs beyond @strata/model: the builder
// operations of Prometheus' labels.Builder (set, delete, keep) on sorted label
// arrays, join signatures, and Go's labels.String(). Inputs are never mutated.

import type { Labels } from '@strata/model';
import { METRIC_NAME, labelsKey } from '@strata/model';
import { goQuote } from './go-compat.ts';

/** Labels Prometheus drops when an operation changes a series' meaning (schema.IsMetadataLabel). */
const METADATA_LABELS = new Set([METRIC_NAME, '__type__', '__unit__']);

function hasMetadataLabels(ls: Labels): boolean {
  for (const l of ls) if (METADATA_LABELS.has(l.name)) return true;
  return false;
}

const dropped = new WeakMap<Labels, Labels>();

/**
 * The label set without __name__, __type__ and __unit__ (Prometheus'
 * DropReserved(IsMetadataLabel)). Memoized per input array, so a series keeps
 * one label array (and one key, see keyOf) across the steps of a query.
 */
export function dropMetadataLabels(ls: Labels): Labels {
  if (!hasMetadataLabels(ls)) return ls;
  let out = dropped.get(ls);
  if (!out) {
    out = ls.filter((l) => !METADATA_LABELS.has(l.name));
    dropped.set(ls, out);
  }
  return out;
}

const keys = new WeakMap<Labels, string>();

/** labelsKey, memoized per label array: evaluation reuses label arrays across steps. */
export function keyOf(ls: Labels): string {
  let k = keys.get(ls);
  if (k === undefined) {
    k = labelsKey(ls);
    keys.set(ls, k);
  }
  return k;
}

export function labelsWithout(ls: Labels, names: ReadonlySet<string>): Labels {
  return ls.filter((l) => !names.has(l.name));
}

export function labelsKeep(ls: Labels, names: ReadonlySet<string>): Labels {
  return ls.filter((l) => names.has(l.name));
}

/** Sets a label, keeping the set sorted; an empty value deletes the label as in Prometheus. */
export function setLabel(ls: Labels, name: string, value: string): Labels {
  const out: Labels = [];
  let done = false;
  for (const l of ls) {
    if (!done && l.name >= name) {
      done = true;
      if (value !== '') out.push({ name, value });
      if (l.name === name) continue;
    }
    out.push(l);
  }
  if (!done && value !== '') out.push({ name, value });
  return out;
}

export function getLabel(ls: Labels, name: string): string {
  for (const l of ls) if (l.name === name) return l.value;
  return '';
}

/**
 * The join signature of a label set: only `names` when `on`, everything but
 * `names` otherwise. Equal signatures mean "match" in vector matching and grouping.
 */
export function signature(ls: Labels, names: ReadonlySet<string>, on: boolean): string {
  let key = '';
  for (const l of ls) {
    if (names.has(l.name) === on) key += l.name + '\xff' + l.value + '\xfe';
  }
  return key;
}

/** Go's labels.Labels.String(): `{a="1", b="2"}`, names quoted only when not legacy-valid. */
export function labelsString(ls: Labels): string {
  const parts = ls.map((l) => {
    const name = /^[a-zA-Z_][a-zA-Z0-9_]*$/.test(l.name) ? l.name : goQuote(l.name);
    return `${name}=${goQuote(l.value)}`;
  });
  return '{' + parts.join(', ') + '}';
}
