// A parser for Prometheus' promqltest script language (load / clear / eval with
// expectations), following promql/promqltest/test.go line for line where the
// semantics matter. It only reads scripts; it never evaluates a query.

import type { Labels } from '@strata/model';
import { parseDuration } from '@strata/promql';
import type { SeriesDesc } from './series-desc.ts';
import { goUnquote, labelsKeyOf, parseSeriesDesc } from './series-desc.ts';

export interface LoadCmd {
  kind: 'load';
  /** 1-based line of the `load` line. */
  line: number;
  intervalMs: number;
  /** `load_with_nhcb`: classic histograms are also loaded as native histograms with custom buckets. */
  withNhcb: boolean;
  series: (SeriesDesc & { line: number })[];
  /** Series given start timestamps by `metric@st` lines (all of them if a bare `@st` line set a default). */
  startTimestampSeries: Labels[];
  defaultStartTimestamps: boolean;
}

interface ClearCmd {
  kind: 'clear';
  line: number;
}

/** An `expect <type> [msg|regex]: ...` line; neither message nor regex means "any". */
export interface Expectation {
  message?: string;
  regex?: RegExp;
}

interface ExpectedSeries extends SeriesDesc {
  /** Position among the eval's lines, for `ordered` (Prometheus' `j`). */
  pos: number;
  line: number;
}

export interface EvalCmd {
  kind: 'eval';
  line: number;
  query: string;
  isRange: boolean;
  /** Range: start/end/step. Instant: the evaluation time (also `end` with `expect range vector`). */
  startMs: number;
  endMs: number;
  stepMs: number;
  evalMs: number;
  /** Deprecated eval_fail / eval_warn / eval_info / eval_ordered. */
  legacy: { fail: boolean; warn: boolean; info: boolean; ordered: boolean };
  expectedFailMessage?: string;
  expectedFailRegexp?: RegExp;
  expect: {
    fail: Expectation[];
    warn: Expectation[];
    info: Expectation[];
    noWarn: boolean;
    noInfo: boolean;
    ordered: boolean;
  };
  /** Expected series by label-set key (a later line for the same labels replaces an earlier one). */
  expected: Map<string, ExpectedSeries>;
  /** Set when a bare number line gives a scalar result. */
  expectedScalar?: number;
  expectedString?: string;
  /** `expect range vector from .. to .. step ..` was given (instant query returning a matrix). */
  expectRangeVector: boolean;
  excludeFromRangeQuery: boolean;
  /** An expectation line the parser could not read; the eval cannot pass. */
  scriptError?: string;
}

type Command = LoadCmd | ClearCmd | EvalCmd;

export interface ScriptProblem {
  line: number;
  message: string;
}

export interface Script {
  commands: Command[];
  /** Lines the parser could not read (the rest of the script is still parsed). */
  problems: ScriptProblem[];
}

class ScriptError extends Error {
  readonly line: number;

  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.line = line;
    this.name = 'ScriptError';
  }
}

const PAT_LOAD = /^load(?:_(with_nhcb))?\s+(.+?)$/;
const PAT_EVAL_INSTANT = /^eval(?:_(fail|warn|ordered|info))?\s+instant\s+(?:at\s+(.+?))?\s+(.+)$/;
const PAT_EVAL_RANGE = /^eval(?:_(fail|warn|info))?\s+range\s+from\s+(.+)\s+to\s+(.+)\s+step\s+(.+?)\s+(.+)$/;
const PAT_EXPECT = /^expect\s+(ordered|fail|warn|no_warn|info|no_info)(?:\s+(regex|msg):(.+))?$/;
const RANGE_VECTOR_PREFIX = 'expect range vector';
const PAT_EXPECT_RANGE = /^expect range vector\s+from\s+(.+)\s+to\s+(.+)\s+step\s+(.+)$/;
const EXPECT_STRING_PREFIX = 'expect string';

