// info(v, {label selector}): enriches each series of v with the "data" labels of
// the info series (target_info by default) that share its identifying labels
// (instance, job), as Prometheus' experimental info() function (promql/info.go).
// The engine fetches the candidate info series before evaluation (infoFetch);
// the evaluator then combines step by step (combineInfo).

import type { Labels, Matcher, MatcherFn } from '@strata/model';
import { METRIC_NAME, matcherFn } from '@strata/model';
import type { VectorSelector } from './ast.ts';
import { PromQLExecutionError } from './errors.ts';
import { labelsString } from './labels.ts';
import type { PreparedSeries } from './prepared-series.ts';
import type { EvalSample, EvalVector } from './values.ts';

const TARGET_INFO = 'target_info';
/** The labels that tie a series to its info series. */
const IDENTIFYING_LABELS = ['instance', 'job'];

interface CompiledMatcher {
  m: Matcher;
  fn: MatcherFn;
}

/** The second argument of info(), split into __name__ matchers and data label matchers. */
export interface InfoSelector {
  /** Which metrics are info metrics (target_info when the selector names none). */
  nameMatchers: CompiledMatcher[];
  /** Data label name → its matchers; only these labels are copied when there are any. */
  dataMatchers: Map<string, CompiledMatcher[]>;
  /** Whether every data matcher accepts a missing label (then unmatched series pass unchanged). */
  allDataMatchersMatchEmpty: boolean;
}

const compile = (m: Matcher): CompiledMatcher => ({ m, fn: matcherFn(m) });

export function infoSelector(vs: VectorSelector | undefined): InfoSelector {
  const nameMatchers: CompiledMatcher[] = [];
  const dataMatchers = new Map<string, CompiledMatcher[]>();
  for (const m of vs?.matchers ?? []) {
    const c = compile(m);
    if (m.name === METRIC_NAME) nameMatchers.push(c);
    else dataMatchers.set(m.name, [...(dataMatchers.get(m.name) ?? []), c]);
  }
  for (const m of implicitNameMatchers(vs?.matchers ?? [])) nameMatchers.push(compile(m));
  let allDataMatchersMatchEmpty = true;
  for (const ms of dataMatchers.values()) if (ms.some((c) => !c.fn(''))) allDataMatchersMatchEmpty = false;
  return { nameMatchers, dataMatchers, allDataMatchersMatchEmpty };
}

/**
 * The __name__ matchers info() adds to its selector's: target_info when it
 * names no metric, any `*_info` metric when it only excludes some.
 */
function implicitNameMatchers(ms: Matcher[]): Matcher[] {
  const names = ms.filter((m) => m.name === METRIC_NAME);
  if (names.length === 0) return [{ type: '=', name: METRIC_NAME, value: TARGET_INFO }];
  if (!names.some((m) => m.type === '=' || m.type === '=~')) return [{ type: '=~', name: METRIC_NAME, value: '.+_info' }];
  return [];
}

/** The matchers that select info series: the selector's own and the implicit name matchers. */
export function infoFetchMatchers(vs: VectorSelector | undefined): Matcher[] {
  const ms = vs?.matchers ?? [];
  return [...implicitNameMatchers(ms), ...ms];
}

const labelOf = (ls: Labels, name: string): string => ls.find((l) => l.name === name)?.value ?? '';

/** Info series themselves are passed through: a series is one when its name satisfies every name matcher. */
function isInfoSeries(metric: Labels, sel: InfoSelector): boolean {
  const name = labelOf(metric, METRIC_NAME);
  return sel.nameMatchers.every((c) => c.fn(name));
}

/**
 * Narrows the fetched info series to those Prometheus would have selected:
 * for each identifying label some base series has, the info series' value
 * must be one of the base series' values. No base series with identifying
 * labels means no info series at all.
 */
export function relevantInfoSeries(info: PreparedSeries[], base: Labels[], sel: InfoSelector): PreparedSeries[] {
  const values = new Map<string, Set<string>>();
  for (const metric of base) {
    if (isInfoSeries(metric, sel)) continue;
    for (const name of IDENTIFYING_LABELS) {
      const v = labelOf(metric, name);
      if (v === '') continue;
      let set = values.get(name);
      if (!set) values.set(name, (set = new Set()));
      set.add(v);
    }
  }
  if (values.size === 0) return [];
  return info.filter((s) => [...values].every(([name, set]) => set.has(labelOf(s.metric, name))));
}

/** The join key of a series with the info metric `name`: the name plus its identifying labels. */
function signature(name: string, metric: Labels): string {
  let key = name;
  for (const l of IDENTIFYING_LABELS) {
    const v = labelOf(metric, l);
    if (v !== '') key += `\xff${l}\xfe${v}`;
  }
  return key;
}

/**
 * One step of info(): `infoVec` holds the info series' latest samples with
 * their sample timestamps as values. Returns the enriched base samples.
 */
export function combineInfo(base: EvalVector, infoVec: EvalVector, sel: InfoSelector): EvalVector {
  if (base.length === 0) return [];
  // The newest info sample per (metric name, identifying labels).
  const bySig = new Map<string, EvalSample>();
  const infoNames = new Set<string>();
  for (const s of infoVec) {
    if (s.h) throw new PromQLExecutionError('info sample should be float');
    const name = labelOf(s.metric, METRIC_NAME);
    infoNames.add(name);
    const sig = signature(name, s.metric);
    const existing = bySig.get(sig);
    if (!existing || existing.f < s.f) bySig.set(sig, s);
    else if (existing.f === s.f) {
      throw new PromQLExecutionError(
        `found duplicate series for info metric: existing ${labelsString(existing.metric)} @ ${existing.f}, new ${labelsString(s.metric)} @ ${s.f}`,
      );
    }
  }

  const out: EvalVector = [];
  for (const bs of base) {
    if (isInfoSeries(bs.metric, sel)) {
      out.push(bs);
      continue;
    }
    const have = new Set(bs.metric.map((l) => l.name));
    const added = new Map<string, string>();
    let matched = false;
    for (const name of infoNames) {
      const is = bySig.get(signature(name, bs.metric));
      if (!is) continue;
      matched = true;
      for (const l of is.metric) {
        if (l.name === METRIC_NAME) continue;
        if (sel.dataMatchers.size > 0 && !sel.dataMatchers.has(l.name)) continue;
        const prev = added.get(l.name);
        if (prev !== undefined && prev !== l.value) throw new PromQLExecutionError(`conflicting label: ${l.name}`);
        if (have.has(l.name)) continue;
        added.set(l.name, l.value);
      }
    }
    // Without a matching info series, a data matcher that needs a value drops the series.
    if (!matched && !sel.allDataMatchersMatchEmpty) continue;
    if (added.size === 0) {
      out.push(bs);
      continue;
    }
    const metric = [...bs.metric, ...[...added].map(([name, value]) => ({ name, value }))].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    out.push({ ...bs, metric });
  }
  return out;
}
