// Runs a parsed promqltest script against Strata's engine over an in-memory
// store (@strata/model/testing: floats and native histograms), with the checks of Prometheus' promql/promqltest/test.go: every eval
// is one outcome (pass, or fail with a reason). It never edits the script's
// expectations to fit the engine.

import type { Labels, NativeHistogram } from '@strata/model';
import { matcherFn, sortLabels } from '@strata/model';
import { Engine, FloatHistogram, PromQLError, PromQLParseError, formatExpr, parseExpr, walk } from '@strata/promql';
import type { Expr, QueryResult } from '@strata/promql';
import { MemoryQuerier } from '@strata/model/testing';
import type { FailureCategory } from './checks.ts';
import { EvalFailure, assertMatrixSorted, checkAnnotations, compareResult, describeExpectation, isOrdered, matches, summarize } from './checks.ts';
import type { EvalCmd, LoadCmd, Script } from './script.ts';
import type { SeqValue } from './series-desc.ts';
import { STALE_NAN_BITS, labelsKeyOf } from './series-desc.ts';

export { almostEqual } from './checks.ts';

const TENANT = 'promqltest';

/** Which of the queries an instant eval runs failed (Prometheus runs up to six, each also as a range query). */
type FailurePhase = 'instant' | 'range' | 'range-mode' | 'at-variant';

export interface EvalOutcome {
  line: number;
  query: string;
  passed: boolean;
  reason?: string;
  category?: FailureCategory;
  phase?: FailurePhase;
  /** The eval reads native-histogram data or expects native histograms. */
  nativeHistogram: boolean;
  /** A `no_warn` / `no_info` the engine's annotations contradict; reported, not counted (no_warn/no_info are not enforced yet). */
  annotationNote?: string;
}

export interface RunScriptOptions {
  /** Engine timeout per query. */
  queryTimeoutMs?: number;
  /** Evals on or before this line are not run (resuming after a hung eval). */
  skipThroughLine?: number;
  onEvalStart?: (cmd: EvalCmd) => void;
  onOutcome?: (outcome: EvalOutcome) => void;
}

/** Functions whose result depends on the evaluation time even with step-invariant arguments (Prometheus' AtModifierUnsafeFunctions). */
const AT_MODIFIER_UNSAFE_FUNCTIONS = new Set([
  'days_in_month',
  'day_of_month',
  'day_of_week',
  'day_of_year',
  'hour',
  'minute',
  'month',
  'year',
  'predict_linear',
  'time',
  'timestamp',
]);

/** Queries whose value depends on the query's own range (Prometheus' reQueryContextFuncs). */
const QUERY_CONTEXT_FUNCS = /(start|end|range|step)\(\)/;

/** Runs every command of a script in order; returns one outcome per eval. */
export async function runScript(script: Script, opts: RunScriptOptions = {}): Promise<EvalOutcome[]> {
  const env = new TestEnv(opts.queryTimeoutMs ?? 10_000);
  const outcomes: EvalOutcome[] = [];
  for (const cmd of script.commands) {
    if (cmd.kind === 'clear') env.clear();
    else if (cmd.kind === 'load') env.load(cmd);
    else {
      if (opts.skipThroughLine !== undefined && cmd.line <= opts.skipThroughLine) continue;
      opts.onEvalStart?.(cmd);
      const outcome = await runEval(env, cmd);
      outcomes.push(outcome);
      opts.onOutcome?.(outcome);
    }
  }
  return outcomes;
}

/** The storage and engine a script's commands act on; `clear` starts both afresh. */
class TestEnv {
  storage!: MemoryQuerier;
  engine!: Engine;
  /** Series that hold native histograms (loaded as such, or derived by load_with_nhcb). */
  nativeSeries: Labels[] = [];
  /** Series given start timestamps (`@st` lines), which Strata does not store. */
  startTimestampSeries: Labels[] = [];

  private readonly queryTimeoutMs: number;

  constructor(queryTimeoutMs: number) {
    this.queryTimeoutMs = queryTimeoutMs;
    this.clear();
  }

