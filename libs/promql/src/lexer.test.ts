import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeToken, lex } from './lexer.ts';

const types = (input: string) => lex(input).map((t) => `${t.type}:${t.val}`);

describe('lexer', () => {
  it('tokenizes selectors, keywords and operators', () => {
    assert.deepEqual(types('sum by (job) (rate(x{a=~"b"}[5m] offset -1h)) >= bool 0x1F'), [
      'SUM:sum',
      'BY:by',
      'LEFT_PAREN:(',
      'IDENTIFIER:job',
      'RIGHT_PAREN:)',
      'LEFT_PAREN:(',
      'IDENTIFIER:rate',
      'LEFT_PAREN:(',
      'IDENTIFIER:x',
      'LEFT_BRACE:{',
      'IDENTIFIER:a',
      'EQL_REGEX:=~',
      'STRING:"b"',
      'RIGHT_BRACE:}',
      'LEFT_BRACKET:[',
      'DURATION:5m',
      'RIGHT_BRACKET:]',
      'OFFSET:offset',
      'SUB:-',
      'DURATION:1h',
      'RIGHT_PAREN:)',
      'RIGHT_PAREN:)',
      'GTE:>=',
      'BOOL:bool',
      'NUMBER:0x1F',
      'EOF:',
    ]);
  });

  it('keeps keywords as identifiers inside braces and lexes Inf/NaN as numbers', () => {
    assert.deepEqual(types('{by="x"} * Inf'), ['LEFT_BRACE:{', 'IDENTIFIER:by', 'EQL:=', 'STRING:"x"', 'RIGHT_BRACE:}', 'MUL:*', 'NUMBER:Inf', 'EOF:']);
    assert.deepEqual(types('x # comment\n+ y'), ['IDENTIFIER:x', 'COMMENT:# comment', 'ADD:+', 'IDENTIFIER:y', 'EOF:']);
  });

  it('reports lexer errors', () => {
    const err = (input: string) => lex(input).at(-1)!;
    assert.deepEqual(err('x{a="b'), { type: 'ERROR', pos: 4, val: 'unterminated quoted string' });
    assert.equal(err('1.2.3').val, 'bad number or duration syntax: "1.2."');
    assert.equal(err('x $').val, "unexpected character: '$'");
    assert.equal(err('x{a!b}').val, "unexpected character after '!' inside braces: 'b'");
  });

  it('describes tokens as Prometheus error messages do', () => {
    const [sum, , , close, , n, s] = lex('sum(x) + 12345678901 "aaaaaaaaaaaaaa"');
    assert.equal(describeToken(sum), '<aggr:sum>');
    assert.equal(describeToken(close), '")"');
    assert.equal(describeToken(lex('+')[0]), '<op:+>');
    assert.equal(describeToken(n), 'number "1234567890"...');
    assert.equal(describeToken(s), 'string "\\"aaaaaaaaa"...');
    assert.equal(describeToken(lex('by')[0]), '<by>');
    assert.equal(describeToken(lex('')[0]), 'end of input');
  });
});
