// The UI's router: / is the landing page, /ui/status/<id> a status page,
// /ui/query the query page. Everything else it shows comes from /ui/api.

import './style.css';
import type { UiInfo } from '../../src/types.ts';
import { errorBox, getJson, h } from './dom.ts';
import { renderLanding } from './landing.ts';
import { renderStatus } from './status.ts';

async function boot(): Promise<void> {
  const main = document.getElementById('main')!;
  const nav = document.getElementById('nav')!;
  let info: UiInfo;
  try {
    info = await getJson<UiInfo>('/ui/api/info');
  } catch (err) {
    main.append(errorBox(err));
    return;
  }
  const path = location.pathname.replace(/\/+$/, '') || '/';
  nav.append(
    ...[
      h('a', { href: '/', class: 'brand' }, info.title),
      info.query ? h('a', { href: '/ui/query', class: path === '/ui/query' ? 'active' : undefined }, 'Query') : null,
      ...info.pages.map((p) => h('a', { href: `/ui/status/${p.id}`, class: path === `/ui/status/${p.id}` ? 'active' : undefined }, p.title)),
      h('span', { class: 'targets' }, `-target=${info.targets.join(',')}`),
    ].filter((n) => n !== null),
  );
  if (path === '/' || path === '/ui') {
    document.title = info.title;
    renderLanding(main, info);
  } else if (path === '/ui/query' && info.query) {
    document.title = `Query · ${info.title}`;
    // The editor and the graph are the bulk of the bundle: loaded only on this page.
    const { renderQuery } = await import('./query.ts');
    renderQuery(main, info.query);
  } else if (path.startsWith('/ui/status/')) {
    const id = decodeURIComponent(path.slice('/ui/status/'.length));
    const page = info.pages.find((p) => p.id === id);
    document.title = `${page?.title ?? id} · ${info.title}`;
    await renderStatus(main, id);
  } else {
    main.append(h('h1', {}, 'Not found'), h('p', {}, `This process (${info.targets.join(',')}) serves no page at ${path}. `, h('a', { href: '/' }, 'Home')));
  }
}

void boot();
