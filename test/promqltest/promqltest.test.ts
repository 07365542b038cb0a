// Prometheus' own PromQL test corpus (../shared/promqltest/*.test) run against
// Strata's engine: prints pass counts per file, lists failures by name, and
// fails when a file passes fewer evals than its committed baseline. The corpus
// is read where it lies; it is never copied into the repo.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FileResult } from './run-files.ts';
import { runFiles } from './run-files.ts';

const corpusDir = process.env.STRATA_PROMQLTEST_DIR ?? fileURLToPath(new URL('../../../shared/promqltest/', import.meta.url));
const baselinePath = fileURLToPath(new URL('./baseline.json', import.meta.url));
const updateBaseline = process.env.STRATA_UPDATE_PROMQLTEST_BASELINE === '1';
const PRINTED_FAILURES_PER_FILE = 30;

/** The files issue 4 sets a ≥95% target for; histograms.test counts classic histograms only. */
const TARGET_FILES = [
  'aggregators',
  'at_modifier',
  'collision',
  'functions',
  'histograms',
  'limit',
  'literals',
  'name_label_dropping',
  'operators',
  'range_queries',
  'selectors',
  'staleness',
  'subquery',
  'trig_functions',
].map((f) => `${f}.test`);
const CLASSIC_ONLY_FILES = new Set(['histograms.test']);

test('promqltest corpus', { timeout: 600_000 }, async (t) => {
  if (!existsSync(corpusDir)) {
    t.skip(`promqltest corpus not found at ${corpusDir} (set STRATA_PROMQLTEST_DIR)`);
    return;
  }
  const files = readdirSync(corpusDir)
    .filter((f) => f.endsWith('.test'))
    .sort();
  assert.ok(files.length > 0, `no *.test files in ${corpusDir}`);

  const started = Date.now();
  const results = await runFiles(
    files.map((f) => join(corpusDir, f)),
    { concurrency: Math.max(1, Math.min(4, availableParallelism())) },
  );
  const elapsed = ((Date.now() - started) / 1000).toFixed(1);

  const lines: string[] = [];
  const full: string[] = [];
  for (const r of results) {
    const passed = r.outcomes.filter((o) => o.passed).length;
    lines.push(`promqltest ${r.file}: ${passed}/${r.outcomes.length} passed`);
    const failures = r.outcomes.filter((o) => !o.passed);
    failures.forEach((o, i) => {
      const line = `  FAIL ${r.file}:${o.line} ${o.query} — ${o.reason}`;
      full.push(`${line}  [${o.category}${o.phase ? `/${o.phase}` : ''}]`);
      if (i < PRINTED_FAILURES_PER_FILE) lines.push(line.length > 400 ? line.slice(0, 400) + '…' : line);
    });
    if (failures.length > PRINTED_FAILURES_PER_FILE) lines.push(`  … and ${failures.length - PRINTED_FAILURES_PER_FILE} more (see the full list)`);
    for (const p of r.problems) {
      lines.push(`  PROBLEM ${r.file}:${p.line} ${p.message}`);
      full.push(`  PROBLEM ${r.file}:${p.line} ${p.message}`);
    }
  }

  const notes = results.flatMap((r) => r.outcomes.filter((o) => o.annotationNote).map((o) => `  NOTE ${r.file}:${o.line} ${o.query} — ${o.annotationNote}`));
  const failuresPath = join(tmpdir(), 'strata-promqltest-failures.txt');
  writeFileSync(
    failuresPath,
    [
      `# promqltest failures (${new Date().toISOString()}), corpus ${corpusDir}`,
      ...full,
      '',
      `# passing evals whose no_warn/no_info the engine's annotations contradict (not enforced yet): ${notes.length}`,
      ...notes,
      '',
    ].join('\n'),
  );

  lines.push(...summarize(results));
  lines.push(`promqltest: full failure list in ${failuresPath} (${elapsed}s)`);

  const counts = Object.fromEntries(results.map((r) => [r.file, r.outcomes.filter((o) => o.passed).length]));
  const baseline: Record<string, number> = existsSync(baselinePath) ? JSON.parse(readFileSync(baselinePath, 'utf8')) : {};
  const dropped: string[] = [];
  const raised: string[] = [];
  for (const [file, base] of Object.entries(baseline)) {
    const now = counts[file];
    if (now === undefined) dropped.push(`${file}: in the baseline (${base}) but not in the corpus`);
    else if (now < base) dropped.push(`${file}: ${now} passed, baseline ${base}`);
    else if (now > base) raised.push(`${file}: ${base} → ${now}`);
  }
  for (const file of Object.keys(counts)) if (!(file in baseline)) raised.push(`${file}: not in the baseline yet (${counts[file]} passed)`);

  if (updateBaseline) {
    const sorted = Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : 1)));
    writeFileSync(baselinePath, JSON.stringify(sorted, null, 2) + '\n');
    lines.push(`promqltest: wrote ${baselinePath}`);
  } else if (raised.length > 0) {
    lines.push(`promqltest: more evals pass than the baseline records — raise it with STRATA_UPDATE_PROMQLTEST_BASELINE=1:`);
    for (const r of raised) lines.push(`  ${r}`);
  }
  console.log(lines.join('\n'));

  if (!updateBaseline) {
    assert.deepEqual(dropped, [], `promqltest pass counts fell below ${baselinePath}:\n${dropped.join('\n')}`);
  }
});

function pct(n: number, d: number): string {
  return d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)}%`;
}

function summarize(results: FileResult[]): string[] {
  const all = results.flatMap((r) => r.outcomes);
  const passed = all.filter((o) => o.passed).length;
  const target = results.filter((r) => TARGET_FILES.includes(r.file));
  const missing = TARGET_FILES.filter((f) => !results.some((r) => r.file === f));

  // As issue 4 counts them: histograms.test without its native-histogram evals; every other eval counts.
  let tPassed = 0;
  let tTotal = 0;
  // The native-histogram evals of the target files, on their own.
  let nPassed = 0;
  let nTotal = 0;
  for (const r of target) {
    for (const o of r.outcomes) {
      if (o.nativeHistogram) {
        nTotal++;
        if (o.passed) nPassed++;
      }
      if (!(o.nativeHistogram && CLASSIC_ONLY_FILES.has(r.file))) {
        tTotal++;
        if (o.passed) tPassed++;
      }
    }
  }

  const byCause = new Map<string, number>();
  for (const o of all) if (!o.passed) byCause.set(o.category ?? 'unknown', (byCause.get(o.category ?? 'unknown') ?? 0) + 1);
  const causes = [...byCause].sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ${n}`);

  return [
    `promqltest overall: ${passed}/${all.length} evals passed (${pct(passed, all.length)})`,
    `promqltest target files: ${tPassed}/${tTotal} passed (${pct(tPassed, tTotal)}; histograms.test counts classic-histogram evals only)` +
      (missing.length > 0 ? `; missing from the corpus: ${missing.join(', ')}` : ''),
    `promqltest target files, native-histogram evals: ${nPassed}/${nTotal} passed (${pct(nPassed, nTotal)})`,
    `promqltest failures by cause: ${causes.join(', ') || 'none'}`,
  ];
}
