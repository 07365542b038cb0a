// OTLP -> Prometheus naming, as Prometheus' OTLP receiver does it by default
// (otlptranslator, "UnderscoreEscapingWithSuffixes"): metric names split into
// tokens on any character outside [a-zA-Z0-9:], unit and type suffixes added once,
// label names sanitised to [a-zA-Z0-9_]. Pure functions; never returns a name
// the caller must re-check for characters (validation still checks emptiness).

export type MetricKind = 'gauge' | 'sum' | 'histogram' | 'exponential_histogram' | 'summary' | 'empty';

export interface NamingInput {
  name: string;
  unit: string;
  kind: MetricKind;
  monotonic: boolean;
}

// UCUM unit -> Prometheus base unit word (https://prometheus.io/docs/practices/naming/#base-units).
const UNITS: Record<string, string> = {
  d: 'days',
  h: 'hours',
  min: 'minutes',
  s: 'seconds',
  ms: 'milliseconds',
  us: 'microseconds',
  ns: 'nanoseconds',
  By: 'bytes',
  KiBy: 'kibibytes',
  MiBy: 'mebibytes',
  GiBy: 'gibibytes',
  TiBy: 'tibibytes',
  KBy: 'kilobytes',
  MBy: 'megabytes',
  GBy: 'gigabytes',
  TBy: 'terabytes',
  m: 'meters',
  V: 'volts',
  A: 'amperes',
  J: 'joules',
  W: 'watts',
  g: 'grams',
  Cel: 'celsius',
  Hz: 'hertz',
  '1': '',
  '%': 'percent',
};

// The unit after "/": singular ("per second").
const PER_UNITS: Record<string, string> = { s: 'second', m: 'minute', h: 'hour', d: 'day', w: 'week', mo: 'month', y: 'year' };

const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** Prometheus' OTLP translation strategies (otlptranslator), by their names there. */
export type TranslationStrategy = 'UnderscoreEscapingWithSuffixes' | 'UnderscoreEscapingWithoutSuffixes' | 'NoUTF8EscapingWithSuffixes' | 'NoTranslation';

/** What a strategy does: escape names to Prometheus 2's characters, and add unit and type suffixes. */
export interface Naming {
  escape: boolean;
  suffixes: boolean;
}

export function namingOf(strategy: TranslationStrategy): Naming {
  return { escape: strategy.startsWith('UnderscoreEscaping'), suffixes: strategy.endsWith('WithSuffixes') };
}

/**
 * The Prometheus metric name of an OTLP metric (the base name: histograms and
 * summaries append `_bucket`, `_sum`, `_count` to it). With suffixes, unit and
 * type suffixes are appended (`_seconds`, `_bytes_per_second`, `_total` for
 * monotonic sums, `_ratio` for gauges of unit "1"). Escaping splits the name
 * into tokens of [a-zA-Z0-9:] joined by `_`; without it the name stays as sent
 * (`http.server.request.duration`) and suffixes are appended after a `_`.
 */
export function metricName(m: NamingInput, naming: Naming = { escape: true, suffixes: true }): string {
  if (!naming.escape) return naming.suffixes ? withSuffixes(m) : m.name;
  if (!naming.suffixes) {
    const name = splitTokens(m.name, isMetricCharOrUnderscore).join('_');
    return name !== '' && isDigit(name.charCodeAt(0)) ? '_' + name : name;
  }
  let tokens = splitTokens(m.name, isMetricChar);
  const { main, per } = unitSuffixes(m.unit);
  if (main !== '' && !tokens.includes(main)) tokens.push(main);
  if (per !== '' && !tokens.includes(per)) tokens.push(per);
  if (m.kind === 'sum' && m.monotonic) {
    tokens = tokens.filter((t) => t !== 'total');
    tokens.push('total');
  }
  // Only gauges: some senders wrongly give counters of objects the unit "1".
  if (m.unit === '1' && m.kind === 'gauge') {
    tokens = tokens.filter((t) => t !== 'ratio');
    tokens.push('ratio');
  }
  const name = tokens.join('_');
  return name !== '' && isDigit(name.charCodeAt(0)) ? '_' + name : name;
}

