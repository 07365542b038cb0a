import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileAnchoredRe2 } from './re2.ts';

const m = (re: string, s: string) => compileAnchoredRe2(re).test(s);

describe('RE2 regexes', () => {
  it('are anchored at both ends and let . match newlines', () => {
    assert.ok(m('a.c', 'a\nc'));
    assert.ok(!m('b', 'abc'));
    assert.ok(m('a|b', 'b'));
  });

  it('support inline flags, named groups and POSIX classes', () => {
    assert.ok(m('(?i)prod.*', 'PRODUCTION'));
    assert.ok(m('.*(?i:DUC).*', 'production'));
    assert.ok(!m('(?i:a)b', 'AB'));
    assert.ok(m('[[:alpha:]]+[[:digit:]]', 'abc1'));
    assert.equal(compileAnchoredRe2('(?P<host>[^:]+):(\\d+)').exec('h:80')?.groups?.host, 'h');
    assert.ok(m('a\\.b\\z', 'a.b'));
    assert.ok(m('x{2}y{', 'xxy{'));
  });

  it('rejects what RE2 rejects', () => {
    assert.throws(() => compileAnchoredRe2('(a'), /^Error: error parsing regexp: missing closing \)/);
    assert.throws(() => compileAnchoredRe2('a(?=b)'), /invalid or unsupported Perl syntax/);
    assert.throws(() => compileAnchoredRe2('(a)\\1'), /invalid escape sequence/);
  });
});
