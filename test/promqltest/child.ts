// Child-process entry for one promqltest file: runs it and streams each eval's
// start and outcome to the parent over IPC, so the parent can kill a hung eval
// and resume after it. It never decides pass counts itself.

import { readFileSync } from 'node:fs';
import { runScript } from './runner.ts';
import { parseScript } from './script.ts';

export type ChildMessage =
  | { type: 'problems'; problems: { line: number; message: string }[] }
  | { type: 'start'; line: number; query: string }
  | { type: 'outcome'; outcome: import('./runner.ts').EvalOutcome }
  | { type: 'done' };

function send(msg: ChildMessage): void {
  process.send!(msg);
}

// The parent is gone (killed or finished): stop rather than run on unobserved.
process.on('disconnect', () => {
  process.stderr.write('the parent closed the IPC channel\n');
  process.exit(0);
});

const [file, skip, queryTimeout] = process.argv.slice(2);
const script = parseScript(readFileSync(file, 'utf8'));
send({ type: 'problems', problems: script.problems });
await runScript(script, {
  skipThroughLine: skip ? Number(skip) : undefined,
  queryTimeoutMs: queryTimeout ? Number(queryTimeout) : undefined,
  onEvalStart: (cmd) => send({ type: 'start', line: cmd.line, query: cmd.query }),
  onOutcome: (outcome) => send({ type: 'outcome', outcome }),
});
send({ type: 'done' });
process.removeAllListeners('disconnect');
process.disconnect?.();
