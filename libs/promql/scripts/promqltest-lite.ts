// A small subset of Prometheus' promqltest script runner, for sanity-checking
// the engine against /work/shared/promqltest by hand. Float series only: files
// parts with native histograms are skipped. Not the real runner: it does not
// check annotations, and only checks `expect fail` / `expect ordered` / strings.
//
//   node --import tsx libs/promql/scripts/promqltest-lite.ts /work/shared/promqltest/literals.test [-v]

import { readFileSync } from 'node:fs';
import type { Labels, Matcher, Querier, Series } from '@strata/model';
import { labelsKey, sortLabels } from '@strata/model';
import type { QueryResult } from '../src/index.ts';
import { Engine, parseDuration, parseSelector, writeStaleMarker } from '../src/index.ts';
import { compileAnchoredRe2 } from '../src/regex.ts';

interface StoredSeries {
  labels: Labels;
  t: number[];
  f: number[];
  stale: boolean[];
}

class MemQuerier implements Querier {
  series = new Map<string, StoredSeries>();

  async select({ matchers, mint, maxt }: { matchers: Matcher[]; mint: number; maxt: number }): Promise<Series[]> {
    const out: Series[] = [];
    for (const s of [...this.series.values()].sort((a, b) => (labelsKey(a.labels) < labelsKey(b.labels) ? -1 : 1))) {
      if (!matchers.every((m) => matches(m, s.labels))) continue;
      const idx = s.t.map((t, i) => [t, i]).filter(([t]) => t >= mint && t <= maxt).map(([, i]) => i);
      if (idx.length === 0) continue;
      const values = new Float64Array(idx.map((i) => s.f[i]));
      idx.forEach((i, j) => s.stale[i] && writeStaleMarker(values, j));
      out.push({ labels: s.labels, timestamps: new Float64Array(idx.map((i) => s.t[i])), values });
    }
    return out;
  }
  async labelNames(): Promise<string[]> {
    return [];
  }
  async labelValues(): Promise<string[]> {
    return [];
  }
}

function matches(m: Matcher, ls: Labels): boolean {
  const v = ls.find((l) => l.name === m.name)?.value ?? '';
  switch (m.type) {
    case '=':
      return v === m.value;
    case '!=':
      return v !== m.value;
    case '=~':
      return compileAnchoredRe2(m.value).test(v);
    case '!~':
      return !compileAnchoredRe2(m.value).test(v);
  }
}

/** Expands a series' points: `1 2 _ stale 0+10x3 1-1x2 _x3 5x2`. Undefined for histograms. */
function expandValues(spec: string): ({ v: number; stale?: boolean } | null)[] | undefined {
  if (spec.includes('{{')) return undefined;
  const out: ({ v: number; stale?: boolean } | null)[] = [];
  for (const item of spec.trim().split(/\s+/).filter(Boolean)) {
    let m: RegExpExecArray | null;
    if (item === '_') out.push(null);
    else if ((m = /^_x(\d+)$/.exec(item))) for (let i = 0; i < Number(m[1]); i++) out.push(null);
    else if (item === 'stale') out.push({ v: NaN, stale: true });
    else if ((m = /^([^x]+?)([+-][^x]+)x(\d+)$/.exec(item))) {
      let v = num(m[1]);
      const d = num(m[2]);
      for (let i = 0; i <= Number(m[3]); i++, v += d) out.push({ v });
    } else if ((m = /^([^x]+)x(\d+)$/.exec(item))) {
      for (let i = 0; i <= Number(m[2]); i++) out.push({ v: num(m[1]) });
    } else out.push({ v: num(item) });
  }
  return out;
}

function num(s: string): number {
  if (/^[+-]?inf$/i.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(s)) return NaN;
  if (/^[+-]?\d+[smhdwy]/.test(s)) return parseDuration(s.replace(/^[+-]/, '')) / 1000 * (s.startsWith('-') ? -1 : 1);
  return Number(s);
}

