// Summarises a V8 .cpuprofile (node --cpu-prof): self time per function and
// per area (a Strata lib, an npm package, GC, node internals), idle excluded.
//
//   node --import tsx test/bench/cpuprofile.ts CPU.*.cpuprofile [--top 15]

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

export interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface FunctionCost {
  name: string;
  where: string;
  area: string;
  selfMs: number;
  /** Share of busy (non-idle) time, %. */
  pct: number;
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  busyMs: number;
  top: FunctionCost[];
  byArea: { area: string; selfMs: number; pct: number }[];
}

/** Repo-relative file for Strata code, package-relative for node_modules. */
function shortUrl(url: string): string {
  let u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('/node_modules/');
  if (nm >= 0) return u.slice(nm + '/node_modules/'.length);
  const m = /\/((?:libs|apps|test|scripts)\/.*)$/.exec(u);
  if (m) u = m[1];
  return u;
}

function areaOf(f: CallFrame): string {
  const name = f.functionName;
  if (name === '(garbage collector)') return 'GC';
  if (name === '(idle)') return 'idle';
  if (name === '(program)') return 'V8/native (program)';
  if (name === '(root)') return 'root';
  const url = f.url;
  if (url === '') return 'V8 builtins/native';
  if (url.startsWith('node:')) return 'node internals';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const lib = /\/libs\/([^/]+)\//.exec(url);
  if (lib) return `@strata/${lib[1]}`;
  const app = /\/apps\/([^/]+)\//.exec(url);
  if (app) return `apps/${app[1]}`;
  return 'other';
}

/**
 * `window` keeps only samples taken within [fromUs, toUs] of the monotonic clock
 * (what process.hrtime measures, in µs), e.g. a steady load phase without startup.
 */
export function summariseProfile(p: CpuProfile, topN = 15, window?: { fromUs: number; toUs: number }): ProfileSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    if (window && (t < window.fromUs || t > window.toUs)) continue;
    selfUs.set(p.samples[i], (selfUs.get(p.samples[i]) ?? 0) + dt);
  }
  const fns = new Map<string, { f: CallFrame; us: number }>();
  const areas = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const f = node.callFrame;
    total += us;
    const area = areaOf(f);
    if (area === 'idle') {
      idle += us;
      continue;
    }
    areas.set(area, (areas.get(area) ?? 0) + us);
    const key = `${f.functionName}\u0000${f.url}\u0000${f.lineNumber}`;
    const e = fns.get(key);
    if (e) e.us += us;
    else fns.set(key, { f, us });
  }
  const busy = total - idle;
  const pct = (us: number) => (busy > 0 ? (100 * us) / busy : 0);
  const top = [...fns.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, topN)
    .map(({ f, us }) => ({
      name: f.functionName || '(anonymous)',
      // tsx's transpiled modules carry no useful line numbers (0): the file is shown alone then.
      where: f.url ? `${shortUrl(f.url)}${f.lineNumber > 0 ? `:${f.lineNumber + 1}` : ''}` : '',
      area: areaOf(f),
      selfMs: us / 1000,
      pct: pct(us),
    }));
  const byArea = [...areas].sort((a, b) => b[1] - a[1]).map(([area, us]) => ({ area, selfMs: us / 1000, pct: pct(us) }));
  return { totalMs: total / 1000, idleMs: idle / 1000, busyMs: busy / 1000, top, byArea };
}

export function formatSummary(title: string, s: ProfileSummary, areas = 8): string {
  const lines = [
    `${title}: ${(s.totalMs / 1000).toFixed(1)}s profiled, ${(s.busyMs / 1000).toFixed(1)}s busy (${((100 * s.busyMs) / Math.max(1, s.totalMs)).toFixed(0)}%)`,
    `  self time by area: ${s.byArea
      .slice(0, areas)
      .map((a) => `${a.area} ${a.pct.toFixed(1)}%`)
      .join(', ')}`,
    '  top functions by self time (% of busy):',
    ...s.top.map((f, i) => `  ${String(i + 1).padStart(2)}. ${f.pct.toFixed(1).padStart(5)}%  ${f.name}  ${f.where || `[${f.area}]`}`),
  ];
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const topIdx = args.indexOf('--top');
  const top = topIdx >= 0 ? Number(args.splice(topIdx, 2)[1]) : 15;
  for (const file of args) console.log(formatSummary(file, summariseProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, top)) + '\n');
}
