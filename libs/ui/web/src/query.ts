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
  new QueryPage(cfg).mount(main);
}

/** The page's form (its state in the URL), the editor, and the run of a query into the table or the graph. */
class QueryPage {
  private readonly cfg: QueryConfig;
  private readonly params = new URLSearchParams(location.search);
  private readonly tenant: HTMLInputElement;
  private readonly range: HTMLSelectElement;
  private readonly end: HTMLInputElement;
  private readonly step: HTMLInputElement;
  private readonly status = h('span', { class: 'muted', id: 'query-status' });
  // The linter's diagnostics in words, not only as a squiggle.
  private readonly syntax = h('div', { class: 'syntax-error', id: 'syntax-error', role: 'status' });
  private readonly output = h('div', { id: 'output' });
  private readonly tabs = {
    table: h('button', { type: 'button', role: 'tab', id: 'tab-table' }, 'Table'),
    graph: h('button', { type: 'button', role: 'tab', id: 'tab-graph' }, 'Graph'),
  };
  private tab: 'table' | 'graph';
  private readonly view: EditorView;
  /** The latest run: an answer to an older one is dropped. */
  private seq = 0;

  constructor(cfg: QueryConfig) {
    const params = this.params;
    this.cfg = cfg;
    this.tenant = h('input', {
      type: 'text',
      id: 'tenant',
      placeholder: 'tenant (X-Scope-OrgID)',
      value: params.get('tenant') ?? localStorage.getItem('strata.tenant') ?? '',
    });
    this.range = h('select', { id: 'range' }, ...RANGES.map((r) => h('option', { value: r, selected: r === (params.get('range') ?? '1h') }, r)));
    this.end = h('input', { type: 'datetime-local', id: 'end', step: '1', title: 'end of the range (empty: now)', value: params.get('end') ?? '' });
    this.step = h('input', {
      type: 'text',
      id: 'step',
      size: '6',
      placeholder: 'auto',
      title: 'resolution step, e.g. 15s (empty: range/250)',
      value: params.get('step') ?? '',
    });
    this.tab = params.get('tab') === 'table' ? 'table' : 'graph';
    this.view = this.editor();
  }

  private headers(): Record<string, string> {
    return this.cfg.multitenancy && this.tenant.value.trim() !== '' ? { 'X-Scope-OrgID': this.tenant.value.trim() } : {};
  }

