// CPU (utime+stime) and RSS of processes by pid, from /proc, plus load
// average and disk usage: what every bench figure is measured with.

import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

let clkTck: number | undefined;
function ticksPerSecond(): number {
  if (clkTck === undefined) {
    const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const n = Number(r.stdout?.trim());
    clkTck = Number.isFinite(n) && n > 0 ? n : 100;
  }
  return clkTck;
}

/** utime+stime of a process in seconds (all its threads); undefined when it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); utime is field 14, stime field 15.
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
  } catch {
    return undefined;
  }
}

/** VmRSS in bytes; undefined when the process is gone. */
export function rssBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** VmHWM (the most RSS the process ever held) in bytes; undefined when it is gone. */
export function peakRssBytes(pid: number): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the pid runs (a zombie counts as dead: it exited and only waits to be reaped). */
export function pidAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The direct children of a process (of all its threads). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) if (c.trim() !== '') out.push(Number(c));
    }
  } catch {
    // gone
  }
  return out;
}

export interface Proc {
  name: string;
  pid: number;
}

/** CPU seconds per process at one moment. */
export type CpuSnapshot = Map<string, number>;

export function snapshotCpu(procs: readonly Proc[]): CpuSnapshot {
  const m = new Map<string, number>();
  for (const p of procs) m.set(p.name, cpuSeconds(p.pid) ?? NaN);
  return m;
}

/** Per-process CPU seconds between two snapshots (processes restarted in between count from 0). */
export function cpuDelta(before: CpuSnapshot, after: CpuSnapshot): Map<string, number> {
  const d = new Map<string, number>();
  for (const [name, v] of after) {
    const b = before.get(name);
    d.set(name, b !== undefined && Number.isFinite(b) && v >= b ? v - b : v);
  }
  return d;
}

export function sum(values: Iterable<number>): number {
  let s = 0;
  for (const v of values) if (Number.isFinite(v)) s += v;
  return s;
}

export function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return '?';
  }
}

/** Bytes of the files under `dir` whose name passes `filter` (apparent size, sparse files as stored). */
export function dirBytes(dir: string, filter: (path: string) => boolean = () => true): number {
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of entries) {
    const p = join(dir, name);
    let st;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) total += dirBytes(p, filter);
    else if (st.isFile() && filter(p)) total += Math.min(st.size, st.blocks * 512);
  }
  return total;
}

export function machineDescription(): string {
  const c = cpus();
  return `${c.length} × ${c[0]?.model.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}`;
}
