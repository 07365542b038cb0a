// The subset of Go's text/template that Prometheus' alert labels and
// annotations use: `{{ $value }}`, `{{ $labels.x }}`, `{{ .Value }}`, pipes,
// `{{- -}}` trimming and the humanize family, printf, toUpper/toLower/title.
// Numbers print as Go prints a float64. Control structures are refused when a
// rule is uploaded, never half-evaluated.

export interface TemplateData {
  labels: Record<string, string>;
  externalLabels: Record<string, string>;
  externalURL: string;
  value: number;
}

type Node = { text: string } | { pipeline: Pipeline };
type Pipeline = Command[];
type Command = Arg[];
type Arg =
  | { kind: 'var'; name: string; fields: string[] }
  | { kind: 'dot'; fields: string[] }
  | { kind: 'str'; value: string }
  | { kind: 'num'; value: number }
  | { kind: 'ident'; name: string }
  | { kind: 'group'; pipeline: Pipeline };

type Value = string | number | boolean | Record<string, string> | TemplateData | undefined;

const FUNCS: Record<string, (...args: Value[]) => Value> = {
  humanize: (v) => humanize(toFloat(v, 'humanize')),
  humanize1024: (v) => humanize1024(toFloat(v, 'humanize1024')),
  humanizeDuration: (v) => humanizeDuration(toFloat(v, 'humanizeDuration')),
  humanizePercentage: (v) => `${goFormatG(toFloat(v, 'humanizePercentage') * 100, 4)}%`,
  humanizeTimestamp: (v) => humanizeTimestamp(toFloat(v, 'humanizeTimestamp')),
  toUpper: (v) => printValue(v).toUpperCase(),
  toLower: (v) => printValue(v).toLowerCase(),
  title: (v) => printValue(v).replace(/(^|[^\p{L}\p{N}_'])(\p{L})/gu, (_m, p: string, c: string) => p + c.toUpperCase()),
  printf: (fmt, ...args) => goSprintf(typeof fmt === 'string' ? fmt : printValue(fmt), args),
  stripPort: (v) => {
    const s = printValue(v);
    const m = /^\[(.*)\]:\d+$/.exec(s) ?? /^([^:]*):\d+$/.exec(s);
    return m ? m[1] : s;
  },
};

const VARIABLES = ['labels', 'externalLabels', 'externalURL', 'value'];

/** Parses a template; throws an Error saying what is not understood. */
export function parseTemplate(src: string): Node[] {
  const nodes: Node[] = [];
  let pos = 0;
  while (pos < src.length) {
    const open = src.indexOf('{{', pos);
    if (open < 0) {
      nodes.push({ text: src.slice(pos) });
      break;
    }
    let text = src.slice(pos, open);
    let start = open + 2;
    if (src.startsWith('- ', start) || src.startsWith('-\t', start) || src.startsWith('-\n', start)) {
      text = text.replace(/\s+$/, '');
      start++;
    }
    if (text !== '') nodes.push({ text });
    const close = src.indexOf('}}', start);
    if (close < 0) throw new Error('unclosed action');
    let inner = src.slice(start, close);
    pos = close + 2;
    if (/\s-$/.test(inner)) {
      inner = inner.slice(0, -1);
      const m = /^\s*/.exec(src.slice(pos));
      pos += m ? m[0].length : 0;
    }
    if (/^\s*\/\*[\s\S]*\*\/\s*$/.test(inner)) continue;
    const tokens = tokenize(inner);
    const [pipeline, rest] = parsePipeline(tokens, 0);
    if (rest !== tokens.length) throw new Error(`unexpected "${tokens[rest]}" in action`);
    if (pipeline.length === 0) throw new Error('missing value for command');
    nodes.push({ pipeline });
  }
  return nodes;
}

/** Expands a template; on failure the result is Prometheus' `<error expanding template: ...>`. */
export function expandTemplate(name: string, src: string, data: TemplateData): string {
  try {
    return parseTemplate(src)
      .map((n) => ('text' in n ? n.text : printValue(evalPipeline(n.pipeline, data))))
      .join('');
  } catch (err) {
    return `<error expanding template: error executing template __alert_${name}: ${(err as Error).message}>`;
  }
}

function tokenize(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '|' || c === '(' || c === ')') {
      out.push(c);
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < s.length && s[j] !== '"') j += s[j] === '\\' ? 2 : 1;
      if (j >= s.length) throw new Error('unterminated quoted string');
      out.push(s.slice(i, j + 1));
      i = j + 1;
    } else if (c === '`') {
      const j = s.indexOf('`', i + 1);
      if (j < 0) throw new Error('unterminated raw quoted string');
      out.push(s.slice(i, j + 1));
      i = j + 1;
    } else {
      const m = /^[^\s|()"`]+/.exec(s.slice(i));
      out.push(m![0]);
      i += m![0].length;
    }
  }
  return out;
}

function parsePipeline(tokens: string[], pos: number): [Pipeline, number] {
  const pipeline: Pipeline = [];
  let cmd: Command = [];
  while (pos < tokens.length && tokens[pos] !== ')') {
    const t = tokens[pos];
    if (t === '|') {
      if (cmd.length === 0) throw new Error('missing command before "|"');
      pipeline.push(cmd);
      cmd = [];
      pos++;
      continue;
    }
    if (t === '(') {
      const [inner, next] = parsePipeline(tokens, pos + 1);
      if (tokens[next] !== ')') throw new Error('unclosed left paren');
      cmd.push({ kind: 'group', pipeline: inner });
      pos = next + 1;
      continue;
    }
    cmd.push(parseArg(t));
    pos++;
  }
  if (cmd.length > 0) pipeline.push(cmd);
  else if (pipeline.length > 0) throw new Error('missing command after "|"');
  return [pipeline, pos];
}

function parseArg(t: string): Arg {
  if (t.startsWith('"')) return { kind: 'str', value: JSON.parse(t) as string };
  if (t.startsWith('`')) return { kind: 'str', value: t.slice(1, -1) };
  if (t.startsWith('$')) {
    const [name, ...fields] = t.slice(1).split('.');
    if (name !== '' && !VARIABLES.includes(name)) throw new Error(`undefined variable "$${name}"`);
    return { kind: 'var', name, fields };
  }
  if (t === '.') return { kind: 'dot', fields: [] };
  if (t.startsWith('.')) return { kind: 'dot', fields: t.slice(1).split('.') };
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t) || /^0x[0-9a-fA-F]+$/.test(t)) return { kind: 'num', value: Number(t) };
  if (t === 'true' || t === 'false') return { kind: 'str', value: t };
  if (t in FUNCS) return { kind: 'ident', name: t };
  if (['if', 'else', 'end', 'range', 'with', 'define', 'template', 'block', 'query'].includes(t)) {
    throw new Error(`"${t}" is not supported by Strata's template subset (values, $labels, pipes, humanize*, printf)`);
  }
  throw new Error(`function "${t}" not defined`);
}

