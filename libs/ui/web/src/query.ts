// The query page: a PromQL editor (codemirror-promql: highlighting, syntax
// errors, autocompletion from this process' metadata API), an instant-query
// table and a range-query graph. The form lives in the URL, so a link reproduces it.

import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap, completionStatus } from '@codemirror/autocomplete';
import { defaultKeymap, history as editorHistory, historyKeymap, insertNewlineAndIndent } from '@codemirror/commands';
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { forEachDiagnostic, lintKeymap } from '@codemirror/lint';
import { EditorState, Prec } from '@codemirror/state';
import { EditorView, drawSelection, highlightSpecialChars, keymap, placeholder } from '@codemirror/view';
import { PromQLExtension } from '@prometheus-io/codemirror-promql';
import { errorBox, getJson, h } from './dom.ts';
import { drawGraph, seriesName, type RangeSeries } from './graph.ts';

interface QueryConfig {
  apiPrefix: string;
  multitenancy: boolean;
}

const RANGES = ['5m', '15m', '30m', '1h', '3h', '6h', '12h', '1d', '2d', '1w'];

interface ApiAnswer<T> {
  status: string;
  data: T;
  warnings?: string[];
  infos?: string[];
}
type InstantData =
  | { resultType: 'vector'; result: { metric: Record<string, string>; value?: [number, string]; histogram?: [number, unknown] }[] }
  | { resultType: 'matrix'; result: RangeSeries[] }
  | { resultType: 'scalar' | 'string'; result: [number, string] };

function parseDuration(s: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)/g;
  const unit: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 };
  let total = 0;
  let matched = '';
  for (const m of s.trim().matchAll(re)) {
    total += Number(m[1]) * unit[m[2]];
    matched += m[0];
  }
  if (matched === '' || matched !== s.trim()) return /^\d+(\.\d+)?$/.test(s.trim()) ? Number(s) : undefined;
  return total;
}

