// ESLint rules for the import graph of the whole tree (eslint.config.js turns them on):
// no import cycles, counting `import type` (a cycle closed by a type import is still
// two files that cannot be read, moved or tested apart), and no role app importing
// another app folder. Plain Node and TypeScript's scanner; it never reads node_modules.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const TOPS = ['apps', 'libs', 'test', 'chaos', 'scripts'];
const SKIP = new Set(['node_modules', 'dist', 'data', 'output', 'reports']);
/** How long a scan of the tree is reused: one lint run reads it a few times, an editor sees edits within this. */
const FRESH_MS = 2000;

/** Workspace package name → its folder and its package.json exports. */
function workspaces() {
  const out = new Map();
  for (const top of ['apps', 'libs']) {
    for (const name of readdirSync(join(ROOT, top))) {
      const dir = join(ROOT, top, name);
      let pkg;
      try {
        pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      } catch {
        continue;
      }
      out.set(pkg.name, { dir, exports: pkg.exports ?? {} });
    }
  }
  return out;
}

/** The file an import names, when it is one of ours (relative, or @strata/<pkg>[/<export>]). */
function resolveImport(from, specifier, packages) {
  if (specifier.startsWith('.')) return resolve(dirname(from), specifier);
  const m = /^(@strata\/[^/]+)(\/.+)?$/.exec(specifier);
  const pkg = m && packages.get(m[1]);
  if (!pkg) return undefined;
  const target = typeof pkg.exports === 'string' ? (m[2] ? undefined : pkg.exports) : pkg.exports[m[2] ? `.${m[2]}` : '.'];
  return typeof target === 'string' ? resolve(pkg.dir, target) : undefined;
}

/** Every specifier a file imports or re-exports, type-only and dynamic ones included. */
function specifiers(text) {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

function walk(dir, files) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith('.') || SKIP.has(name)) continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) walk(p, files);
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.d.mts')) files.set(p, st.mtimeMs);
  }
}

let graph; // { at, packages, edges: Map<file, Set<file>>, mtimes: Map<file, number>, scc: Map<file, number> }

/** The import graph of the tree, rescanned when older than FRESH_MS (only changed files are re-read). */
function importGraph() {
  const now = Date.now();
  if (graph && now - graph.at < FRESH_MS) return graph;
  const packages = workspaces();
  const mtimes = new Map();
  for (const top of TOPS) walk(join(ROOT, top), mtimes);
  const edges = new Map();
  for (const [file, mtime] of mtimes) {
    const cached = graph?.mtimes.get(file) === mtime ? graph.edges.get(file) : undefined;
    edges.set(
      file,
      cached ??
        new Set(
          specifiers(readFileSync(file, 'utf8'))
            .map((s) => resolveImport(file, s, packages))
            .filter((f) => f !== undefined && mtimes.has(f)),
        ),
    );
  }
  graph = { at: now, packages, edges, mtimes, scc: components(edges) };
  return graph;
}

/** Tarjan's strongly connected components: file → component id (files in one cycle share an id). */
function components(edges) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const scc = new Map();
  let next = 0;
  let id = 0;
  const visit = (root) => {
    // Iterative, so a deep chain of imports cannot overflow the stack.
    const work = [[root, [...edges.get(root)], 0]];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [v, deps] = frame;
      if (frame[2] < deps.length) {
        const w = deps[frame[2]++];
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push([w, [...edges.get(w)], 0]);
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(v)));
      }
      if (low.get(v) === index.get(v)) {
        let w;
        do {
          w = stack.pop();
          onStack.delete(w);
          scc.set(w, id);
        } while (w !== v);
        id++;
      }
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return scc;
}

/** The shortest way from `from` to `to` through the graph, as repo paths; empty when there is none. */
function pathBack(edges, from, to) {
  const prev = new Map([[from, undefined]]);
  const queue = [from];
  while (queue.length > 0) {
    const v = queue.shift();
    if (v === to) break;
    for (const w of edges.get(v) ?? []) {
      if (prev.has(w)) continue;
      prev.set(w, v);
      queue.push(w);
    }
  }
  if (!prev.has(to)) return [];
  const path = [];
  for (let v = to; v !== undefined; v = prev.get(v)) path.unshift(relative(ROOT, v));
  return path;
}