/** Parses a whole script. Unreadable commands are reported in `problems` and skipped. */
export function parseScript(input: string): Script {
  // Prometheus' getLines: trimmed, comment lines blanked (so a comment ends a block).
  const lines = input.split('\n').map((l) => {
    const t = l.trim();
    return t.startsWith('#') ? '' : t;
  });
  const commands: Command[] = [];
  const problems: ScriptProblem[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (l === '') continue;
    const c = l.split(/[\t ]+/, 1)[0].toLowerCase();
    try {
      if (c === 'clear') {
        commands.push({ kind: 'clear', line: i + 1 });
      } else if (c.startsWith('load')) {
        const [next, cmd] = parseLoad(lines, i);
        i = next;
        commands.push(cmd);
      } else if (c.startsWith('eval')) {
        const [next, cmd] = parseEval(lines, i);
        i = next;
        commands.push(cmd);
      } else {
        throw new ScriptError(i + 1, `invalid command ${JSON.stringify(l)}`);
      }
    } catch (err) {
      if (!(err instanceof ScriptError)) throw err;
      problems.push({ line: err.line, message: err.message });
      // Skip the rest of the block.
      while (i + 1 < lines.length && lines[i + 1] !== '') i++;
    }
  }
  return { commands, problems };
}

function parseLoad(lines: string[], i: number): [number, LoadCmd] {
  const m = PAT_LOAD.exec(lines[i]);
  if (!m) throw new ScriptError(i + 1, 'invalid load command. (load[_with_nhcb] <step:duration>)');
  const cmd: LoadCmd = {
    kind: 'load',
    line: i + 1,
    intervalMs: durationOrThrow(m[2], i, 'step'),
    withNhcb: m[1] === 'with_nhcb',
    series: [],
    startTimestampSeries: [],
    defaultStartTimestamps: false,
  };
  const byKey = new Map<string, number>();
  while (i + 1 < lines.length) {
    i++;
    const def = lines[i];
    if (def === '') {
      i--;
      break;
    }
    if (isStartTimestampLine(def)) {
      const metricPart = def.slice(0, def.search(/[ \t]/) - '@st'.length);
      if (metricPart === '') cmd.defaultStartTimestamps = true;
      else cmd.startTimestampSeries.push(seriesAt(`${metricPart} _`, i).labels);
      continue;
    }
    const s = seriesAt(def, i);
    // Prometheus keys a load's series by label set: a repeated series replaces the earlier line.
    const key = labelsKeyOf(s.labels);
    const prev = byKey.get(key);
    if (prev !== undefined) cmd.series[prev] = { ...s, line: i + 1 };
    else {
      byKey.set(key, cmd.series.length);
      cmd.series.push({ ...s, line: i + 1 });
    }
  }
  return [i, cmd];
}

function seriesAt(def: string, i: number): SeriesDesc {
  try {
    return parseSeriesDesc(def);
  } catch (err) {
    throw new ScriptError(i + 1, (err as Error).message);
  }
}

/** `metric{...}@st <offsets>` or a bare `@st <offsets>` (Prometheus' isSTLine). */
function isStartTimestampLine(def: string): boolean {
  const space = def.search(/[ \t]/);
  return space >= 0 && def.slice(0, space).endsWith('@st');
}

