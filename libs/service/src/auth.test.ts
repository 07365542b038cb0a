import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { TenantError, TokensAuthenticator, TokensFileAuthenticator, createLogger, tokensFileSchema, validateTenantId } from './index.ts';

const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');

function status(fn: () => void): { kind: string; message: string; challenge?: string } | 'ok' {
  try {
    fn();
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof TenantError, String(err));
    return { kind: err.kind, message: err.message, challenge: err.challenge };
  }
}

const file = tokensFileSchema.parse({
  tenants: {
    'team-a': { bearer_token: 's3cret-a' },
    'team-b': { basic_auth: { username: 'prom', password: 'pw-b' } },
    'team-c': { bearer_token: 'tok-c', basic_auth: { username: 'u', password: 'p:with:colons' } },
  },
});

test('bearer token and basic auth per tenant; unlisted tenants pass by default', () => {
  const auth = new TokensAuthenticator(file);
  assert.equal(
    status(() => auth.authenticate('team-a', 'Bearer s3cret-a')),
    'ok',
  );
  assert.equal(
    status(() => auth.authenticate('team-a', 'bearer   s3cret-a ')),
    'ok',
    'scheme is case-insensitive',
  );
  assert.equal(
    status(() => auth.authenticate('team-b', basic('prom', 'pw-b'))),
    'ok',
  );
  assert.equal(
    status(() => auth.authenticate('team-c', 'Bearer tok-c')),
    'ok',
  );
  assert.equal(
    status(() => auth.authenticate('team-c', basic('u', 'p:with:colons'))),
    'ok',
  );
  assert.equal(
    status(() => auth.authenticate('someone-else', undefined)),
    'ok',
  );
});

test('missing, wrong or misplaced credentials are a 401 with a one-line reason and a challenge', () => {
  const auth = new TokensAuthenticator(file);
  const cases: [string, string | undefined, RegExp][] = [
    ['team-a', undefined, /^no credentials: tenant "team-a" requires an Authorization header/],
    ['team-a', 'Bearer wrong', /^wrong credentials for tenant "team-a"/],
    ['team-a', 'Bearer s3cret-a-and-more', /^wrong credentials/],
    ['team-a', basic('team-a', 's3cret-a'), /^wrong credentials/],
    ['team-b', basic('prom', 'nope'), /^wrong credentials/],
    ['team-b', basic('other', 'pw-b'), /^wrong credentials/],
    ['team-b', 'Bearer pw-b', /^wrong credentials/],
    ['team-b', 'Basic !!notbase64', /^wrong credentials/],
    ['team-a', 'Digest abc', /^unsupported Authorization scheme "digest"/],
    ['team-b', 'Bearer s3cret-a', /^wrong credentials for tenant "team-b"/],
  ];
  for (const [tenant, header, why] of cases) {
    const r = status(() => auth.authenticate(tenant, header));
    assert.notEqual(r, 'ok', `${tenant} with ${header}`);
    if (r === 'ok') continue;
    assert.equal(r.kind, 'unauthorized');
    assert.match(r.message, why);
    assert.doesNotMatch(r.message, /\n/);
    assert.doesNotMatch(r.message, /s3cret|pw-b/, 'a secret is never echoed');
    assert.equal(r.challenge, 'Bearer realm="strata", Basic realm="strata"');
  }
});

test('unlisted_tenants: deny makes every tenant without an entry a 401', () => {
  const auth = new TokensAuthenticator(tokensFileSchema.parse({ unlisted_tenants: 'deny', tenants: { a: { bearer_token: 'x' } } }));
  const r = status(() => auth.authenticate('b', 'Bearer x'));
  assert.ok(r !== 'ok' && r.kind === 'unauthorized' && /unlisted tenants are denied/.test(r.message));
  assert.equal(
    status(() => auth.authenticate('a', 'Bearer x')),
    'ok',
  );
});

test('the tokens file is validated: unknown keys, empty entries and invalid tenant ids are refused', () => {
  assert.equal(tokensFileSchema.safeParse({ tenants: { a: { bearer_tokn: 'x' } } }).success, false);
  assert.equal(tokensFileSchema.safeParse({ tenants: { a: {} } }).success, false);
  assert.equal(tokensFileSchema.safeParse({ tenants: { 'a/b': { bearer_token: 'x' } } }).success, false);
  assert.equal(tokensFileSchema.safeParse({ tenants: { a: { basic_auth: { username: 'u' } } } }).success, false);
  assert.equal(tokensFileSchema.safeParse({}).success, true);
});

test('the tokens file reloads at runtime; a broken file keeps the last good credentials', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-auth-'));
  try {
    const path = join(dir, 'tokens.yaml');
    writeFileSync(path, 'tenants:\n  t:\n    bearer_token: one\n');
    const auth = new TokensFileAuthenticator({ path, reloadPeriodMs: 0, logger: createLogger('test', 'silent'), registry: new Registry() });
    await auth.start();
    assert.equal(
      status(() => auth.authenticate('t', 'Bearer one')),
      'ok',
    );
    writeFileSync(path, 'tenants:\n  t:\n    bearer_token: two\n');
    assert.equal(await auth.reload(), undefined);
    assert.notEqual(
      status(() => auth.authenticate('t', 'Bearer one')),
      'ok',
      'a rotated token is refused at once',
    );
    assert.equal(
      status(() => auth.authenticate('t', 'Bearer two')),
      'ok',
    );
    writeFileSync(path, 'tenants:\n  t:\n    bearer_token: [\n');
    assert.match((await auth.reload()) ?? '', /not valid YAML/);
    assert.equal(
      status(() => auth.authenticate('t', 'Bearer two')),
      'ok',
    );
    await auth.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("tenant ids follow Mimir's rules", () => {
  for (const ok of ['team-a', 'a', "A1!-_.*'()", 'x'.repeat(150), '...']) assert.doesNotThrow(() => validateTenantId(ok), ok);
  for (const bad of ['.', '..', 'x'.repeat(151), 'a/b', 'a b', 'a|b', 'a:b', 'tenänt', '__mimir_cluster']) {
    assert.throws(
      () => validateTenantId(bad),
      (err: unknown) => err instanceof TenantError && err.kind === 'bad-input',
      bad,
    );
  }
});
