// Runs promqltest files each in its own child process with a per-eval
// watchdog: an eval that hangs (or kills its process) becomes a failed eval and
// the file resumes after it. Evaluation itself is in runner.ts.

import { fork } from 'node:child_process';
import { basename } from 'node:path';
import type { ChildMessage } from './child.ts';
import type { EvalOutcome } from './runner.ts';
import type { ScriptProblem } from './script.ts';

export interface FileResult {
  file: string;
  outcomes: EvalOutcome[];
  /** Script lines that could not be parsed, and process-level trouble. */
  problems: ScriptProblem[];
}

export interface RunFilesOptions {
  /** Wall-clock budget of one eval (all its queries) before its process is killed. */
  evalTimeoutMs?: number;
  /** Engine timeout of one query. */
  queryTimeoutMs?: number;
  /** Files run at once. */
  concurrency?: number;
}

const CHILD = new URL('./child.ts', import.meta.url);

export async function runFiles(paths: string[], opts: RunFilesOptions = {}): Promise<FileResult[]> {
  const results: FileResult[] = new Array(paths.length);
  let next = 0;
  const workers = Array.from({ length: Math.max(1, Math.min(opts.concurrency ?? 2, paths.length)) }, async () => {
    while (next < paths.length) {
      const i = next++;
      results[i] = await runFileIsolated(paths[i], opts);
    }
  });
  await Promise.all(workers);
  return results;
}

async function runFileIsolated(path: string, opts: RunFilesOptions = {}): Promise<FileResult> {
  const evalTimeoutMs = opts.evalTimeoutMs ?? 20_000;
  const queryTimeoutMs = opts.queryTimeoutMs ?? 10_000;
  const result: FileResult = { file: basename(path), outcomes: [], problems: [] };
  let skipThroughLine: number | undefined;
  // A process that dies mid-eval without timing out is run once more from that eval: a
  // crash of the engine repeats, a lost IPC channel on a loaded machine does not.
  let retriedLine: number | undefined;
  for (;;) {
    const r = await runChild(path, skipThroughLine, evalTimeoutMs, queryTimeoutMs, result);
    if (r.done) return result;
    if (!r.current) {
      result.problems.push({ line: 0, message: `the runner process ended outside an eval: ${r.why}` });
      return result;
    }
    if (!r.timedOut && retriedLine !== r.current.line) {
      retriedLine = r.current.line;
      skipThroughLine = r.current.line - 1;
      continue;
    }
    result.outcomes.push({
      line: r.current.line,
      query: r.current.query,
      passed: false,
      category: r.timedOut ? 'timeout' : 'crash',
      reason: r.timedOut ? `eval did not finish within ${evalTimeoutMs}ms; its process was killed` : `the runner process died twice: ${r.why}`,
      nativeHistogram: false,
    });
    skipThroughLine = r.current.line;
  }
}

interface ChildEnd {
  done: boolean;
  timedOut: boolean;
  current?: { line: number; query: string };
  why: string;
}

function runChild(path: string, skip: number | undefined, evalTimeoutMs: number, queryTimeoutMs: number, result: FileResult): Promise<ChildEnd> {
  return new Promise((resolve) => {
    const child = fork(CHILD, [path, skip === undefined ? '' : String(skip), String(queryTimeoutMs)], {
      execArgv: ['--import', import.meta.resolve('tsx')],
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    let current: { line: number; query: string } | undefined;
    let done = false;
    let timedOut = false;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    // Before the first eval starts the process is loading tsx and the script; give it longer.
    const arm = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, ms);
    };
    arm(Math.max(evalTimeoutMs, 60_000));
    const finish = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ done, timedOut, current, why });
    };
    child.on('message', (raw) => {
      const msg = raw as ChildMessage;
      switch (msg.type) {
        case 'problems':
          result.problems.push(...msg.problems);
          break;
        case 'start':
          current = { line: msg.line, query: msg.query };
          arm(evalTimeoutMs);
          break;
        case 'outcome':
          result.outcomes.push(msg.outcome);
          current = undefined;
          arm(evalTimeoutMs);
          break;
        case 'done':
          done = true;
          clearTimeout(timer);
          break;
      }
    });
    child.on('exit', (code, signal) => {
      if (done) return finish('done');
      const tail = stderr.trim().split('\n').slice(-3).join(' | ');
      finish(`exit code ${code ?? ''}${signal ? ` signal ${signal}` : ''}${tail ? `: ${tail}` : ''}`);
    });
    child.on('error', (err) => {
      finish(`could not run the child: ${err.message}`);
    });
  });
}
