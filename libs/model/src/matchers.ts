// Label matchers with Prometheus semantics: regexes are RE2 (linear time),
// fully anchored, and a missing label matches as the empty string.

import { compileRegex } from './regex.ts';

export type MatchType = '=' | '!=' | '=~' | '!~';

export interface Matcher {
  type: MatchType;
  name: string;
  value: string;
}

export type MatcherFn = (value: string) => boolean;

export function matcherFn(m: Matcher): MatcherFn {
  switch (m.type) {
    case '=':
      return (v) => v === m.value;
    case '!=':
      return (v) => v !== m.value;
    case '=~':
      return compileRegex(m.value).matches;
    case '!~': {
      const re = compileRegex(m.value);
      return (v) => !re.matches(v);
    }
  }
}

/**
 * The exact values a positive matcher can accept (`=`, or `=~` over literal
 * alternatives), so postings can look them up instead of testing every value.
 */
export function matcherSetValues(m: Matcher): readonly string[] | undefined {
  if (m.type === '=') return [m.value];
  if (m.type === '=~') return compileRegex(m.value).setMatches;
  return undefined;
}

/** True if the matcher accepts the empty string (so it also matches series without the label). */
export function matchesEmpty(m: Matcher): boolean {
  return matcherFn(m)('');
}

export function formatMatcher(m: Matcher): string {
  return `${m.name}${m.type}${JSON.stringify(m.value)}`;
}