/** The import declarations of a file with the specifier each names. */
function importNodes(create) {
  return {
    ImportDeclaration: (node) => create(node, node.source.value),
    ExportNamedDeclaration: (node) => node.source && create(node, node.source.value),
    ExportAllDeclaration: (node) => create(node, node.source.value),
    ImportExpression: (node) => node.source.type === 'Literal' && typeof node.source.value === 'string' && create(node, node.source.value),
    TSImportType: (node) => {
      const arg = node.argument?.literal ?? node.argument;
      if (arg?.type === 'Literal' && typeof arg.value === 'string') create(node, arg.value);
    },
  };
}

const noImportCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'no import cycles between files, type-only imports counted' },
    messages: {
      cycle:
        'import cycle: {{path}}. Type imports count too: move what both sides need into a file both import (chunk-encoding.ts, wire-types.ts, function-types.ts).',
    },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    const g = importGraph();
    if (!g.edges.has(file)) return {};
    // The text being linted may not be on disk yet (an editor): then any import may close a cycle.
    const saved = g.edges.get(file);
    const now = new Set(
      specifiers(context.sourceCode.text)
        .map((s) => resolveImport(file, s, g.packages))
        .filter((f) => f !== undefined && g.edges.has(f)),
    );
    const unsaved = now.size !== saved.size || [...now].some((f) => !saved.has(f));
    return importNodes((node, specifier) => {
      const target = resolveImport(file, specifier, g.packages);
      if (target === undefined || target === file || !g.edges.has(target)) return;
      if (!unsaved && g.scc.get(target) !== g.scc.get(file)) return;
      const back = pathBack(g.edges, target, file);
      if (back.at(-1) !== relative(ROOT, file)) return;
      context.report({ node, messageId: 'cycle', data: { path: [relative(ROOT, file), ...back].join(' → ') } });
    });
  },
};

/** apps/<name>/ of a path under the repo, if it is in one. */
function appOf(path) {
  const parts = relative(ROOT, path).split(sep);
  return parts[0] === 'apps' && parts.length > 1 ? parts[1] : undefined;
}

/** The app a package import names (@strata/app-<name>, or any subpath of it). */
function packageApp(specifier, packages) {
  const m = /^(@strata\/[^/]+)/.exec(specifier);
  const pkg = m && packages.get(m[1]);
  return pkg ? appOf(join(pkg.dir, 'package.json')) : undefined;
}

const noCrossAppImport = {
  meta: {
    type: 'problem',
    docs: { description: 'a role app imports libs only; the binary imports a role by its package' },
    messages: {
      role: "apps/{{from}} imports apps/{{to}}: a role's wiring imports libs only (what modules share is @strata/runtime); only the binary (apps/{{binary}}) imports a role.",
      binary: 'apps/{{binary}} imports apps/{{to}} by path: import the role by its package, @strata/app-{{to}}, whose export is its init.',
    },
    schema: [{ type: 'object', properties: { binary: { type: 'string' } }, additionalProperties: false }],
  },
  create(context) {
    const binary = context.options[0]?.binary ?? 'strata';
    const file = context.filename;
    const from = appOf(file);
    if (from === undefined) return {};
    const { packages } = importGraph();
    return importNodes((node, specifier) => {
      const to = specifier.startsWith('.') ? appOf(resolve(dirname(file), specifier)) : packageApp(specifier, packages);
      if (to === undefined || to === from) return;
      if (from !== binary) context.report({ node, messageId: 'role', data: { from, to, binary } });
      else if (specifier !== `@strata/app-${to}`) context.report({ node, messageId: 'binary', data: { to, binary } });
    });
  },
};

export default { meta: { name: 'strata-imports' }, rules: { 'no-import-cycle': noImportCycle, 'no-cross-app-import': noCrossAppImport } };