  clear(): void {
    // Independent of the ingester's head on purpose: the corpus tests the engine.
    this.storage = new MemoryQuerier();
    // Prometheus' test engine: 5m lookback, delayed name removal, experimental functions and duration expressions, 1m default subquery step.
    this.engine = new Engine({
      querier: this.storage,
      lookbackDeltaMs: 300_000,
      delayedNameRemoval: true,
      enableExperimentalFunctions: true,
      enableDurationExpressions: true,
      defaultSubqueryStepMs: 60_000,
      timeoutMs: this.queryTimeoutMs,
    });
    this.nativeSeries = [];
    this.startTimestampSeries = [];
  }

  load(cmd: LoadCmd): void {
    for (const s of cmd.series) {
      const ft: number[] = [];
      const fbits: bigint[] = [];
      const ht: number[] = [];
      const hs: NativeHistogram[] = [];
      s.values.forEach((v, i) => {
        const t = i * cmd.intervalMs;
        if (v.kind === 'omitted') return;
        if (v.kind === 'histogram') {
          ht.push(t);
          hs.push(v.h);
        } else {
          ft.push(t);
          fbits.push(floatBits(v));
        }
      });
      // Bits, not numbers: staleness markers are NaN payloads.
      if (ft.length > 0) this.storage.append(TENANT, s.labels, ft, new Float64Array(BigUint64Array.from(fbits).buffer));
      if (hs.length > 0) {
        this.storage.appendHistograms(TENANT, s.labels, ht, hs);
        this.nativeSeries.push(s.labels);
      }
    }
    if (cmd.withNhcb) {
      for (const n of nhcbHistograms(cmd)) {
        this.storage.appendHistograms(
          TENANT,
          n.labels,
          n.samples.map(([t]) => t),
          n.samples.map(([, h]) => h),
        );
        this.nativeSeries.push(n.labels);
      }
    }
    if (cmd.defaultStartTimestamps) this.startTimestampSeries.push(...cmd.series.map((s) => s.labels));
    else this.startTimestampSeries.push(...cmd.startTimestampSeries);
  }
}

/** A float sequence value's bits (staleness markers bit-exact). */
function floatBits(v: SeqValue): bigint {
  if (v.kind === 'stale') return STALE_NAN_BITS;
  const f = new Float64Array([v.kind === 'float' ? v.value : 0]);
  return new BigUint64Array(f.buffer)[0];
}

/**
 * load_with_nhcb: each classic histogram (`_bucket{le}`, `_count`, `_sum`)
 * also becomes a native histogram with custom buckets under its base name,
 * one per timestamp (Prometheus' convertnhcb).
 */
function nhcbHistograms(cmd: LoadCmd): { labels: Labels; samples: [number, FloatHistogram][] }[] {
  interface Family {
    labels: Labels;
    bounds: Set<number>;
    byTs: Map<number, { buckets: Map<number, number>; count?: number; sum?: number }>;
  }
  const families = new Map<string, Family>();
  for (const s of cmd.series) {
    const name = s.labels.find((l) => l.name === '__name__')?.value ?? '';
    const m = /^(.*)_(bucket|count|sum)$/.exec(name);
    if (!m) continue;
    let le = NaN;
    if (m[2] === 'bucket') {
      le = parseGoFloat(s.labels.find((l) => l.name === 'le')?.value ?? '');
      if (Number.isNaN(le)) continue;
    }
    const labels = sortLabels([...s.labels.filter((l) => l.name !== '__name__' && l.name !== 'le'), { name: '__name__', value: m[1] }]);
    const key = labelsKeyOf(labels);
    let fam = families.get(key);
    if (!fam) families.set(key, (fam = { labels, bounds: new Set(), byTs: new Map() }));
    if (m[2] === 'bucket') fam.bounds.add(le);
    s.values.forEach((v, i) => {
      if (v.kind !== 'float') return;
      const t = i * cmd.intervalMs;
      let e = fam!.byTs.get(t);
      if (!e) fam!.byTs.set(t, (e = { buckets: new Map() }));
      if (m[2] === 'bucket') e.buckets.set(le, v.value);
      else if (m[2] === 'count') e.count = v.value;
      else e.sum = v.value;
    });
  }
  const out: { labels: Labels; samples: [number, FloatHistogram][] }[] = [];
  for (const fam of families.values()) {
    const finite = [...fam.bounds].filter((b) => b !== Infinity).sort((a, b) => a - b);
    const samples: [number, FloatHistogram][] = [];
    for (const [t, e] of [...fam.byTs].sort((a, b) => a[0] - b[0])) {
      const h = new FloatHistogram();
      h.schema = -53;
      h.customValues = finite;
      let prev = 0;
      const buckets: number[] = [];
      for (const b of finite) {
        const cum = e.buckets.get(b) ?? prev;
        buckets.push(cum - prev);
        prev = cum;
      }
      const total = e.buckets.get(Infinity) ?? e.count ?? prev;
      buckets.push(total - prev);
      h.positiveSpans = [{ offset: 0, length: buckets.length }];
      h.positiveBuckets = buckets;
      h.count = e.count ?? total;
      h.sum = e.sum ?? 0;
      samples.push([t, h.compact(0)]);
    }
    if (samples.length > 0) out.push({ labels: fam.labels, samples });
  }
  return out;
}

