// A status page: the module's sections, fields as a list and rows as a table.

import type { StatusAnswer, StatusSection, StatusValue } from '../../src/types.ts';
import { errorBox, getJson, h } from './dom.ts';

export async function renderStatus(main: HTMLElement, id: string): Promise<void> {
  const body = h('div', { class: 'status' });
  const title = h('h1', {}, id);
  const updated = h('span', { class: 'muted' });
  const load = async () => {
    try {
      const page = await getJson<StatusAnswer>(`/ui/api/status/${encodeURIComponent(id)}`);
      title.textContent = page.title;
      body.replaceChildren(...page.sections.map(section));
      updated.textContent = `as of ${new Date().toLocaleTimeString()}`;
    } catch (err) {
      body.replaceChildren(errorBox(err));
    }
  };
  main.append(h('div', { class: 'title-row' }, title, h('button', { type: 'button', onclick: () => void load() }, 'Refresh'), updated), body);
  await load();
}

function section(s: StatusSection): HTMLElement {
  return h(
    'section',
    { class: 'section' },
    h('h2', {}, s.title),
    s.note ? h('p', { class: 'muted' }, s.note) : null,
    s.fields ? h('dl', { class: 'fields' }, ...Object.entries(s.fields).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, value(v))])) : null,
    s.rows ? table(s.rows) : null,
    s.links?.length ? h('p', {}, ...s.links.flatMap((l, i) => [i > 0 ? ' · ' : '', h('a', { href: l.href }, l.label)])) : null,
  );
}

function table(rows: Record<string, StatusValue>[]): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'muted' }, 'None.');
  const columns: string[] = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!columns.includes(k)) columns.push(k);
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', {}, c)))),
      h('tbody', {}, ...rows.map((r) => h('tr', {}, ...columns.map((c) => h('td', {}, value(r[c])))))),
    ),
  );
}

function value(v: StatusValue | undefined): Node | string {
  if (v === null || v === undefined) return h('span', { class: 'muted' }, '—');
  if (typeof v === 'boolean') return h('span', { class: v ? 'ok' : 'bad' }, v ? 'yes' : 'no');
  if (typeof v === 'number') return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toLocaleString('en-US', { maximumFractionDigits: 3 });
  return v;
}
