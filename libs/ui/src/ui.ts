// Serves the committed UI bundle (dist/) and the little JSON it reads: what
// this process runs (/ui/api/info) and each status page (/ui/api/status/<id>).
// No business logic here: the pages are what the modules' providers return.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DIST_DIR, readManifest } from './manifest.ts';
import type { StatusAnswer, StatusPage, UiInfo, UiLink } from './types.ts';

export interface UiOptions {
  title?: string;
  targets: readonly string[];
  modules: readonly string[];
  /** Read per request: modules may add endpoints after the UI is registered. */
  endpoints: () => readonly string[];
  pages: () => readonly StatusPage[];
  links: () => readonly UiLink[];
  /** Set when a querier runs here: the query page uses this Prometheus API prefix. */
  query?: () => { apiPrefix: string; multitenancy: boolean } | undefined;
}

interface Asset {
  body: Buffer;
  gzip: Buffer;
  type: string;
}

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  json: 'application/json',
};

/** The SPA's own paths: all answered with index.html, the router in the page picks the view. */
const PAGE_ROUTES = ['/', '/ui', '/ui/', '/ui/query', '/ui/status/:id'];

export function registerUi(app: FastifyInstance, opts: UiOptions): void {
  const assets = loadAssets();
  const index = assets.get('index.html');
  if (!index) throw new Error(`the UI bundle in ${DIST_DIR} has no index.html; run npm run build:ui`);

  const send = (req: FastifyRequest, reply: FastifyReply, a: Asset, cache: string) => {
    reply.header('content-type', a.type).header('cache-control', cache).header('vary', 'accept-encoding');
    if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) return reply.header('content-encoding', 'gzip').send(a.gzip);
    return reply.send(a.body);
  };
  for (const url of PAGE_ROUTES) app.get(url, (req, reply) => send(req, reply, index, 'no-cache'));
  // Hashed file names: cacheable for ever.
  app.get('/ui/assets/*', (req, reply) => {
    const a = assets.get(`assets/${(req.params as { '*': string })['*']}`);
    if (!a) return reply.code(404).type('text/plain').send('no such UI asset\n');
    return send(req, reply, a, 'public, max-age=31536000, immutable');
  });

  app.get('/ui/api/info', async (): Promise<UiInfo> => {
    const query = opts.query?.();
    return {
      title: opts.title ?? 'Strata',
      targets: opts.targets,
      modules: opts.modules,
      endpoints: opts.endpoints(),
      pages: opts.pages().map(({ id, title, module }) => ({ id, title, module })),
      links: [...opts.links()],
      ...(query ? { query } : {}),
    };
  });
  app.get('/ui/api/status/:id', async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const page = opts.pages().find((p) => p.id === id);
    if (!page) return reply.code(404).send({ error: `no status page "${id}" in this process` });
    try {
      const answer: StatusAnswer = { id: page.id, title: page.title, module: page.module, sections: await page.sections() };
      return answer;
    } catch (err) {
      return reply.code(500).send({ error: `the ${page.title} page failed: ${(err as Error).message}` });
    }
  });
}

function loadAssets(): Map<string, Asset> {
  const out = new Map<string, Asset>();
  for (const file of Object.keys(readManifest().files)) {
    const body = readFileSync(join(DIST_DIR, file));
    out.set(file, { body, gzip: gzipSync(body), type: TYPES[file.slice(file.lastIndexOf('.') + 1)] ?? 'application/octet-stream' });
  }
  return out;
}