function parseGoFloat(s: string): number {
  if (/^[+-]?inf(inity)?$/i.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(s)) return NaN;
  return Number(s);
}

// --- One eval -----------------------------------------------------------------------

async function runEval(env: TestEnv, cmd: EvalCmd): Promise<EvalOutcome> {
  const base = { line: cmd.line, query: cmd.query };
  const expectsHistogram = [...cmd.expected.values()].some((e) => e.values.some((v) => v.kind === 'histogram'));
  const native = expectsHistogram || selects(env.nativeSeries, cmd.query);
  const fail = (category: FailureCategory, reason: string, phase?: FailurePhase): EvalOutcome => ({
    ...base,
    passed: false,
    category,
    reason,
    ...(phase ? { phase } : {}),
    nativeHistogram: native,
  });
  if (cmd.scriptError) return fail('script', `unreadable expectation: ${cmd.scriptError}`);

  const notes: string[] = [];
  let failure: EvalOutcome | undefined;
  try {
    if (cmd.isRange) await execRangeEval(env, cmd, notes);
    else await execInstantEval(env, cmd, notes);
  } catch (err) {
    if (err instanceof PhaseFailure) failure = fail(err.failure.category, err.message, err.phase);
    else failure = fail('crash', `runner error: ${(err as Error).stack ?? String(err)}`);
  }
  if (failure && selects(env.startTimestampSeries, cmd.query)) {
    return { ...failure, category: 'start-timestamps', reason: `unsupported: start timestamps (Strata does not store them); ${failure.reason}` };
  }
  if (failure) return failure;
  return { ...base, passed: true, nativeHistogram: native, ...(notes.length > 0 ? { annotationNote: notes[0] } : {}) };
}

class PhaseFailure extends Error {
  readonly phase: FailurePhase;
  readonly failure: EvalFailure;

  constructor(phase: FailurePhase, failure: EvalFailure, label: string) {
    super(label ? `[${label}] ${failure.message}` : failure.message);
    this.phase = phase;
    this.failure = failure;
  }
}

async function inPhase<T>(phase: FailurePhase, label: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof EvalFailure) throw new PhaseFailure(phase, err, label);
    throw err;
  }
}

function isFail(cmd: EvalCmd): boolean {
  return cmd.legacy.fail || cmd.expect.fail.length > 0;
}

async function execRangeEval(env: TestEnv, cmd: EvalCmd, notes: string[]): Promise<void> {
  await inPhase('range', '', async () => {
    const res = await query(env, cmd, () => env.engine.rangeQuery({ tenant: TENANT, query: cmd.query, start: cmd.startMs, end: cmd.endMs, step: cmd.stepMs }));
    if (!res) return;
    checkAnnotations(cmd, res, notes);
    compareResult(cmd, res);
  });
}

