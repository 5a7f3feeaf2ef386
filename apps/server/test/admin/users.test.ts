import { createIdgateAdminClient, createIdgateClient, type IdgateAdminClient } from '@idgate/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { httpError } from '../helpers/http-error.js';

const BASE = '/admin/v1/users';

/** [status, problem code, detail] of a refused SDK call. */
async function refusal(promise: Promise<unknown>) {
  const error = await httpError(promise);
  return [error.status, error.problem?.code, error.problem?.detail];
}

describe.each(testDatabaseUrls())('admin users API on $name', (kind) => {
  let t: TestApp;
  let adminKey: string;
  let admin: IdgateAdminClient;
  let client: { clientId: string; clientSecret: string };
  const raw = (path: string, init: RequestInit = {}) =>
    t.fetch(`${t.baseUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${adminKey}`, ...init.headers },
    });
  const passwordGrant = (username: string, password: string) =>
    t.fetch(`${t.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        grant_type: 'password',
        username,
        password,
        scope: 'openid offline_access',
      }),
    });
  const reviewKey = () => t.addApiKey(['tokenreview']);

  beforeAll(async () => {
    t = await startTestApp(kind, { bruteForce: { maxFailures: 3 } });
    adminKey = await t.addApiKey(['admin']);
    admin = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: adminKey, fetch: t.fetch });
    client = await t.addClient({
      grants: ['password', 'refresh_token'],
      trusted: true,
      scopes: ['openid', 'offline_access', 'groups'],
    });
  });
  afterAll(async () => t?.close());

  it('creates users (201, Location, ETag), generating a password shown once, and reads them in any case', async () => {
    const response = await raw(BASE, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'Alice', email: 'alice@example.com', groups: ['dev', 'dev', 'ops'] }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`${t.baseUrl}${BASE}/Alice`);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const created = (await response.json()) as { password: string; etag: string; groups: string[] };
    expect(created.groups).toEqual(['dev', 'ops']);
    expect(response.headers.get('etag')).toBe(created.etag);
    expect(created.password.length).toBeGreaterThanOrEqual(20);
    expect((await passwordGrant('alice', created.password)).status).toBe(200);

    const read = await raw(`${BASE}/ALICE`);
    expect(read.headers.get('etag')).toBe(created.etag);
    const user = await admin.getUser('alice');
    expect(user).toMatchObject({ username: 'Alice', email: 'alice@example.com', etag: created.etag });
    expect(JSON.stringify(user)).not.toContain(created.password);
    expect(user).not.toHaveProperty('password');

    const chosen = await admin.createUser({ username: 'bob', password: 'correct horse battery staple' });
    expect(chosen).not.toHaveProperty('password');
    expect((await passwordGrant('bob', 'correct horse battery staple')).status).toBe(200);
  });

  it('refuses duplicates (409), bad fields naming them (400), control characters and other content types (415)', async () => {
    await admin.createUser({ username: 'carol' });
    expect(await refusal(admin.createUser({ username: 'CAROL' }))).toEqual([
      409,
      'user_exists',
      'user CAROL already exists',
    ]);
    const [status, code, detail] = await refusal(
      admin.createUser({ username: 'dan', email: 'not-an-email' }),
    );
    expect([status, code]).toEqual([400, 'invalid_user']);
    expect(detail).toContain('email');
    const bad = await refusal(admin.createUser({ username: 'dan', displayName: 'Dan\u0000' }));
    expect(bad.slice(0, 2)).toEqual([400, 'invalid_user']);
    expect(bad[2]).toContain('displayName');
    const group = await refusal(admin.createUser({ username: 'dan', groups: ['system:masters'] }));
    expect(group.slice(0, 2)).toEqual([400, 'invalid_user']);
    expect(group[2]).toContain('groups');
    const extra = await raw(BASE, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'dan', admin: true }),
    });
    expect(extra.status).toBe(400);
    const form = await raw(BASE, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'username=dan',
    });
    expect(form.status).toBe(415);
    expect(await refusal(admin.getUser('dan'))).toEqual([404, 'user_not_found', 'there is no user dan']);
  });

  it('refuses weak passwords on every path with weak_password and the reason', async () => {
    const cases: Array<[string, string]> = [
      ['short-one', 'at least 12 characters'],
      ['Password123!', 'most common passwords'],
      ['qwertyuiop123', 'most common passwords'],
      ['my-name-is-erin-ok', 'username'],
      ['x'.repeat(257), 'at most 256 characters'],
    ];
    for (const [password, why] of cases) {
      const [status, code, detail] = await refusal(admin.createUser({ username: 'erin', password }));
      expect([status, code]).toEqual([400, 'weak_password']);
      expect(detail).toContain(why);
    }
    await httpError(admin.getUser('erin'));
    await admin.createUser({ username: 'erin' });
    const [status, code] = await refusal(admin.setUserPassword('erin', 'letmein12345'));
    expect([status, code]).toEqual([400, 'weak_password']);

    await admin.setUserPassword('erin', 'a perfectly fine passphrase');
    expect((await passwordGrant('erin', 'a perfectly fine passphrase')).status).toBe(200);
    const generated = await admin.setUserPassword('erin');
    expect(generated.password).toBeDefined();
    expect((await passwordGrant('erin', generated.password as string)).status).toBe(200);
    expect((await passwordGrant('erin', 'a perfectly fine passphrase')).status).toBe(400);
  });

  it('updates fields with If-Match, refusing a stale ETag (412) without changing anything', async () => {
    const before = await admin.createUser({ username: 'fay', email: 'fay@example.com' });
    const updated = await admin.updateUser(
      'FAY',
      { displayName: 'Fay F', groups: ['dev'], email: null },
      { ifMatch: before.etag },
    );
    expect(updated).toMatchObject({ displayName: 'Fay F', groups: ['dev'], email: null });
    expect(updated.etag).not.toBe(before.etag);
    const [status, code, detail] = await refusal(
      admin.updateUser('fay', { disabled: true }, { ifMatch: before.etag }),
    );
    expect([status, code]).toEqual([412, 'precondition_failed']);
    expect(detail).toContain('has changed since it was read');
    expect((await admin.getUser('fay')).disabled).toBe(false);
    expect((await admin.updateUser('fay', { disabled: true }, { ifMatch: '*' })).disabled).toBe(true);
    // Without If-Match the change is unconditional.
    expect((await admin.updateUser('fay', { disabled: false })).disabled).toBe(false);

    const invalid = await refusal(admin.updateUser('fay', { email: 'nope' }));
    expect(invalid.slice(0, 2)).toEqual([400, 'invalid_user']);
    expect(invalid[2]).toContain('email');
    expect(await refusal(admin.updateUser('nobody', { disabled: true }))).toEqual([
      404,
      'user_not_found',
      'there is no user nobody',
    ]);
    const unknownField = await raw(`${BASE}/fay`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'renamed' }),
    });
    expect(unknownField.status).toBe(400);
    const notJson = await raw(`${BASE}/fay`, {
      method: 'PATCH',
      headers: { 'content-type': 'text/plain' },
      body: 'disabled',
    });
    expect(notJson.status).toBe(415);
  });

  it('lists users a page at a time, filtered by group, status and text', async () => {
    for (const [username, groups, displayName] of [
      ['gus', ['qa'], 'Gus Grant'],
      ['hal', ['qa', 'ops'], null],
      ['ida', ['qa'], 'Ida Q'],
    ] as const)
      await admin.createUser({ username, groups: [...groups], displayName });
    await admin.updateUser('ida', { disabled: true });

    const first = await admin.listUsers({ group: 'qa', limit: 2 });
    expect(first.items.map((u) => u.username)).toEqual(['gus', 'hal']);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await admin.listUsers({ group: 'qa', limit: 2, cursor: first.nextCursor as string });
    expect(second).toMatchObject({ items: [{ username: 'ida' }], nextCursor: null });

    expect((await admin.listUsers({ group: 'qa', status: 'disabled' })).items.map((u) => u.username)).toEqual(
      ['ida'],
    );
    expect((await admin.listUsers({ group: 'qa', status: 'active' })).items.map((u) => u.username)).toEqual([
      'gus',
      'hal',
    ]);
    expect((await admin.listUsers({ q: 'GRANT' })).items.map((u) => u.username)).toEqual(['gus']);
    expect((await admin.listUsers({ q: 'alice@EXAMPLE' })).items.map((u) => u.username)).toEqual(['Alice']);
    // LIKE wildcards are taken literally.
    expect((await admin.listUsers({ q: '%' })).items).toEqual([]);
    const all = await admin.listUsers();
    const names = all.items.map((u) => u.username.toLowerCase());
    expect(names).toEqual([...names].sort());
  });

  it('refuses bad limits, cursors and filters with 400 naming the parameter', async () => {
    for (const query of ['limit=0', 'limit=501', 'limit=abc', 'limit=1&limit=2']) {
      const response = await raw(`${BASE}?${query}`);
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { detail: string }).detail).toContain('limit');
    }
    for (const query of ['cursor=%00%01', 'cursor=not!base64', 'status=gone', 'q=a%00b', 'group=a%20b']) {
      const response = await raw(`${BASE}?${query}`);
      expect(response.status, query).toBe(400);
      expect((await response.json()) as object).toMatchObject({ code: 'invalid_user' });
    }
    const cursor = await raw(`${BASE}?cursor=AAEC`);
    expect(cursor.status).toBe(400);
    expect(((await cursor.json()) as { detail: string }).detail).toContain('cursor');
    expect((await raw(`${BASE}/bob%00`)).status).toBe(404);
  });

  it('locks an account after failures and unlocks it, keeping the record in the logins', async () => {
    await admin.createUser({ username: 'jay', password: 'a sturdy pass phrase!' });
    for (let i = 0; i < 3; i++) expect((await passwordGrant('jay', `wrong-${i}`)).status).toBe(400);
    expect((await passwordGrant('jay', 'a sturdy pass phrase!')).status).toBe(429);
    expect((await admin.listUsers({ status: 'locked' })).items.map((u) => u.username)).toEqual(['jay']);
    expect((await admin.listUsers({ status: 'active', q: 'jay' })).items).toEqual([]);

    const unlocked = await admin.unlockUser('JAY');
    expect(unlocked.username).toBe('jay');
    expect((await admin.listUsers({ status: 'locked' })).items).toEqual([]);
    expect((await passwordGrant('jay', 'a sturdy pass phrase!')).status).toBe(200);

    const logins = await admin.listUserLogins('jay', { limit: 3 });
    expect(logins.items.map((a) => [a.success, a.provider, a.reason])).toEqual([
      [true, 'password', null],
      [true, 'password', 'unlocked'],
      [false, 'password', 'locked'],
    ]);
    expect(await refusal(admin.unlockUser('nobody'))).toEqual([
      404,
      'user_not_found',
      'there is no user nobody',
    ]);
    const limit = await raw(`${BASE}/jay/logins?limit=1001`);
    expect(limit.status).toBe(400);
  });

  it('deletes a user with its grants, tokens, sessions and identities, in one go', async () => {
    await admin.createIdentityProvider({
      type: 'github',
      name: 'github',
      clientId: 'Iv1.x',
      clientSecret: 'github-plain-secret',
    });
    await admin.createUser({ username: 'kim', password: 'another long passphrase', groups: ['ops'] });
    const identity = await admin.linkIdentity('kim', { provider: 'github', subject: '583231' });
    expect(identity).toMatchObject({ provider: 'github', subject: '583231', lastLoginAt: null });
    expect(await refusal(admin.linkIdentity('bob', { provider: 'github', subject: '583231' }))).toEqual([
      409,
      'identity_exists',
      'github subject 583231 is linked already, to user kim',
    ]);
    expect((await admin.listUserIdentities('kim')).items).toHaveLength(1);

    const tokens = (await (await passwordGrant('kim', 'another long passphrase')).json()) as {
      access_token: string;
      refresh_token: string;
    };
    const reviewer = createIdgateClient({ baseUrl: t.baseUrl, apiKey: await reviewKey(), fetch: t.fetch });
    expect((await reviewer.reviewToken(tokens.access_token)).status.authenticated).toBe(true);

    const stale = await refusal(admin.deleteUser('kim', { ifMatch: '"0000000000000000"' }));
    expect(stale.slice(0, 2)).toEqual([412, 'precondition_failed']);
    await admin.deleteUser('kim');
    expect(await refusal(admin.getUser('kim'))).toEqual([404, 'user_not_found', 'there is no user kim']);
    expect((await reviewer.reviewToken(tokens.access_token)).status.authenticated).toBe(false);
    const refresh = await t.fetch(`${t.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
    });
    expect(refresh.status).toBe(400);
    // The identity is free to link again.
    await admin.linkIdentity('bob', { provider: 'github', subject: '583231' });
    await admin.unlinkIdentity('bob', 'github', '583231');
    expect((await admin.listUserIdentities('bob')).items).toEqual([]);
    expect(await refusal(admin.unlinkIdentity('bob', 'github', '583231'))).toEqual([
      404,
      'identity_not_found',
      'there is no identity 583231',
    ]);
    expect(await refusal(admin.deleteUser('kim'))).toEqual([404, 'user_not_found', 'there is no user kim']);
  });
});
