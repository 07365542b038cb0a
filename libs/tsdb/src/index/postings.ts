// Postings: label name -> label value -> ascending series ids. Selection by
// matchers follows Prometheus: a matcher that accepts "" also selects series
// that lack the label, so it is applied by subtraction.

import { matcherFn, matcherSetValues, type Matcher } from '@strata/model';

export class Postings {
  /** A value held by one series maps to its id alone: most unique values (instance, pod) never grow a list. */
  private readonly index = new Map<string, Map<string, number | number[]>>();
  private readonly all: number[] = [];

  /** Adds a series (ids ascending) by its flat [name0, value0, ...] labels. */
  add(id: number, flat: readonly string[]): void {
    this.all.push(id);
    for (let i = 0; i < flat.length; i += 2) {
      const name = flat[i];
      const value = flat[i + 1];
      let values = this.index.get(name);
      if (!values) this.index.set(name, (values = new Map<string, number | number[]>()));
      const list = values.get(value);
      if (list === undefined) values.set(value, id);
      else if (typeof list === 'number') values.set(value, [list, id]);
      else list.push(id);
    }
  }

  labelNames(): string[] {
    return [...this.index.keys()];
  }

  labelValues(name: string): string[] {
    return [...(this.index.get(name)?.keys() ?? [])];
  }

  /** Series ids selected by all matchers, ascending. */
  select(matchers: Matcher[]): number[] {
    const positive: number[][] = [];
    const negative: number[][] = [];
    for (const m of matchers) {
      const fn = matcherFn(m);
      const values = this.index.get(m.name);
      if (fn('')) {
        // Accepts absent labels: remove the series whose value is rejected.
        if (!values) continue;
        const rejected: number[][] = [];
        for (const [v, ids] of values) if (!fn(v)) rejected.push(asList(ids));
        if (rejected.length > 0) negative.push(union(rejected));
      } else {
        if (!values) return [];
        const set = matcherSetValues(m);
        if (set) {
          // Look the few accepted values up rather than test every value of the label.
          const found: number[][] = [];
          for (const v of set) {
            const ids = values.get(v);
            if (ids !== undefined) found.push(asList(ids));
          }
          if (found.length === 0) return [];
          positive.push(union(found));
          continue;
        }
        const accepted: number[][] = [];
        for (const [v, ids] of values) if (fn(v)) accepted.push(asList(ids));
        if (accepted.length === 0) return [];
        positive.push(union(accepted));
      }
    }
    let result = positive.length > 0 ? intersectAll(positive) : this.all;
    for (const ids of negative) result = subtract(result, ids);
    return result === this.all ? this.all.slice() : result;
  }
}

function asList(ids: number | number[]): number[] {
  return typeof ids === 'number' ? [ids] : ids;
}

function intersectAll(lists: number[][]): number[] {
  lists.sort((a, b) => a.length - b.length);
  let out = lists[0];
  for (let i = 1; i < lists.length && out.length > 0; i++) out = intersect(out, lists[i]);
  return out;
}

function intersect(a: number[], b: number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push(a[i]);
      i++;
      j++;
    } else if (a[i] < b[j]) i++;
    else j++;
  }
  return out;
}

function subtract(a: number[], b: number[]): number[] {
  const out: number[] = [];
  let j = 0;
  for (const id of a) {
    while (j < b.length && b[j] < id) j++;
    if (j >= b.length || b[j] !== id) out.push(id);
  }
  return out;
}

function union(lists: number[][]): number[] {
  if (lists.length === 1) return lists[0];
  const seen = new Set<number>();
  for (const l of lists) for (const id of l) seen.add(id);
  return [...seen].sort((x, y) => x - y);
}