async function execInstantEval(env: TestEnv, cmd: EvalCmd, notes: string[]): Promise<void> {
  const queries = [{ expr: cmd.query, evalMs: cmd.evalMs, label: '' }];
  // start()/end()/range()/step() as values depend on the query's own range, so pinning selectors
  // cannot make the query time-invariant (`@ start()` is fine: the variant replaces it).
  const usesQueryContext = QUERY_CONTEXT_FUNCS.test(cmd.query.replace(/@\s*(start|end)\(\)/g, ''));
  const variants = usesQueryContext ? [] : atModifierVariants(cmd.query, cmd.evalMs);
  for (const v of variants) queries.push({ ...v, label: `@ variant at t=${v.evalMs / 1000}s: ${v.expr}` });
  for (const q of queries) {
    const phase: FailurePhase = q.label ? 'at-variant' : 'instant';
    const res = await inPhase(phase, q.label, async () => {
      const r = await query(env, cmd, () => env.engine.instantQuery({ tenant: TENANT, query: q.expr, time: q.evalMs }));
      if (!r) return undefined;
      checkAnnotations(cmd, r, notes);
      compareResult(cmd, r);
      return r;
    });
    if (!res || cmd.excludeFromRangeQuery || QUERY_CONTEXT_FUNCS.test(q.expr)) continue;

    // The same query as a range query must give the same value at the middle step.
    await inPhase(q.label ? 'at-variant' : 'range-mode', `${q.label ? q.label + ', ' : ''}range mode`, async () => {
      let rangeRes: QueryResult;
      try {
        rangeRes = await env.engine.rangeQuery({ tenant: TENANT, query: q.expr, start: q.evalMs - 60_000, end: q.evalMs + 60_000, step: 60_000 });
      } catch (err) {
        throw errorFailure(err, 'unexpected error in range mode');
      }
      if (isOrdered(cmd)) return;
      if (rangeRes.resultType !== 'matrix') throw new EvalFailure('result', `range mode returned a ${rangeRes.resultType}, not a matrix`);
      assertMatrixSorted(rangeRes.result);
      const vec = [];
      for (const s of rangeRes.result) {
        const p = s.floats.find((pt) => pt.t === q.evalMs);
        if (p) vec.push({ metric: s.metric, t: p.t, f: p.f });
        const hp = s.histograms?.find((pt) => pt.t === q.evalMs);
        if (hp) vec.push({ metric: s.metric, t: hp.t, f: 0, h: hp.h });
      }
      if (res.resultType === 'scalar') {
        if (vec.length === 0) throw new EvalFailure('result', 'range mode returned no point at the evaluation time for a scalar');
        compareResult(cmd, { resultType: 'scalar', result: { t: q.evalMs, f: vec[0].f }, warnings: [], infos: [] });
      } else {
        compareResult(cmd, { resultType: 'vector', result: vec, warnings: [], infos: [] });
      }
    });
  }
}

/**
 * Runs a query; returns undefined when it failed as the eval expected, throws
 * EvalFailure when the outcome is wrong (Prometheus' checkExpectedFailure flow).
 */
async function query(env: TestEnv, cmd: EvalCmd, run: () => Promise<QueryResult>): Promise<QueryResult | undefined> {
  let res: QueryResult;
  try {
    res = await run();
  } catch (err) {
    if (err instanceof PromQLParseError) {
      // Prometheus parsed every corpus query when it read the script; a parse error here is Strata's gap.
      throw new EvalFailure('parse-error', `Strata cannot parse a query Prometheus accepts: ${err.message}`);
    }
    if (!isFail(cmd)) throw errorFailure(err, 'unexpected error');
    const msg = (err as Error).message;
    checkExpectedFailure(cmd, msg, err);
    return undefined;
  }
  if (isFail(cmd)) throw new EvalFailure('missing-error', `expected the query to fail${describeExpectedFailure(cmd)}, but it returned ${summarize(res)}`);
  return res;
}

function errorFailure(err: unknown, what: string): EvalFailure {
  if (err instanceof PromQLParseError) return new EvalFailure('parse-error', `Strata cannot parse a query Prometheus accepts: ${err.message}`);
  if (err instanceof PromQLError) {
    if (err.kind === 'timeout' || err.kind === 'canceled') return new EvalFailure('timeout', `${what}: ${err.message}`);
    if (/not supported yet/.test(err.message)) return new EvalFailure('unsupported', `${what}: ${err.message}`);
    return new EvalFailure('unexpected-error', `${what}: ${err.message}`);
  }
  return new EvalFailure('crash', `${what} (engine threw ${(err as Error)?.name ?? typeof err}): ${(err as Error)?.message ?? String(err)}`);
}

