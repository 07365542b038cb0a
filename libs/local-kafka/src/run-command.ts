// Runs a short-lived command to completion and collects its output; for mvn and the
// Kafka storage tool. Never leaves the child behind: a timeout kills it.
import { spawn } from 'node:child_process';

export interface CommandResult {
  code: number | null;
  output: string;
}

export function runCommand(cmd: string, args: string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 300_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot run '${cmd}': ${err.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

/** The last `n` lines of a command's output, for error messages. */
export function tail(text: string, n = 20): string {
  return text.trimEnd().split('\n').slice(-n).join('\n');
}