function formatDuration(seconds: number): string {
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

export function renderQuery(main: HTMLElement, cfg: QueryConfig): void {
  const params = new URLSearchParams(location.search);
  const tenant = h('input', { type: 'text', id: 'tenant', placeholder: 'tenant (X-Scope-OrgID)', value: params.get('tenant') ?? localStorage.getItem('strata.tenant') ?? '' });
  const range = h('select', { id: 'range' }, ...RANGES.map((r) => h('option', { value: r, selected: r === (params.get('range') ?? '1h') }, r)));
  const end = h('input', { type: 'datetime-local', id: 'end', step: '1', title: 'end of the range (empty: now)', value: params.get('end') ?? '' });
  const step = h('input', { type: 'text', id: 'step', size: '6', placeholder: 'auto', title: 'resolution step, e.g. 15s (empty: range/250)', value: params.get('step') ?? '' });
  const status = h('span', { class: 'muted', id: 'query-status' });
  // The linter's diagnostics in words, not only as a squiggle.
  const syntax = h('div', { class: 'syntax-error', id: 'syntax-error', role: 'status' });
  const output = h('div', { id: 'output' });
  let tab: 'table' | 'graph' = params.get('tab') === 'table' ? 'table' : 'graph';
  const tabs = {
    table: h('button', { type: 'button', role: 'tab', id: 'tab-table' }, 'Table'),
    graph: h('button', { type: 'button', role: 'tab', id: 'tab-graph' }, 'Graph'),
  };
  const headers = (): Record<string, string> => (cfg.multitenancy && tenant.value.trim() !== '' ? { 'X-Scope-OrgID': tenant.value.trim() } : {});

  const promql = new PromQLExtension()
    .activateCompletion(true)
    .activateLinter(true)
    .setComplete({
      remote: {
        url: '',
        apiPrefix: cfg.apiPrefix,
        httpMethod: 'GET',
        lookbackInterval: 12 * 3600 * 1000,
        fetchFn: (input: RequestInfo | URL, init?: RequestInit) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string> | undefined), ...headers() } }),
      },
    });
  const view = new EditorView({
    parent: h('div'),
    state: EditorState.create({
      doc: params.get('expr') ?? '',
      extensions: [
        highlightSpecialChars(),
        editorHistory(),
        drawSelection(),
        bracketMatching(),
        closeBrackets(),
        autocompletion(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        placeholder('Expression (press Enter to run, Shift+Enter for a new line)'),
        EditorView.lineWrapping,
        EditorView.updateListener.of((u) => {
          const messages: string[] = [];
          forEachDiagnostic(u.state, (d) => messages.push(d.message));
          const text = messages.join('; ');
          if (syntax.textContent !== text) syntax.textContent = text;
        }),
        promql.asExtension(),
        // Enter runs the query unless a completion is open (then it picks the completion).
        Prec.highest(
          keymap.of([
            { key: 'Enter', run: (v) => (completionStatus(v.state) === 'active' ? false : (void run(), true)) },
            { key: 'Shift-Enter', run: insertNewlineAndIndent },
          ]),
        ),
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap, ...lintKeymap]),
      ],
    }),
  });

  const resolved = () => {
    const rangeS = parseDuration(range.value) ?? 3600;
    const endS = end.value ? new Date(end.value).getTime() / 1000 : Date.now() / 1000;
    const autoStep = Math.max(1, Math.ceil(rangeS / 250));
    const stepS = step.value.trim() === '' ? autoStep : parseDuration(step.value);
    return { rangeS, endS, stepS, autoStep };
  };
  const syncUrl = () => {
    const p = new URLSearchParams();
    const expr = view.state.doc.toString();
    if (expr) p.set('expr', expr);
    p.set('tab', tab);
    p.set('range', range.value);
    if (end.value) p.set('end', end.value);
    if (step.value) p.set('step', step.value);
    if (cfg.multitenancy && tenant.value) p.set('tenant', tenant.value);
    window.history.replaceState(null, '', `${location.pathname}?${p}`);
  };

  let seq = 0;
  async function run(): Promise<void> {
    const expr = view.state.doc.toString().trim();
    syncUrl();
    step.placeholder = `auto (${formatDuration(resolved().autoStep)})`;
    if (expr === '') {
      output.replaceChildren(h('p', { class: 'muted' }, 'Enter an expression.'));
      return;
    }
    if (cfg.multitenancy) localStorage.setItem('strata.tenant', tenant.value);
    const mine = ++seq;
    const { rangeS, endS, stepS } = resolved();
    if (stepS === undefined || stepS <= 0) {
      output.replaceChildren(errorBox(new Error(`step "${step.value}" is not a duration (e.g. 15s, 1m)`)));
      return;
    }
    status.textContent = 'running…';
    const began = performance.now();
    try {
      const q = new URLSearchParams({ query: expr });
      let nodes: Node[];
      let count: number;
      let answer: ApiAnswer<unknown>;
      if (tab === 'graph') {
        q.set('start', String(endS - rangeS));
        q.set('end', String(endS));
        q.set('step', String(stepS));
        const a = await getJson<ApiAnswer<{ resultType: string; result: RangeSeries[] }>>(`${cfg.apiPrefix}/query_range?${q}`, headers());
        answer = a;
        if (mine !== seq) return;
        const holder = h('div', { class: 'graph', id: 'graph' });
        output.replaceChildren(holder);
        drawGraph(holder, a.data.result, { start: endS - rangeS, end: endS, step: stepS });
        nodes = [holder];
        count = a.data.result.length;
      } else {
        q.set('time', String(endS));
        const a = await getJson<ApiAnswer<InstantData>>(`${cfg.apiPrefix}/query?${q}`, headers());
        answer = a;
        if (mine !== seq) return;
        ({ nodes, count } = resultTable(a.data));
        output.replaceChildren(...nodes);
      }
      const notes = [...(answer.warnings ?? []).map((w) => h('div', { class: 'warning' }, `warning: ${w}`)), ...(answer.infos ?? []).map((i) => h('div', { class: 'info' }, `info: ${i}`))];
      output.prepend(...notes);
      status.textContent = `${count} series · ${Math.round(performance.now() - began)} ms`;
    } catch (err) {
      if (mine !== seq) return;
      status.textContent = '';
      output.replaceChildren(errorBox(err));
    }
  }

  const select = (t: 'table' | 'graph') => {
    tab = t;
    tabs.table.classList.toggle('active', t === 'table');
    tabs.graph.classList.toggle('active', t === 'graph');
    void run();
  };
  tabs.table.addEventListener('click', () => select('table'));
  tabs.graph.addEventListener('click', () => select('graph'));
  tabs[tab].classList.add('active');
  for (const el of [range, end, step, tenant]) el.addEventListener('change', () => void run());

  main.append(
    h('h1', {}, 'Query'),
    h(
      'div',
      { class: 'query-form' },
      cfg.multitenancy ? h('label', {}, 'Tenant ', tenant) : null,
      h('div', { class: 'editor', id: 'editor' }, view.dom),
      h('button', { type: 'button', id: 'execute', class: 'primary', onclick: () => void run() }, 'Execute'),
    ),
    syntax,
    h(
      'div',
      { class: 'controls' },
      h('div', { class: 'tabs', role: 'tablist' }, tabs.table, tabs.graph),
      h('label', {}, 'Range ', range),
      h('label', {}, 'End ', end),
      h('label', {}, 'Step ', step),
      status,
    ),
    output,
  );
  step.placeholder = `auto (${formatDuration(resolved().autoStep)})`;
  view.focus();
  if (view.state.doc.length > 0) void run();
}

function resultTable(data: InstantData): { nodes: Node[]; count: number } {
  const row = (name: string, value: string) => h('tr', {}, h('td', { class: 'series' }, name), h('td', { class: 'value' }, value));
  let rows: HTMLElement[];
  if (data.resultType === 'vector') {
    rows = data.result.map((s) => row(seriesName(s.metric), s.value ? s.value[1] : JSON.stringify(s.histogram?.[1])));
  } else if (data.resultType === 'matrix') {
    rows = data.result.map((s) => row(seriesName(s.metric), (s.values ?? []).map(([t, v]) => `${v} @${t}`).join('\n')));
  } else {
    rows = [row(data.resultType, data.result[1])];
  }
  const count = rows.length;
  if (count === 0) return { nodes: [h('p', { class: 'muted' }, 'Empty query result.')], count };
  return { nodes: [h('table', { class: 'result', id: 'result-table' }, h('tbody', {}, ...rows))], count };
}
