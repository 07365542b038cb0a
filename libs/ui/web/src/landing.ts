// The landing page: what this process runs and where its pages are.

import type { UiInfo } from '../../src/types.ts';
import { h } from './dom.ts';

export function renderLanding(main: HTMLElement, info: UiInfo): void {
  const byModule = new Map<string, UiInfo['pages']>();
  for (const p of info.pages) byModule.set(p.module, [...(byModule.get(p.module) ?? []), p]);
  main.append(
    h('h1', {}, info.title),
    h(
      'p',
      { class: 'lead' },
      `This process runs -target=${info.targets.join(',')}: modules `,
      ...info.modules.flatMap((m, i) => [i > 0 ? ', ' : '', h('code', {}, m)]),
      '.',
    ),
    h(
      'div',
      { class: 'cards' },
      info.query
        ? h('section', { class: 'card' }, h('h2', {}, h('a', { href: '/ui/query' }, 'Query')), h('p', {}, 'PromQL with autocompletion, as a table or a graph.'))
        : null,
      ...[...byModule].map(([module, pages]) =>
        h('section', { class: 'card' }, h('h2', {}, module), h('ul', {}, ...pages.map((p) => h('li', {}, h('a', { href: `/ui/status/${p.id}` }, p.title))))),
      ),
      h('section', { class: 'card' }, h('h2', {}, 'Other pages'), h('ul', {}, ...info.links.map((l) => h('li', {}, h('a', { href: l.href }, l.label))))),
    ),
    h('h2', {}, 'Endpoints'),
    h('ul', { class: 'endpoints' }, ...info.endpoints.map((e) => h('li', {}, h('code', {}, e.replaceAll('$BASE', location.origin))))),
  );
}
