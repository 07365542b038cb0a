// Label-matcher regex benchmark: Strata's compileRegex (fast paths + re2js)
// beside bare re2js, the native `re2` bindings (when RE2_NATIVE points at an
// installed copy: `npm i re2` elsewhere, then RE2_NATIVE=/that/node_modules/re2)
// and V8's backtracking RegExp (reference only: unsafe on user patterns).
//   node --import tsx libs/model/bench/regex.bench.ts
import { createRequire } from 'node:module';
import { RE2JS } from 're2js';
import { compileRegex } from '@strata/model';

interface Engine {
  name: string;
  compile(p: string): (v: string) => boolean;
}

const engines: Engine[] = [
  { name: 'strata', compile: (p) => compileRegex(p).matches },
  {
    name: 're2js',
    compile: (p) => {
      const re = RE2JS.compile(p, RE2JS.DOTALL);
      return (v) => re.testExact(v);
    },
  },
];
if (process.env.RE2_NATIVE) {
  const RE2 = createRequire(import.meta.url)(process.env.RE2_NATIVE) as new (p: string, f?: string) => { test(s: string): boolean };
  engines.push({
    name: 're2 (native)',
    compile: (p) => {
      const re = new RE2(`^(?s:${p})$`, 'u');
      return (v) => re.test(v);
    },
  });
}
engines.push({
  name: 'V8 RegExp',
  compile: (p) => {
    const ci = p.startsWith('(?i)');
    const re = new RegExp(`^(?:${ci ? p.slice(4) : p})$`, ci ? 'sui' : 'su');
    return (v) => re.test(v);
  },
});

// 10,000 label values shaped like pod / instance / path labels.
const values: string[] = [];
for (let i = 0; i < 10_000; i++) {
  values.push(i % 3 === 0 ? `api-server-${i}` : i % 3 === 1 ? `web-${i % 97}.prod.example.com:9090` : `/v1/users/${i}/orders`);
}

const cases: [string, string, boolean?][] = [
  ['literal', 'api-server-3'],
  ['set of 5', 'api-server-3|api-server-6|api-server-9|web-1\\.prod\\.example\\.com:9090|/v1/users/2/orders'],
  ['prefix', 'api-server-.*'],
  ['suffix', '.*:9090'],
  ['contains', '.*prod.*'],
  ['case-insensitive set', '(?i)API-SERVER-3|web-1\\.prod\\.example\\.com:9090'],
  ['class + repeat', 'web-[0-9]+\\.prod\\..*'],
  ['alternation of prefixes', '(api|web)-.*'],
  ['general', '/v1/users/\\d+/orders'],
  ['(a+)+b on 28 × a', '(a+)+b', true],
];

function bench(fn: (v: string) => boolean, input: string[], minMs = 300): number {
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < minMs) {
    for (const v of input) fn(v);
    n += input.length;
    t = performance.now();
  }
  return ((t - t0) * 1e6) / n; // ns per match
}

const header = ['case', ...engines.map((e) => e.name)];
const rows: string[][] = [];
for (const [name, pattern, pathological] of cases) {
  const input = pathological ? Array.from({ length: 10 }, () => 'a'.repeat(28)) : values;
  const row = [name];
  for (const e of engines) {
    if (pathological && e.name === 'V8 RegExp') {
      // Measured once: 28 characters already take V8 seconds; 34 froze the process for minutes.
      const fn = e.compile(pattern);
      const t0 = performance.now();
      fn('a'.repeat(24));
      row.push(`${((performance.now() - t0) / 1000).toFixed(2)} s (24 a)`);
      continue;
    }
    row.push(`${bench(e.compile(pattern), input).toFixed(0)} ns`);
  }
  rows.push(row);
}
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join('  ');
console.log(line(header));
for (const r of rows) console.log(line(r));
console.log('(ns per value matched; lower is better)');