function parseEval(lines: string[], i: number): [number, EvalCmd] {
  const line = lines[i];
  const inst = PAT_EVAL_INSTANT.exec(line);
  const rng = inst ? null : PAT_EVAL_RANGE.exec(line);
  if (!inst && !rng) {
    throw new ScriptError(
      i + 1,
      "invalid evaluation command. Must be either 'eval[_fail|_warn|_ordered] instant [at <offset:duration>] <query>' or 'eval[_fail|_warn] range from <from> to <to> step <step> <query>'",
    );
  }
  const mod = inst ? inst[1] : rng![1];
  const query = inst ? inst[3] : rng![5];
  const cmd: EvalCmd = {
    kind: 'eval',
    line: i + 1,
    query,
    isRange: !inst,
    startMs: 0,
    endMs: 0,
    stepMs: 0,
    evalMs: 0,
    legacy: { fail: mod === 'fail', warn: mod === 'warn', info: mod === 'info', ordered: mod === 'ordered' },
    expect: { fail: [], warn: [], info: [], noWarn: false, noInfo: false, ordered: false },
    expected: new Map(),
    expectRangeVector: false,
    excludeFromRangeQuery: false,
  };
  if (inst) {
    cmd.startMs = cmd.endMs = cmd.evalMs = durationOrThrow(inst[2] ?? '', i, 'timestamp');
  } else {
    const [from, to, step] = parseDurations(rng![2], rng![3], rng![4], i);
    cmd.startMs = from;
    cmd.endMs = to;
    cmd.stepMs = step;
  }

  for (let j = 1; i + 1 < lines.length; j++) {
    i++;
    const def = lines[i];
    if (def === '') {
      i--;
      break;
    }
    try {
      if (cmd.legacy.fail && def.startsWith('expected_fail_message')) {
        cmd.expectedFailMessage = def.slice('expected_fail_message'.length).trim();
        break;
      }
      if (cmd.legacy.fail && def.startsWith('expected_fail_regexp')) {
        cmd.expectedFailRegexp = goRegexp(def.slice('expected_fail_regexp'.length).trim());
        break;
      }
      if (def.startsWith(RANGE_VECTOR_PREFIX)) {
        const m = PAT_EXPECT_RANGE.exec(def);
        if (!m) throw new Error(`invalid range vector definition ${JSON.stringify(def)}`);
        const [from, to, step] = parseDurations(m[1], m[2], m[3], i);
        cmd.expectRangeVector = true;
        cmd.startMs = from;
        cmd.endMs = to;
        cmd.stepMs = step;
        cmd.evalMs = to;
        cmd.excludeFromRangeQuery = true;
        continue;
      }
      if (def.startsWith(EXPECT_STRING_PREFIX)) {
        cmd.expectedString = parseStringLiteral(def);
        cmd.excludeFromRangeQuery = true;
        continue;
      }
      // A metric named `expect` must be written `expect{}`.
      if (def.split(' ')[0] === 'expect') {
        parseExpect(def, cmd);
        j--;
        continue;
      }
      const scalar = parseGoNumber(def);
      if (scalar !== undefined) {
        cmd.expectedScalar = scalar;
        break;
      }
      const s = parseSeriesDesc(def);
      if (s.values.length > 1 && !cmd.isRange && !cmd.expectRangeVector) {
        throw new Error(
          "expecting multiple values in instant evaluation not allowed. consider using 'expect range vector' directive to enable a range vector result for an instant query",
        );
      }
      cmd.expectedScalar = undefined;
      cmd.expected.set(labelsKeyOf(s.labels), { ...s, pos: j, line: i + 1 });
    } catch (err) {
      // Keep the eval (it counts) but make it fail with the reason.
      cmd.scriptError ??= `line ${i + 1}: ${(err as Error).message}`;
    }
  }
  return [i, cmd];
}

function parseExpect(def: string, cmd: EvalCmd): void {
  const m = PAT_EXPECT.exec(def.trim());
  if (!m) throw new Error('invalid expect statement, must match `expect <type> <match_type>: <string>` format');
  const [, type, matchType, text] = m;
  const exp: Expectation = {};
  if (matchType === 'msg') exp.message = text.trim();
  else if (matchType === 'regex') exp.regex = goRegexp(text.trim());
  switch (type) {
    case 'fail':
      if (cmd.expect.fail.length > 0) throw new Error('invalid expect lines, multiple expect fail lines are not allowed');
      cmd.expect.fail.push(exp);
      break;
    case 'warn':
      cmd.expect.warn.push(exp);
      break;
    case 'info':
      cmd.expect.info.push(exp);
      break;
    case 'no_warn':
      cmd.expect.noWarn = true;
      break;
    case 'no_info':
      cmd.expect.noInfo = true;
      break;
    case 'ordered':
      cmd.expect.ordered = true;
      break;
  }
  if (cmd.expect.info.length > 0 && cmd.expect.noInfo) throw new Error('invalid expect lines, info and no_info cannot be used together');
  if (cmd.expect.warn.length > 0 && cmd.expect.noWarn) throw new Error('invalid expect lines, warn and no_warn cannot be used together');
}