/** The unescaped name with each suffix appended once (`http.server.request.duration_seconds`). */
function withSuffixes(m: NamingInput): string {
  let name = m.name;
  const { main, per } = unitSuffixes(m.unit);
  if (main !== '' && !name.endsWith(main)) name += '_' + main;
  if (per !== '' && !name.endsWith(per)) name += '_' + per;
  if (m.kind === 'sum' && m.monotonic && !name.endsWith('_total')) name += '_total';
  if (m.unit === '1' && m.kind === 'gauge' && !name.endsWith('_ratio')) name += '_ratio';
  return name;
}

/** The Prometheus unit of an OTLP unit, as metadata reports it: `seconds`, `bytes_per_second`, '' for "1" or `{requests}`. */
export function prometheusUnit(unit: string): string {
  const { main, per } = unitSuffixes(unit);
  return main !== '' && per !== '' ? `${main}_${per}` : main || per;
}

function unitSuffixes(unit: string): { main: string; per: string } {
  const slash = unit.indexOf('/');
  const mainOtel = (slash < 0 ? unit : unit.slice(0, slash)).trim();
  const perOtel = slash < 0 ? '' : unit.slice(slash + 1).trim();
  let main = '';
  let per = '';
  if (mainOtel !== '' && !/[{}]/.test(mainOtel)) main = cleanUpUnit(hasOwn(UNITS, mainOtel) ? UNITS[mainOtel] : mainOtel);
  if (perOtel !== '' && !/[{}]/.test(perOtel)) {
    const p = cleanUpUnit(hasOwn(PER_UNITS, perOtel) ? PER_UNITS[perOtel] : perOtel);
    if (p !== '') per = 'per_' + p;
  }
  if (per !== '' && main.endsWith('_')) main = main.slice(0, -1);
  return { main, per };
}

/** Characters outside [a-zA-Z0-9:] become `_`, runs of `_` collapse, a leading `_` goes. */
function cleanUpUnit(unit: string): string {
  let out = '';
  for (const ch of unit) {
    const c = ch.codePointAt(0)!;
    const next = isMetricChar(c) ? ch : '_';
    if (next === '_' && out.endsWith('_')) continue;
    out += next;
  }
  return out.startsWith('_') ? out.slice(1) : out;
}

/**
 * A Prometheus label name for an OTLP attribute key: characters outside
 * [a-zA-Z0-9_] become `_`; a leading digit gets `key_`, a single leading `_` gets
 * `key` (`__` stays: reserved names are the sender's business).
 */
export function labelName(key: string, escape = true): string {
  if (key === '' || !escape) return key;
  let out = '';
  for (const ch of key) {
    const c = ch.codePointAt(0)!;
    out += isLabelChar(c) ? ch : '_';
  }
  if (isDigit(out.charCodeAt(0))) return 'key_' + out;
  if (out.startsWith('_') && !out.startsWith('__')) return 'key' + out;
  return out;
}

/** Splits on runs of characters that are not `keep`, dropping empty tokens (Go's strings.FieldsFunc). */
function splitTokens(s: string, keep: (c: number) => boolean): string[] {
  const tokens: string[] = [];
  let cur = '';
  for (const ch of s) {
    if (keep(ch.codePointAt(0)!)) cur += ch;
    else if (cur !== '') {
      tokens.push(cur);
      cur = '';
    }
  }
  if (cur !== '') tokens.push(cur);
  return tokens;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isAlnum(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || isDigit(c);
}

function isMetricChar(c: number): boolean {
  return isAlnum(c) || c === 58;
}

function isMetricCharOrUnderscore(c: number): boolean {
  return isMetricChar(c) || c === 95;
}

function isLabelChar(c: number): boolean {
  return isAlnum(c) || c === 95;
}

/**
 * A float as Go's strconv.FormatFloat(v, 'f', -1, 64) prints it: the shortest
 * digits that round-trip, never an exponent (`le="0.0000001"`), `+Inf`/`-Inf`/`NaN`.
 */
export function formatFloatF(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  const s = String(v);
  if (!s.includes('e')) return s;
  const neg = v < 0;
  const [mant, expPart] = (neg ? -v : v).toExponential().split('e');
  const exp = Number(expPart);
  const digits = mant.replace('.', '');
  let out: string;
  if (exp < 0) out = '0.' + '0'.repeat(-exp - 1) + digits;
  else if (digits.length <= exp + 1) out = digits + '0'.repeat(exp + 1 - digits.length);
  else out = digits.slice(0, exp + 1) + '.' + digits.slice(exp + 1);
  return neg ? '-' + out : out;
}