function evalPipeline(p: Pipeline, data: TemplateData): Value {
  let prev: Value;
  let first = true;
  for (const cmd of p) {
    const head = cmd[0];
    if (head.kind === 'ident') {
      const args = cmd.slice(1).map((a) => evalArg(a, data));
      if (!first) args.push(prev);
      prev = FUNCS[head.name](...args);
    } else {
      if (cmd.length > 1 || !first) throw new Error(`can't give argument to non-function ${describe(head)}`);
      prev = evalArg(head, data);
    }
    first = false;
  }
  return prev;
}

function evalArg(a: Arg, data: TemplateData): Value {
  switch (a.kind) {
    case 'str':
    case 'num':
      return a.value;
    case 'group':
      return evalPipeline(a.pipeline, data);
    case 'ident':
      return FUNCS[a.name]();
    case 'var':
    case 'dot': {
      let v: Value;
      let fields = a.fields;
      if (a.kind === 'var' && a.name !== '') v = variable(a.name, data);
      else if (fields.length > 0) {
        v = dotField(fields[0], data);
        fields = fields.slice(1);
      } else v = data;
      for (const f of fields) {
        if (typeof v !== 'object' || v === null) throw new Error(`can't evaluate field ${f} in type ${typeof v}`);
        v = (v as Record<string, string>)[f];
      }
      return v;
    }
  }
}

