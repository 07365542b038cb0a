import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, toLogfmt } from './index.ts';

test('logfmt lines: time, level name and msg first, quoting where needed, nested values as JSON', () => {
  assert.equal(
    toLogfmt(
      '{"level":30,"time":"2026-01-01T00:00:00.000Z","component":"strata","msg":"listening on x","port":8080,"ok":true,"targets":["all"],"q":"a=\\"b\\""}\n',
    ),
    'time=2026-01-01T00:00:00.000Z level=info msg="listening on x" component=strata port=8080 ok=true targets="[\\"all\\"]" q="a=\\"b\\""\n',
  );
  assert.equal(toLogfmt('{"level":50,"msg":""}'), 'level=error msg=""\n');
});

test('createLogger writes logfmt or JSON at the level asked for', () => {
  const lines: string[] = [];
  const sink = { write: (s: string) => void lines.push(s) };
  const logfmt = createLogger('c', 'warn', sink, 'logfmt');
  logfmt.info('dropped');
  logfmt.warn({ tenant: 't' }, 'kept');
  assert.equal(lines.length, 1);
  assert.match(lines[0], /^time=\S+ level=warn msg=kept component=c tenant=t\n$/);
  lines.length = 0;
  createLogger('c', 'debug', sink).debug('x');
  assert.equal((JSON.parse(lines[0]) as { level: number; msg: string }).level, 20);
});