function splitSeries(line: string): [Labels, string] {
  // Series descriptor ends at the closing brace, or at the first space without braces.
  let end: number;
  line = line.trim();
  if (line.startsWith('{') || /^[^\s{]+\{/.test(line)) {
    let quote = '';
    end = -1;
    for (let k = 0; k < line.length; k++) {
      const c = line[k];
      if (quote) {
        if (c === '\\') k++;
        else if (c === quote) quote = '';
      } else if (c === '"' || c === "'" || c === '`') quote = c;
      else if (c === '}') {
        end = k + 1;
        break;
      }
    }
  } else end = line.search(/\s/);
  if (end <= 0) end = line.length;
  const desc = line.slice(0, end).trim();
  const labels = sortLabels(parseSelector(desc).map((m) => ({ name: m.name, value: m.value })));
  return [labels, line.slice(end)];
}

function almostEqual(a: number, b: number): boolean {
  if (Number.isNaN(a) && Number.isNaN(b)) return true;
  if (a === b) return true;
  const absSum = Math.abs(a) + Math.abs(b);
  const diff = Math.abs(a - b);
  const minNormal = 2.2250738585072014e-308;
  if (a === 0 || b === 0 || absSum < minNormal) return diff < 1e-6 * minNormal;
  return diff / Math.min(absSum, Number.MAX_VALUE) < 1e-6;
}

function parseTime(s: string): number {
  return /^-?\d+(\.\d+)?$/.test(s) ? Number(s) * 1000 : (s.startsWith('-') ? -1 : 1) * parseDuration(s.replace(/^-/, ''));
}

interface Expectation {
  rangeVector?: { from: number; step: number };
  fail?: { msg?: string; regex?: string };
  ordered?: boolean;
  string?: string;
  lines: string[];
}

async function run(file: string, verbose: boolean): Promise<{ pass: number; fail: number; skip: number }> {
  const lines = readFileSync(file, 'utf8').split('\n');
  const q = new MemQuerier();
  const engine = new Engine({ querier: q, delayedNameRemoval: true, enableExperimentalFunctions: true, enableDurationExpressions: true });
  let pass = 0;
  let fail = 0;
  let skip = 0;
  let i = 0;
  // A command's block runs until an empty or comment line, as in promqltest's getLines.
  const block = (): string[] => {
    const out: string[] = [];
    while (i < lines.length && lines[i].trim() !== '' && !lines[i].trim().startsWith('#')) out.push(lines[i++].trim());
    return out;
  };
  while (i < lines.length) {
    const line = lines[i].trim();
    i++;
    if (line === '' || line.startsWith('#')) continue;
    if (line === 'clear') {
      q.series.clear();
      continue;
    }
    let m: RegExpExecArray | null;
    if ((m = /^load(?:_with_nhcb)?\s+(\S+)/.exec(line))) {
      const interval = parseDuration(m[1]);
      for (const l of block()) {
        const [labels, spec] = splitSeries(l);
        const vals = expandValues(spec);
        if (!vals) continue;
        const key = labelsKey(labels);
        const s = q.series.get(key) ?? { labels, t: [], f: [], stale: [] };
        vals.forEach((v, k) => {
          if (!v) return;
          s.t.push(k * interval);
          s.f.push(v.v);
          s.stale.push(!!v.stale);
        });
        q.series.set(key, s);
      }
      continue;
    }
    if ((m = /^(eval(?:_fail|_ordered|_warn|_info)?)\s+(instant at (\S+)|range from (\S+) to (\S+) step (\S+))\s+(.*)$/.exec(line))) {
      const kind = m[1];
      const query = m[7];
      const body = block();
      const exp: Expectation = { lines: [] };
      if (kind === 'eval_fail') exp.fail = {};
      if (kind === 'eval_ordered') exp.ordered = true;
      for (const b of body) {
        let e: RegExpExecArray | null;
        if ((e = /^expect fail(?:\s+(msg|regex):\s*(.*))?$/.exec(b))) exp.fail = e[1] === 'msg' ? { msg: e[2].replace(/^"(.*)"$/, '$1') } : e[1] ? { regex: e[2].replace(/^"(.*)"$/, '$1') } : {};
        else if (b === 'expect ordered') exp.ordered = true;
        else if ((e = /^expect range vector from (\S+) to (\S+) step (\S+)$/.exec(b))) exp.rangeVector = { from: parseTime(e[1]), step: parseTime(e[3]) };
        else if ((e = /^expect string\s+(["`])(.*)\1$/.exec(b))) exp.string = e[2];
        else if (b.startsWith('expect ')) continue;
        else if (b.startsWith('expected_fail_message') || b.startsWith('expected_fail_regexp')) exp.fail = {};
        else exp.lines.push(b);
      }
      if (exp.lines.some((l) => l.includes('{{'))) {
        skip++;
        continue;
      }
      let res: QueryResult | undefined;
      let err: Error | undefined;
      try {
        res = m[3] !== undefined
          ? await engine.instantQuery({ tenant: 't', query, time: parseTime(m[3]) })
          : await engine.rangeQuery({ tenant: 't', query, start: parseTime(m[4]), end: parseTime(m[5]), step: parseTime(m[6]) });
      } catch (e) {
        err = e as Error;
      }
      const problem = check(res, err, exp, m[3] !== undefined);
      if (problem === 'skip') skip++;
      else if (problem) {
        fail++;
        if (verbose) console.log(`FAIL ${file}:${i}: ${line}\n  ${problem}`);
      } else pass++;
      continue;
    }
  }
  return { pass, fail, skip };
}

function check(res: QueryResult | undefined, err: Error | undefined, exp: Expectation, instant: boolean): string | 'skip' | undefined {
  if (exp.fail) {
    if (!err) return `expected failure, got ${JSON.stringify(res?.result).slice(0, 200)}`;
    if (exp.fail.msg !== undefined && err.message !== exp.fail.msg) return `error ${JSON.stringify(err.message)} != ${JSON.stringify(exp.fail.msg)}`;
    if (exp.fail.regex !== undefined && !new RegExp(exp.fail.regex).test(err.message)) return `error ${JSON.stringify(err.message)} !~ ${exp.fail.regex}`;
    return undefined;
  }
  if (err) {
    if (/not supported yet/.test(err.message)) return 'skip';
    return `unexpected error: ${err.message}`;
  }
  if (!res) return 'no result';
  if (exp.string !== undefined) {
    if (res.resultType !== 'string' || res.result.value !== exp.string) return `expected string ${exp.string}, got ${JSON.stringify(res.result)}`;
    return undefined;
  }
  // Expected series.
  const want = new Map<string, { labels: Labels; vals: ({ v: number } | null)[] }>();
  const order: string[] = [];
  let scalarWant: number | undefined;
  for (const l of exp.lines) {
    if (/^[-+0-9.]|^(Inf|NaN|-Inf|\+Inf)/i.test(l) && !l.includes('{')) {
      scalarWant = num(l.split(/\s+/)[0]);
      continue;
    }
    const [labels, spec] = splitSeries(l);
    const key = labelsKey(labels);
    want.set(key, { labels, vals: expandValues(spec) ?? [] });
    order.push(key);
  }
  if (res.resultType === 'scalar') {
    if (scalarWant === undefined) return `got scalar ${res.result.f}, expected series`;
    return almostEqual(res.result.f, scalarWant) ? undefined : `scalar ${res.result.f} != ${scalarWant}`;
  }
  if (res.resultType === 'vector') {
    if (res.result.length !== want.size) return `got ${res.result.length} samples, want ${want.size}: ${JSON.stringify(res.result.map((s) => [s.metric, s.f]))}`;
    for (const [idx, s] of res.result.entries()) {
      const key = labelsKey(s.metric);
      const w = want.get(key);
      if (!w) return `unexpected series ${JSON.stringify(s.metric)} = ${s.f}; want ${[...want.values()].map((x) => JSON.stringify(x.labels)).join(' ')}`;
      if (!almostEqual(s.f, w.vals[0]?.v ?? NaN)) return `${JSON.stringify(s.metric)}: ${s.f} != ${w.vals[0]?.v}`;
      if (exp.ordered && order[idx] !== key) return `order mismatch at ${idx}`;
    }
    return undefined;
  }
  if (res.resultType === 'matrix') {
    if (instant && !exp.rangeVector) return 'skip';
    if (res.result.length !== want.size) return `got ${res.result.length} series, want ${want.size}: ${JSON.stringify(res.result.map((s) => s.metric))}`;
    for (const s of res.result) {
      const w = want.get(labelsKey(s.metric));
      if (!w) return `unexpected series ${JSON.stringify(s.metric)}`;
      const got = s.floats;
      const wantPts = w.vals.map((v, k) => (v ? { k, v: v.v } : null)).filter((x) => x !== null);
      if (got.length !== wantPts.length) return `${JSON.stringify(s.metric)}: ${got.length} points, want ${wantPts.length}: got ${JSON.stringify(got.map((p) => p.f))} want ${JSON.stringify(w.vals.map((v) => v?.v ?? '_'))}`;
      for (let k = 0; k < got.length; k++) {
        if (!almostEqual(got[k].f, wantPts[k]!.v)) return `${JSON.stringify(s.metric)}[${k}]: ${got[k].f} != ${wantPts[k]!.v}`;
        if (exp.rangeVector && got[k].t !== exp.rangeVector.from + wantPts[k]!.k * exp.rangeVector.step) {
          return `${JSON.stringify(s.metric)}[${k}]: at ${got[k].t}, want ${exp.rangeVector.from + wantPts[k]!.k * exp.rangeVector.step}`;
        }
      }
    }
    return undefined;
  }
  return `unexpected result type ${res.resultType}`;
}

const verbose = process.argv.includes('-v');
let total = { pass: 0, fail: 0, skip: 0 };
for (const f of process.argv.slice(2).filter((a) => a !== '-v')) {
  const r = await run(f, verbose);
  console.log(`${f}: pass ${r.pass} fail ${r.fail} skip ${r.skip}`);
  total = { pass: total.pass + r.pass, fail: total.fail + r.fail, skip: total.skip + r.skip };
}
console.log(`total: pass ${total.pass} fail ${total.fail} skip ${total.skip}`);