function variable(name: string, d: TemplateData): Value {
  return name === 'labels' ? d.labels : name === 'externalLabels' ? d.externalLabels : name === 'externalURL' ? d.externalURL : d.value;
}

function dotField(name: string, d: TemplateData): Value {
  switch (name) {
    case 'Labels':
      return d.labels;
    case 'ExternalLabels':
      return d.externalLabels;
    case 'ExternalURL':
      return d.externalURL;
    case 'Value':
      return d.value;
    default:
      throw new Error(`can't evaluate field ${name} in type *template.tmplQueryRecord`);
  }
}

function describe(a: Arg): string {
  return a.kind === 'str' ? JSON.stringify(a.value) : a.kind === 'num' ? String(a.value) : a.kind;
}

function printValue(v: Value): string {
  if (v === undefined) return '<no value>';
  if (typeof v === 'number') return goFormatG(v, -1);
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return String(v);
  const rec = v as Record<string, unknown>;
  return `map[${Object.keys(rec)
    .sort()
    .map((k) => `${k}:${String(rec[k])}`)
    .join(' ')}]`;
}

function toFloat(v: Value, fn: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    const n = Number(v.trim());
    if (v.trim() !== '' && !Number.isNaN(n)) return n;
    if (/^[+-]?(nan|inf)$/i.test(v.trim())) return Number(v.trim().replace(/inf/i, 'Infinity').replace(/nan/i, 'NaN'));
    throw new Error(`error calling ${fn}: strconv.ParseFloat: parsing ${JSON.stringify(v)}: invalid syntax`);
  }
  throw new Error(`error calling ${fn}: can't convert ${typeof v} to float`);
}