/** Go RE2 patterns as used by the corpus are JS-compatible; `(?s)`-style flags are not supported. */
function goRegexp(pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch {
    throw new Error(`invalid regexp ${JSON.stringify(pattern)}`);
  }
}

function durationOrThrow(s: string, i: number, what: string): number {
  try {
    return parseDuration(s);
  } catch (err) {
    throw new ScriptError(i + 1, `invalid ${what} definition ${JSON.stringify(s)}: ${(err as Error).message}`);
  }
}

function parseDurations(from: string, to: string, step: string, i: number): [number, number, number] {
  const f = durationOrThrow(from, i, 'start timestamp');
  const t = durationOrThrow(to, i, 'end timestamp');
  if (t < f) throw new ScriptError(i + 1, `invalid test definition, end timestamp (${to}) is before start timestamp (${from})`);
  return [f, t, durationOrThrow(step, i, 'step')];
}

function parseStringLiteral(line: string): string {
  const bad = 'expected string literal not valid - a quoted string literal is required';
  if (line === EXPECT_STRING_PREFIX) throw new Error(bad);
  const str = line.startsWith(EXPECT_STRING_PREFIX + ' ') ? line.slice(EXPECT_STRING_PREFIX.length + 1) : line;
  if (str === '') throw new Error(bad);
  const v = goUnquote(str);
  if (v === undefined) throw new Error('expected string literal not valid - check that the string is correctly quoted');
  return v;
}

/**
 * Go's parseNumber in test.go: strconv.ParseInt(s, 0, 64) (0x, 0o, 0b, leading-0
 * octal, `_` separators), else strconv.ParseFloat (also Inf, NaN, hex floats).
 */
export function parseGoNumber(s: string): number | undefined {
  const int = /^([+-])?(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|0[0-7_]*|[1-9][0-9_]*)$/.exec(s);
  if (int) {
    let body = int[2];
    if (body.includes('_') && !/^(0[xXoObB]_?)?[0-9a-fA-F]+(_[0-9a-fA-F]+)*$/.test(body)) return undefined;
    body = body.replace(/_/g, '');
    let v: number;
    if (/^0[xX]/.test(body)) v = parseInt(body.slice(2), 16);
    else if (/^0[oO]/.test(body)) v = parseInt(body.slice(2), 8);
    else if (/^0[bB]/.test(body)) v = parseInt(body.slice(2), 2);
    else if (body.length > 1 && body[0] === '0') v = parseInt(body.slice(1), 8);
    else v = Number(body);
    if (!Number.isNaN(v)) return int[1] === '-' ? -v : v;
  }
  if (/^[+-]?(inf|infinity)$/i.test(s)) return s[0] === '-' ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(s)) return NaN;
  if (/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(s)) return Number(s);
  if (/^[+-]?0[xX]([0-9a-fA-F]+(\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)[pP][+-]?\d+$/.test(s)) return parseHexFloat(s);
  return undefined;
}

function parseHexFloat(s: string): number {
  const m = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)$/.exec(s)!;
  const frac = m[3] ?? '';
  const mant = parseInt(m[2] + frac || '0', 16) / 16 ** frac.length;
  const v = mant * 2 ** Number(m[4]);
  return m[1] === '-' ? -v : v;
}