function checkExpectedFailure(cmd: EvalCmd, msg: string, err: unknown): void {
  const wrong = (expected: string) => {
    if (!(err instanceof PromQLError)) return errorFailure(err, `expected error ${expected}, but got`);
    return new EvalFailure(/not supported yet/.test(msg) ? 'unsupported' : 'wrong-error', `expected error ${expected}, but got: ${msg}`);
  };
  if (cmd.expectedFailMessage && cmd.expectedFailMessage !== msg) throw wrong(JSON.stringify(cmd.expectedFailMessage));
  if (cmd.expectedFailRegexp && !cmd.expectedFailRegexp.test(msg)) throw wrong(`matching ${cmd.expectedFailRegexp}`);
  const exp = cmd.expect.fail[0];
  if (exp && !matches(exp, msg)) throw wrong(describeExpectation(exp));
  // Any error satisfies a bare `expect fail`, but not a crash of the engine.
  if (!(err instanceof PromQLError)) throw errorFailure(err, 'expected a query error');
}

function describeExpectedFailure(cmd: EvalCmd): string {
  const exp = cmd.expect.fail[0];
  if (cmd.expectedFailMessage) return ` with ${JSON.stringify(cmd.expectedFailMessage)}`;
  if (cmd.expectedFailRegexp) return ` matching ${cmd.expectedFailRegexp}`;
  if (exp && (exp.message !== undefined || exp.regex)) return ` with ${describeExpectation(exp)}`;
  return '';
}

// --- Native histograms and @ variants ---------------------------------------------------

/** True if one of the query's selectors reaches one of `series`. */
function selects(series: Labels[], query: string): boolean {
  if (series.length === 0) return false;
  try {
    const expr = parseExpr(query, { enableExperimentalFunctions: true, enableDurationExpressions: true });
    let hit = false;
    walk(expr, (node) => {
      if (hit || node.kind !== 'vectorSelector') return;
      const fns = node.matchers.map((m) => ({ name: m.name, fn: matcherFn(m) }));
      hit = series.some((labels) => fns.every(({ name, fn }) => fn(labels.find((l) => l.name === name)?.value ?? '')));
    });
    return hit;
  } catch {
    // Our parser or matcher compiler rejects it; judge by the metric names the query mentions.
    return series.some((labels) => {
      const name = labels.find((l) => l.name === '__name__')?.value;
      return name !== undefined && new RegExp(`\\b${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(query);
    });
  }
}

/**
 * Prometheus' atModifierTestCases: the query with `@ <eval time>` on every
 * selector and subquery not already pinned (and nothing inside a pinned
 * subquery), evaluated at other times; none when a time-dependent function is used.
 */
export function atModifierVariants(query: string, evalMs: number): { expr: string; evalMs: number }[] {
  let expr: Expr;
  try {
    expr = parseExpr(query, { enableExperimentalFunctions: true, enableDurationExpressions: true });
  } catch {
    return []; // The main query reports the parse error.
  }
  let unsafe = false;
  walk(expr, (node, path) => {
    if (path.some((n) => n.kind === 'subquery' && n.atMs !== undefined)) return;
    if (node.kind === 'vectorSelector' || node.kind === 'subquery') {
      if (node.atMs === undefined) {
        node.atMs = evalMs;
        node.atStartOrEnd = undefined;
      }
    } else if (node.kind === 'call' && AT_MODIFIER_UNSAFE_FUNCTIONS.has(node.func.name)) {
      unsafe = true;
    }
  });
  if (unsafe) return [];
  const text = formatExpr(expr);
  const times = evalMs === 0 ? [-1000, 0, 1000] : [-10 * evalMs, 0, Math.trunc(evalMs / 5), evalMs, 10 * evalMs];
  return times.map((t) => ({ expr: text, evalMs: t }));
}
