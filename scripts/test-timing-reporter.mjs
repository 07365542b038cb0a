// A node:test reporter that `npm test` runs beside the spec reporter: one line per test
// file as it finishes (its wall time, from process start to exit), then the slowest ten.
// It never decides pass or fail; the runner's exit code does. Each file's time is kept in
// .cache/test-timings.json, which scripts/test.mjs reads to start the slowest files first.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SLOWEST = 10;

export default async function* fileTimings(source) {
  const files = [];
  for await (const event of source) {
    if (event.type !== 'test:complete') continue;
    const { file, name, nesting, details } = event.data;
    // Each file runs in its own process under a test named with the path it was given; that test's duration is the file's.
    if (file === undefined || nesting !== 0 || resolve(name) !== file) continue;
    const entry = { file: relative(process.cwd(), file), ms: details.duration_ms, passed: details.passed };
    files.push(entry);
    yield `${line(entry)}\n`;
  }
  if (files.length === 0) return;
  const total = files.reduce((sum, f) => sum + f.ms, 0);
  const slowest = [...files].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST);
  yield `\nstrata test: ${files.length} files, ${seconds(total)} summed over files; the slowest ${slowest.length}:\n`;
  for (const f of slowest) yield `${line(f)}\n`;
  saveTimings(files);
}

const TIMINGS_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', '.cache', 'test-timings.json');

/** Each file's last wall time, ms, by its path from the repository root. */
export function readTimings() {
  try {
    return JSON.parse(readFileSync(TIMINGS_FILE, 'utf8'));
  } catch {
    return {};
  }
}

function saveTimings(files) {
  const timings = readTimings();
  for (const f of files) timings[f.file] = Math.round(f.ms);
  mkdirSync(dirname(TIMINGS_FILE), { recursive: true });
  writeFileSync(TIMINGS_FILE, `${JSON.stringify(timings, null, 1)}\n`);
}

function line({ file, ms, passed }) {
  return `  file ${seconds(ms).padStart(8)}  ${passed ? 'ok  ' : 'FAIL'}  ${file}`;
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}
