// Label matchers with Prometheus semantics: regexes are RE2 (translated to JS),
// fully anchored, and a missing label matches as the empty string.

import { compileAnchoredRe2 } from './re2.ts';

export type MatchType = '=' | '!=' | '=~' | '!~';

export interface Matcher {
  type: MatchType;
  name: string;
  value: string;
}

export type MatcherFn = (value: string) => boolean;

const regexCache = new Map<string, RegExp>();

/** Compiles a Prometheus regex, anchored at both ends. Throws on bad syntax. */
export function compileRegex(source: string): RegExp {
  let re = regexCache.get(source);
  if (!re) {
    re = compileAnchoredRe2(source);
    if (regexCache.size > 10_000) regexCache.clear();
    regexCache.set(source, re);
  }
  return re;
}

export function matcherFn(m: Matcher): MatcherFn {
  switch (m.type) {
    case '=':
      return (v) => v === m.value;
    case '!=':
      return (v) => v !== m.value;
    case '=~': {
      const re = compileRegex(m.value);
      return (v) => re.test(v);
    }
    case '!~': {
      const re = compileRegex(m.value);
      return (v) => !re.test(v);
    }
  }
}

/** True if the matcher accepts the empty string (so it also matches series without the label). */
export function matchesEmpty(m: Matcher): boolean {
  return matcherFn(m)('');
}

export function formatMatcher(m: Matcher): string {
  return `${m.name}${m.type}${JSON.stringify(m.value)}`;
}
