// The memory one Strata process may use (-server.memory-limit): by default its cgroup's limit (a
// container's), else three quarters of the machine's. The V8 heap is sized from it before any work
// starts, as a JVM takes its heap from the container's limit or Go's runtime from GOMEMLIMIT, and
// the limits that keep a process alive under load (in-flight pushes, series per ingester, memory
// per query) default to shares of it. Never sizes a heap an operator set on the node command line.

import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { parsedFlag } from './flags.ts';

type BudgetSource = 'flag' | 'cgroup' | 'machine';

export interface MemoryBudget {
  bytes: number;
  source: BudgetSource;
}

/** The share of the budget the V8 heap may take; the rest is off-heap buffers, code and the C heap. */
const HEAP_SHARE = 0.75;
/** The share of the machine a process takes when nothing else bounds it. */
const MACHINE_SHARE = 0.75;
/** Limits above this are cgroup v1's "no limit" (a page-rounded 2^63). */
const NO_LIMIT = 2 ** 60;
/** Set on the re-executed process: its heap was sized from the budget here, not by the operator. */
const SIZED_ENV = 'STRATA_HEAP_SIZED_FROM_BUDGET';

const BYTE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  ki: 2 ** 10,
  kib: 2 ** 10,
  mi: 2 ** 20,
  mib: 2 ** 20,
  gi: 2 ** 30,
  gib: 2 ** 30,
  ti: 2 ** 40,
  tib: 2 ** 40,
};

/** Parses a byte size: a number of bytes, or with a unit as Kubernetes and Mimir write them (512Mi, 4GiB, 2G). */
export function parseByteSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m ? BYTE_UNITS[m[2].toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new Error(`invalid byte size "${text}" (use e.g. 536870912, 512MiB, 4GiB)`);
  return Math.floor(Number(m[1]) * unit);
}

/** zod type for a byte-size flag, yielding bytes. */
export const byteSize = (fallback: string) => parsedFlag(fallback, parseByteSize);

/** 512 MiB, 3.5 GiB: for log lines and pages. */
export function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 30) return `${+(bytes / 2 ** 30).toFixed(1)} GiB`;
  return `${Math.round(bytes / 2 ** 20)} MiB`;
}

/**
 * The smallest memory limit of this process' cgroup and its ancestors (v2 memory.max, v1
 * memory.limit_in_bytes); undefined when none is set. `read` is for tests.
 */
export function cgroupMemoryLimit(read: (path: string) => string = (p) => readFileSync(p, 'utf8')): number | undefined {
  let own: string;
  try {
    own = read('/proc/self/cgroup');
  } catch {
    return undefined;
  }
  let limit: number | undefined;
  for (const line of own.split('\n')) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (path === undefined) continue;
    const file =
      controllers === ''
        ? (dir: string) => `/sys/fs/cgroup${dir}/memory.max`
        : controllers.split(',').includes('memory')
          ? (dir: string) => `/sys/fs/cgroup/memory${dir}/memory.limit_in_bytes`
          : undefined;
    if (file === undefined) continue;
    for (let dir = path.replace(/\/$/, ''); ; dir = dir.slice(0, dir.lastIndexOf('/'))) {
      const n = readLimit(read, file(dir));
      if (n !== undefined) limit = Math.min(limit ?? n, n);
      if (dir === '') break;
    }
  }
  return limit;
}

function readLimit(read: (path: string) => string, path: string): number | undefined {
  try {
    const n = Number(read(path).trim());
    return Number.isFinite(n) && n > 0 && n < NO_LIMIT ? n : undefined;
  } catch {
    return undefined;
  }
}

/** The budget: the flag when set (non-zero), else the cgroup's limit, else a share of the machine; never above the machine. */
export function memoryBudget(
  flagBytes: number,
  host: { cgroupLimit?: number; machineBytes: number } = { cgroupLimit: cgroupMemoryLimit(), machineBytes: totalmem() },
): MemoryBudget {
  if (flagBytes > 0) return { bytes: flagBytes, source: 'flag' };
  if (host.cgroupLimit !== undefined && host.cgroupLimit < host.machineBytes) return { bytes: host.cgroupLimit, source: 'cgroup' };
  return { bytes: Math.floor(host.machineBytes * MACHINE_SHARE), source: 'machine' };
}

/** --max-old-space-size (MiB) for a budget. */
export function heapSizeMiB(budget: MemoryBudget): number {
  return Math.max(128, Math.floor((budget.bytes * HEAP_SHARE) / 2 ** 20));
}

/** The operator's --max-old-space-size, from the node command line or NODE_OPTIONS; undefined when not set. */
export function operatorHeapMiB(execArgv: readonly string[], nodeOptions: string | undefined): number | undefined {
  const args = [...(nodeOptions ?? '').split(/\s+/), ...execArgv];
  let mib: number | undefined;
  for (const a of args) {
    const m = /^--max[-_]old[-_]space[-_]size=(\d+)$/.exec(a);
    if (m) mib = Number(m[1]);
  }
  return mib;
}

export function describeBudget(budget: MemoryBudget): string {
  const from = { flag: '-server.memory-limit', cgroup: "the cgroup's memory limit", machine: `${MACHINE_SHARE * 100}% of the machine's memory` }[budget.source];
  return `${formatBytes(budget.bytes)} (${from})`;
}

/**
 * Makes this process' V8 heap the budget's share: when the operator did not size it and it was
 * not sized here already, re-executes node in place (same pid, same arguments) with
 * --max-old-space-size. Otherwise returns the startup log line saying what the heap is.
 */
export function sizeHeapFromBudget(budget: MemoryBudget, proc: NodeJS.Process = process): string {
  const operator = operatorHeapMiB(proc.execArgv, proc.env.NODE_OPTIONS);
  const want = heapSizeMiB(budget);
  const sizedHere = proc.env[SIZED_ENV] === String(want);
  // The processes this one starts size their own.
  delete proc.env[SIZED_ENV];
  const heap = formatBytes(getHeapStatistics().heap_size_limit);
  if (operator !== undefined && !sizedHere)
    return `memory budget ${describeBudget(budget)}; V8 heap ${heap}, as set by --max-old-space-size=${operator} on the node command line`;
  if (sizedHere) return `memory budget ${describeBudget(budget)}; V8 heap ${heap} (--max-old-space-size=${want}, ${HEAP_SHARE * 100}% of the budget)`;
  const argv = [proc.execPath, ...proc.execArgv, `--max-old-space-size=${want}`, ...proc.argv.slice(1)];
  proc.execve!(proc.execPath, argv, { ...proc.env, [SIZED_ENV]: String(want) });
  throw new Error('execve returned');
}
