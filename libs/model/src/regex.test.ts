import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RE2JS } from 're2js';
import { compileRegex, execRegex } from './regex.ts';
import { matcherSetValues } from './matchers.ts';

const m = (re: string, s: string) => compileRegex(re).matches(s);

describe('Prometheus regexes', () => {
  it('are anchored at both ends and let . match newlines', () => {
    assert.ok(m('a.c', 'a\nc'));
    assert.ok(!m('b', 'abc'));
    assert.ok(m('a|b', 'b'));
    assert.ok(m('a|ab', 'ab'));
  });

  it('support inline flags, named groups and POSIX classes', () => {
    assert.ok(m('(?i)prod.*', 'PRODUCTION'));
    assert.ok(m('.*(?i:DUC).*', 'production'));
    assert.ok(!m('(?i:a)b', 'AB'));
    assert.ok(m('[[:alpha:]]+[[:digit:]]', 'abc1'));
    assert.equal(execRegex('(?P<host>[^:]+):(\\d+)', 'h:80')?.('host'), 'h');
    assert.equal(execRegex('(?P<host>[^:]+):(\\d+)', 'h:80')?.(2), '80');
    assert.equal(execRegex('(a)|(b)', 'b')?.(1), undefined);
    assert.equal(execRegex('a', 'ab'), null);
    assert.ok(m('a\\.b\\z', 'a.b'));
    assert.ok(m('x{2}y{', 'xxy{'));
  });

  it('rejects what RE2 rejects, worded as Go does', () => {
    assert.throws(() => compileRegex('(a'), { message: 'error parsing regexp: missing closing ): `(a`' });
    assert.throws(() => compileRegex('a(?=b)'), { message: 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`' });
    assert.throws(() => compileRegex('(a)\\1'), /invalid escape sequence: `\\1`/);
    assert.throws(() => compileRegex('a{1001}'), /invalid repeat count/);
    assert.throws(() => execRegex('(', 'x'), { message: 'error parsing regexp: missing closing ): `(`' });
  });

  it('run in linear time on patterns that make a backtracking engine explode', () => {
    // Each of these takes V8's RegExp longer than the age of the universe at this length.
    const value = 'a'.repeat(5000);
    assert.equal(m('(a+)+b', value), false);
    assert.equal(m('(a|a)*b', value), false);
    assert.equal(m('(x+x+)+y', 'x'.repeat(5000)), false);
    assert.equal(m('(a+)+', value), true);
  });

  it('give the same answers on the fast paths as RE2 does', () => {
    const patterns = [
      '',
      'foo',
      'foo|bar',
      '(foo|bar)',
      '(?:foo|bar|)',
      'a\\.b',
      '\\\\x+',
      'ab+',
      'ab?c',
      'a\\.+',
      '.*',
      '.+',
      'foo.*',
      'foo.+',
      '.*foo',
      '.+foo',
      '.*foo.*',
      '.+foo.+',
      '.*(foo|bar).*',
      '(foo|bar).*',
      '.*(foo|bar)',
      '.+(a|b).+',
      '(?i)foo|BAR',
      '(?i)foo',
      'api-.*-prod',
      'foo.*bar',
      'a{2}',
      'x{2}y{',
      '\\Qa.b\\E',
      'foo\\.*',
      'foo\\\\.*',
      '(a)|(b)',
      'ü.*',
      '.*ü',
      '(?s)a.b',
      'a$',
      '^a',
      '[ab]c',
    ];
    const values = [
      '',
      'a',
      'b',
      'foo',
      'FOO',
      'bar',
      'Bar',
      'foobar',
      'barfoo',
      'xfoox',
      'foo\n',
      '\nfoo',
      'xfoo',
      'foox',
      'a.b',
      'a..',
      'axb',
      'abc',
      'ac',
      'abbb',
      '\\x',
      '\\xx',
      'aa',
      'xxy{',
      'api-eu-prod',
      'api--prod',
      'foo...',
      'foo\\',
      'foo\\zz',
      'ü',
      'üx',
      'xü',
      'a\nb',
      'bc',
      'K',
      'k',
      'ſ',
      'fooK',
      'xax',
      'ab',
    ];
    for (const p of patterns) {
      const want = RE2JS.compile(`^(?s:${p})$`);
      const got = compileRegex(p);
      for (const v of values) assert.equal(got.matches(v), want.matches(v), `${JSON.stringify(p)} on ${JSON.stringify(v)}`);
    }
  });

  it('expose literal alternations so postings look them up', () => {
    assert.deepEqual(matcherSetValues({ type: '=~', name: 'a', value: 'x|y|x' }), ['x', 'y']);
    assert.deepEqual(matcherSetValues({ type: '=~', name: 'a', value: '(?:api|web\\.1)' }), ['api', 'web.1']);
    assert.deepEqual(matcherSetValues({ type: '=', name: 'a', value: 'v' }), ['v']);
    assert.equal(matcherSetValues({ type: '=~', name: 'a', value: 'x.*' }), undefined);
    assert.equal(matcherSetValues({ type: '=~', name: 'a', value: 'ab+' }), undefined);
    assert.equal(matcherSetValues({ type: '!~', name: 'a', value: 'x' }), undefined);
  });
});