/** Go's strconv 'g' formatting: `prec` significant digits (-1: the shortest that round-trips, as %v prints). */
export function goFormatG(x: number, prec: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const exp = (prec < 0 ? x.toExponential() : x.toExponential(Math.max(prec, 1) - 1)).split('e');
  const sign = exp[0].startsWith('-') ? '-' : '';
  const digits = exp[0].replace('-', '').replace('.', '').replace(/0+$/, '') || '0';
  const e = Number(exp[1]);
  const nd = digits.length;
  let eprec = prec < 0 ? 6 : Math.max(prec, 1);
  if (prec >= 0 && eprec > nd && nd >= e + 1) eprec = nd;
  if (e < -4 || e >= eprec) {
    const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${mant}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  if (e < 0) return `${sign}0.${'0'.repeat(-e - 1)}${digits}`;
  if (nd <= e + 1) return sign + digits + '0'.repeat(e + 1 - nd);
  return `${sign}${digits.slice(0, e + 1)}.${digits.slice(e + 1)}`;
}

export function humanize(v: number): string {
  if (v === 0 || !Number.isFinite(v)) return goFormatG(v, 4);
  if (Math.abs(v) >= 1) {
    let prefix = '';
    for (const p of ['k', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y']) {
      if (Math.abs(v) < 1000) break;
      prefix = p;
      v /= 1000;
    }
    return goFormatG(v, 4) + prefix;
  }
  let prefix = '';
  for (const p of ['m', 'u', 'n', 'p', 'f', 'a', 'z', 'y']) {
    if (Math.abs(v) >= 1) break;
    prefix = p;
    v *= 1000;
  }
  return goFormatG(v, 4) + prefix;
}

function humanize1024(v: number): string {
  if (Math.abs(v) <= 1 || !Number.isFinite(v)) return goFormatG(v, 4);
  let prefix = '';
  for (const p of ['ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei', 'Zi', 'Yi']) {
    if (Math.abs(v) < 1024) break;
    prefix = p;
    v /= 1024;
  }
  return goFormatG(v, 4) + prefix;
}

export function humanizeDuration(v: number): string {
  if (!Number.isFinite(v)) return goFormatG(v, 4);
  if (v === 0) return `${goFormatG(v, 4)}s`;
  if (Math.abs(v) >= 1) {
    const sign = v < 0 ? '-' : '';
    const a = Math.trunc(Math.abs(v));
    const seconds = a % 60;
    const minutes = Math.trunc(a / 60) % 60;
    const hours = Math.trunc(a / 3600) % 24;
    const days = Math.trunc(a / 86400);
    if (days !== 0) return `${sign}${days}d ${hours}h ${minutes}m ${seconds}s`;
    if (hours !== 0) return `${sign}${hours}h ${minutes}m ${seconds}s`;
    if (minutes !== 0) return `${sign}${minutes}m ${seconds}s`;
    return `${sign}${goFormatG(Math.abs(v), 4)}s`;
  }
  let prefix = '';
  for (const p of ['m', 'u', 'n', 'p', 'f', 'a', 'z', 'y']) {
    if (Math.abs(v) >= 1) break;
    prefix = p;
    v *= 1000;
  }
  return `${goFormatG(v, 4)}${prefix}s`;
}

function humanizeTimestamp(v: number): string {
  if (!Number.isFinite(v)) return goFormatG(v, 4);
  // Go's time.Time String() in UTC: 2006-01-02 15:04:05.999999999 +0000 UTC
  const d = new Date(v * 1000);
  const frac = d.getUTCMilliseconds() === 0 ? '' : `.${String(d.getUTCMilliseconds()).padStart(3, '0').replace(/0+$/, '')}`;
  return `${d.toISOString().slice(0, 19).replace('T', ' ')}${frac} +0000 UTC`;
}

/** %.<p>f as Go rounds: to nearest, exact ties to even (JS's toFixed rounds ties up). */
function goFixed(x: number, p: number): string {
  const long = Math.abs(x).toFixed(Math.min(100, p + 25));
  const dot = long.indexOf('.');
  const tail = long.slice(dot + 1 + p);
  if (!/^50*$/.test(tail)) return x.toFixed(p);
  const kept = long.slice(0, dot + 1 + p).replace(/\.$/, '');
  const last = Number(kept[kept.length - 1]);
  if (last % 2 === 0) return (x < 0 ? '-' : '') + kept;
  return x.toFixed(p);
}

/** Go's fmt.Sprintf for the verbs templates use: %s %v %d %f %e %g %q %%, with width and precision. */
function goSprintf(fmt: string, args: Value[]): string {
  let i = 0;
  return fmt.replace(/%([-+ 0#]*)(\d*)(?:\.(\d+))?([svdfegqxX%])/g, (_m, flags: string, width: string, precision: string | undefined, verb: string) => {
    if (verb === '%') return '%';
    if (i >= args.length) return `%!${verb}(MISSING)`;
    const a = args[i++];
    const p = precision === undefined ? undefined : Number(precision);
    let s: string;
    switch (verb) {
      case 'd':
        s = typeof a === 'number' && Number.isInteger(a) ? String(a) : `%!d(${typeof a}=${printValue(a)})`;
        break;
      case 'f':
        s = typeof a === 'number' ? (Number.isFinite(a) ? goFixed(a, p ?? 6) : goFormatG(a, -1)) : `%!f(${typeof a}=${printValue(a)})`;
        break;
      case 'e':
        s = typeof a === 'number' ? a.toExponential(p ?? 6).replace(/e([+-])(\d)$/, 'e$10$2') : `%!e(${typeof a}=${printValue(a)})`;
        break;
      case 'g':
        s = typeof a === 'number' ? goFormatG(a, p ?? -1) : `%!g(${typeof a}=${printValue(a)})`;
        break;
      case 'q':
        s = JSON.stringify(printValue(a));
        break;
      case 'x':
      case 'X':
        s = typeof a === 'number' ? Math.trunc(a).toString(16) : Buffer.from(printValue(a)).toString('hex');
        if (verb === 'X') s = s.toUpperCase();
        break;
      default:
        s = printValue(a);
        if (p !== undefined && verb === 's') s = s.slice(0, p);
    }
    const w = width === '' ? 0 : Number(width);
    if (s.length < w) s = flags.includes('-') ? s.padEnd(w) : s.padStart(w, flags.includes('0') && verb !== 's' ? '0' : ' ');
    return s;
  });
}