  /** The PromQL editor: highlighting, the linter's messages under it, completion from the metadata API, Enter to run. */
  private editor(): EditorView {
    const promql = new PromQLExtension()
      .activateCompletion(true)
      .activateLinter(true)
      .setComplete({
        remote: {
          url: '',
          apiPrefix: this.cfg.apiPrefix,
          httpMethod: 'GET',
          lookbackInterval: 12 * 3600 * 1000,
          fetchFn: (input: RequestInfo | URL, init?: RequestInit) =>
            fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string> | undefined), ...this.headers() } }),
        },
      });
    return new EditorView({
      parent: h('div'),
      state: EditorState.create({
        doc: this.params.get('expr') ?? '',
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
            if (this.syntax.textContent !== text) this.syntax.textContent = text;
          }),
          promql.asExtension(),
          // Enter runs the query unless a completion is open (then it picks the completion).
          Prec.highest(
            keymap.of([
              { key: 'Enter', run: (v) => (completionStatus(v.state) === 'active' ? false : (void this.run(), true)) },
              { key: 'Shift-Enter', run: insertNewlineAndIndent },
            ]),
          ),
          keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap, ...lintKeymap]),
        ],
      }),
    });
  }

  /** The form in the page, its events wired; runs the expression the URL brought. */
  mount(main: HTMLElement): void {
    const { tabs, range, end, step, tenant } = this;
    tabs.table.addEventListener('click', () => this.select('table'));
    tabs.graph.addEventListener('click', () => this.select('graph'));
    tabs[this.tab].classList.add('active');
    for (const el of [range, end, step, tenant]) el.addEventListener('change', () => void this.run());
    main.append(
      h('h1', {}, 'Query'),
      h(
        'div',
        { class: 'query-form' },
        this.cfg.multitenancy ? h('label', {}, 'Tenant ', tenant) : null,
        h('div', { class: 'editor', id: 'editor' }, this.view.dom),
        h('button', { type: 'button', id: 'execute', class: 'primary', onclick: () => void this.run() }, 'Execute'),
      ),
      this.syntax,
      h(
        'div',
        { class: 'controls' },
        h('div', { class: 'tabs', role: 'tablist' }, tabs.table, tabs.graph),
        h('label', {}, 'Range ', range),
        h('label', {}, 'End ', end),
        h('label', {}, 'Step ', step),
        this.status,
      ),
      this.output,
    );
    step.placeholder = `auto (${formatDuration(this.resolved().autoStep)})`;
    this.view.focus();
    if (this.view.state.doc.length > 0) void this.run();
  }

  private select(t: 'table' | 'graph'): void {
    this.tab = t;
    this.tabs.table.classList.toggle('active', t === 'table');
    this.tabs.graph.classList.toggle('active', t === 'graph');
    void this.run();
  }

  /** The range, its end and the step in seconds (the step as typed, else range/250). */
  private resolved(): { rangeS: number; endS: number; stepS: number | undefined; autoStep: number } {
    const rangeS = parseDuration(this.range.value) ?? 3600;
    const endS = this.end.value ? new Date(this.end.value).getTime() / 1000 : Date.now() / 1000;
    const autoStep = Math.max(1, Math.ceil(rangeS / 250));
    const stepS = this.step.value.trim() === '' ? autoStep : parseDuration(this.step.value);
    return { rangeS, endS, stepS, autoStep };
  }

  private syncUrl(): void {
    const p = new URLSearchParams();
    const expr = this.view.state.doc.toString();
    if (expr) p.set('expr', expr);
    p.set('tab', this.tab);
    p.set('range', this.range.value);
    if (this.end.value) p.set('end', this.end.value);
    if (this.step.value) p.set('step', this.step.value);
    if (this.cfg.multitenancy && this.tenant.value) p.set('tenant', this.tenant.value);
    window.history.replaceState(null, '', `${location.pathname}?${p}`);
  }

  /** Runs the expression into the current tab; the answer of a run superseded meanwhile is dropped. */
  private async run(): Promise<void> {
    const { output, status, step } = this;
    const expr = this.view.state.doc.toString().trim();
    this.syncUrl();
    step.placeholder = `auto (${formatDuration(this.resolved().autoStep)})`;
    if (expr === '') {
      output.replaceChildren(h('p', { class: 'muted' }, 'Enter an expression.'));
      return;
    }
    if (this.cfg.multitenancy) localStorage.setItem('strata.tenant', this.tenant.value);
    const mine = ++this.seq;
    const { rangeS, endS, stepS } = this.resolved();
    if (stepS === undefined || stepS <= 0) {
      output.replaceChildren(errorBox(new Error(`step "${step.value}" is not a duration (e.g. 15s, 1m)`)));
      return;
    }
    status.textContent = 'running…';
    const began = performance.now();
    try {
      const q = new URLSearchParams({ query: expr });
      const shown = this.tab === 'graph' ? await this.graph(q, mine, endS - rangeS, endS, stepS) : await this.table(q, mine, endS);
      if (shown === undefined) return;
      const { answer, count } = shown;
      const notes = [
        ...(answer.warnings ?? []).map((w) => h('div', { class: 'warning' }, `warning: ${w}`)),
        ...(answer.infos ?? []).map((i) => h('div', { class: 'info' }, `info: ${i}`)),
      ];
      output.prepend(...notes);
      status.textContent = `${count} series · ${Math.round(performance.now() - began)} ms`;
    } catch (err) {
      if (mine !== this.seq) return;
      status.textContent = '';
      output.replaceChildren(errorBox(err));
    }
  }

  /** A range query drawn as a graph; undefined when run `mine` was superseded. */
  private async graph(q: URLSearchParams, mine: number, start: number, end: number, step: number): Promise<Shown | undefined> {
    q.set('start', String(start));
    q.set('end', String(end));
    q.set('step', String(step));
    const a = await getJson<ApiAnswer<{ resultType: string; result: RangeSeries[] }>>(`${this.cfg.apiPrefix}/query_range?${q}`, this.headers());
    if (mine !== this.seq) return undefined;
    const holder = h('div', { class: 'graph', id: 'graph' });
    this.output.replaceChildren(holder);
    drawGraph(holder, a.data.result, { start, end, step });
    return { answer: a, count: a.data.result.length };
  }

  /** An instant query as a table; undefined when run `mine` was superseded. */
  private async table(q: URLSearchParams, mine: number, time: number): Promise<Shown | undefined> {
    q.set('time', String(time));
    const a = await getJson<ApiAnswer<InstantData>>(`${this.cfg.apiPrefix}/query?${q}`, this.headers());
    if (mine !== this.seq) return undefined;
    const { nodes, count } = resultTable(a.data);
    this.output.replaceChildren(...nodes);
    return { answer: a, count };
  }
}

/** What a run put on the page: the answer (its warnings and infos) and how many series it had. */
interface Shown {
  answer: ApiAnswer<unknown>;
  count: number;
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
