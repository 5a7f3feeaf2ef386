import { randomUUID } from 'node:crypto';
import {
  createIdgateAdminClient,
  createIdgateClient,
  type IdgateAdminClient,
  type IdgateClient,
  IdgateHttpError,
  IdgateSdkError,
} from '@idgate/sdk';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, testClock } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { BROWSER, browser, passwordGrantClient, signInTo, webApplication } from './sign-ins.js';

async function failure<T extends Error>(
  promise: Promise<unknown>,
  type: new (...args: never[]) => T,
): Promise<T> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  return error as T;
}

const SECOND = 1000;

describe.each(testDatabaseUrls())("a user's sessions and grants over the admin API on $name", (kind) => {
  let t: TestApp;
  let adminKey: string;
  let admin: IdgateAdminClient;
  let idgate: IdgateClient;
  let web: Awaited<ReturnType<typeof webApplication>>;
  let wiki: Awaited<ReturnType<typeof webApplication>>;
  let cli: { clientId: string; clientSecret: string };
  const clock = testClock();
  const raw = (path: string, init: RequestInit = {}, key = adminKey) =>
    t.fetch(`${t.baseUrl}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } });
  const problemOf = async (response: Response) => ({
    status: response.status,
    ...((await response.json()) as { code: string; detail: string }),
  });
  /** What token review and introspection say of an access token. */
  const liveness = async (accessToken: string, client: { clientId: string; clientSecret: string }) => ({
    review: (await idgate.reviewToken(accessToken)).status.authenticated,
    introspection: (await idgate.introspectToken({ token: accessToken, ...client })).active,
  });
  const password = (username: string) =>
    idgate.passwordGrant({
      ...cli,
      username,
      password: `a sturdy pass phrase!`,
      scope: 'openid offline_access',
    });
  const refresh = (refreshToken: string, client: { clientId: string; clientSecret: string } = cli) =>
    idgate.refreshToken({ ...client, refreshToken });

  beforeAll(async () => {
    t = await startTestApp(kind, {}, { clock });
    for (const username of ['kim', 'lee', 'max']) await t.addUser(username, `a sturdy pass phrase!`);
    adminKey = await t.addApiKey(['admin', 'tokenreview']);
    admin = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: adminKey, fetch: t.fetch });
    idgate = createIdgateClient({ baseUrl: t.baseUrl, apiKey: adminKey, fetch: t.fetch });
    web = await webApplication(t, 'Web');
    wiki = await webApplication(t, 'Wiki');
    cli = await passwordGrantClient(t);
  });
  afterAll(async () => t?.close());

  it('lists a signed-in browser with its applications, address and user agent, and each grant with its last use', async () => {
    const agent = browser(t);
    const signedInAt = clock.now();
    const first = await signInTo(web, agent, { username: 'kim', password: 'a sturdy pass phrase!' });
    clock.advance(30 * SECOND);
    const second = await signInTo(wiki, agent, { username: 'kim', password: 'a sturdy pass phrase!' });
    expect(second.sawLogin).toBe(false);

    const { items: sessions, nextCursor } = await admin.listUserSessions('KIM');
    expect(nextCursor).toBeNull();
    expect(sessions).toHaveLength(1);
    const [session] = sessions;
    expect(session).toMatchObject({
      sourceAddress: '127.0.0.1',
      userAgent: BROWSER,
      clients: [
        { clientId: web.clientId, name: 'Web' },
        { clientId: wiki.clientId, name: 'Wiki' },
      ],
    });
    expect(Date.parse(session?.createdAt ?? '')).toBeGreaterThanOrEqual(signedInAt - SECOND);
    expect(Date.parse(session?.lastSeenAt ?? '')).toBeGreaterThanOrEqual(signedInAt + 30 * SECOND);
    expect(Date.parse(session?.expiresAt ?? '')).toBeGreaterThan(Date.parse(session?.createdAt ?? ''));

    const { items: grants } = await admin.listUserGrants('kim');
    expect(grants.map((g) => [g.clientId, g.clientName, g.scopes, g.sessionId, g.lastUsedAddress])).toEqual([
      [web.clientId, 'Web', ['openid', 'offline_access'], session?.id, '127.0.0.1'],
      [wiki.clientId, 'Wiki', ['openid', 'offline_access'], session?.id, '127.0.0.1'],
    ]);
    const webGrant = grants[0];
    expect(webGrant?.lastUsedAt).toBe(webGrant?.createdAt);

    // A refresh is a use: its time is recorded.
    clock.advance(60 * SECOND);
    const before = clock.now();
    const refreshed = await refresh(first.tokens.refresh_token as string, web);
    const after = (await admin.listUserGrants('kim')).items.find((g) => g.id === webGrant?.id);
    expect(Date.parse(after?.lastUsedAt ?? '')).toBeGreaterThanOrEqual(before);
    expect(Date.parse(after?.lastUsedAt ?? '')).toBeGreaterThan(Date.parse(after?.createdAt ?? ''));

    // Ending the session signs the browser out and revokes both grants made in it.
    expect(await liveness(refreshed.access_token, web)).toEqual({ review: true, introspection: true });
    await admin.revokeUserSession('kim', session?.id as string);
    expect((await admin.listUserSessions('kim')).items).toEqual([]);
    expect((await admin.listUserGrants('kim')).items).toEqual([]);
    expect(await liveness(refreshed.access_token, web)).toEqual({ review: false, introspection: false });
    const refused = await failure(refresh(refreshed.refresh_token as string, web), IdgateHttpError);
    expect([refused.status, refused.oauthError?.error]).toEqual([400, 'invalid_grant']);
    await expect(
      oidc.refreshTokenGrant(wiki.config, second.tokens.refresh_token as string),
    ).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect(
      (await signInTo(web, agent, { username: 'kim', password: 'a sturdy pass phrase!' })).sawLogin,
    ).toBe(true);
  });

  it('revokes one grant: its refresh token gets invalid_grant, its access token is refused, the other grant lives', async () => {
    const one = await password('lee');
    const other = await password('lee');
    const { items } = await admin.listUserGrants('lee');
    expect(items.map((g) => [g.clientName, g.sessionId, g.lastUsedAddress])).toEqual([
      ['CLI', null, '127.0.0.1'],
      ['CLI', null, '127.0.0.1'],
    ]);
    // Which grant is which: the access token's sid.
    const sid = (token: string) => (JSON.parse(atob(token.split('.')[1] as string)) as { sid: string }).sid;
    await admin.revokeUserGrant('lee', sid(one.access_token));

    const refused = await failure(refresh(one.refresh_token as string), IdgateHttpError);
    expect([refused.status, refused.oauthError?.error]).toEqual([400, 'invalid_grant']);
    expect(await liveness(one.access_token, cli)).toEqual({ review: false, introspection: false });
    const next = await refresh(other.refresh_token as string);
    expect(await liveness(next.access_token, cli)).toEqual({ review: true, introspection: true });
    expect((await admin.listUserGrants('lee')).items.map((g) => g.id)).toEqual([sid(other.access_token)]);

    const gone = await failure(admin.revokeUserGrant('lee', sid(one.access_token)), IdgateHttpError);
    expect([gone.status, gone.problem?.code]).toEqual([404, 'grant_not_found']);

    expect(await admin.revokeUserGrants('lee')).toEqual({ revoked: 1 });
    expect(await admin.revokeUserGrants('lee')).toEqual({ revoked: 0 });
    const last = await failure(refresh(next.refresh_token as string), IdgateHttpError);
    expect(last.oauthError?.error).toBe('invalid_grant');
    expect(await liveness(next.access_token, cli)).toEqual({ review: false, introspection: false });
  });

  it('pages grants and sessions in SQL with an opaque cursor', async () => {
    for (let i = 0; i < 3; i++) await password('max');
    const first = await admin.listUserGrants('max', { limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const second = await admin.listUserGrants('max', { limit: 2, cursor: first.nextCursor as string });
    expect(second.items).toHaveLength(1);
    expect(second.nextCursor).toBeNull();
    const all = (await admin.listUserGrants('max')).items.map((g) => g.id);
    expect([...first.items, ...second.items].map((g) => g.id)).toEqual(all);
    expect(new Set(all).size).toBe(3);

    for (let i = 0; i < 3; i++)
      await signInTo(web, browser(t), { username: 'max', password: 'a sturdy pass phrase!' });
    const page = await admin.listUserSessions('max', { limit: 2 });
    const rest = await admin.listUserSessions('max', { limit: 2, cursor: page.nextCursor as string });
    expect([...page.items, ...rest.items].map((s) => s.id)).toEqual(
      (await admin.listUserSessions('max')).items.map((s) => s.id),
    );
    expect(rest.nextCursor).toBeNull();

    // Ending them all answers how many, and revokes the grants made in them (not the CLI's).
    expect(await admin.revokeUserSessions('max')).toEqual({ ended: 3, revokedGrants: 3 });
    expect(await admin.revokeUserSessions('max')).toEqual({ ended: 0, revokedGrants: 0 });
    expect((await admin.listUserGrants('max')).items.map((g) => g.clientName)).toEqual(['CLI', 'CLI', 'CLI']);
  });

  it('answers problems for unknown users and ids, malformed ids, bad paging, control characters and missing keys', async () => {
    const agent = browser(t);
    await signInTo(web, agent, { username: 'lee', password: 'a sturdy pass phrase!' });
    const leeSession = (await admin.listUserSessions('lee')).items[0]?.id as string;
    const leeGrant = (await admin.listUserGrants('lee')).items[0]?.id as string;

    for (const path of ['sessions', 'grants']) {
      expect(await problemOf(await raw(`/admin/v1/users/nobody/${path}`))).toMatchObject({
        status: 404,
        code: 'user_not_found',
      });
      expect(
        await problemOf(await raw(`/admin/v1/users/nobody/${path}`, { method: 'DELETE' })),
      ).toMatchObject({
        status: 404,
        code: 'user_not_found',
      });
    }
    // Another user's session or grant is not found for this one, and stays.
    expect(
      await problemOf(await raw(`/admin/v1/users/kim/sessions/${leeSession}`, { method: 'DELETE' })),
    ).toEqual({
      status: 404,
      code: 'session_not_found',
      detail: `there is no session ${leeSession}`,
      type: 'about:blank',
      title: 'Not Found',
    });
    expect(
      await problemOf(await raw(`/admin/v1/users/kim/grants/${leeGrant}`, { method: 'DELETE' })),
    ).toMatchObject({
      status: 404,
      code: 'grant_not_found',
    });
    expect((await admin.listUserSessions('lee')).items.map((s) => s.id)).toEqual([leeSession]);
    expect((await admin.listUserGrants('lee')).items.map((g) => g.id)).toEqual([leeGrant]);
    expect(
      await problemOf(await raw(`/admin/v1/users/lee/grants/${randomUUID()}`, { method: 'DELETE' })),
    ).toMatchObject({
      status: 404,
      code: 'grant_not_found',
    });

    expect(
      await problemOf(await raw('/admin/v1/users/lee/sessions/not_an_id', { method: 'DELETE' })),
    ).toMatchObject({
      status: 400,
      code: 'invalid_session',
      detail: expect.stringContaining('id'),
    });
    expect(
      await problemOf(await raw(`/admin/v1/users/lee/grants/${'a'.repeat(65)}`, { method: 'DELETE' })),
    ).toMatchObject({
      status: 400,
      code: 'invalid_grant_id',
    });
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['limit=ten', 'limit'],
      ['cursor=%00', 'cursor'],
      ['cursor=bm90IGpzb24', 'cursor'],
    ] as const) {
      const problem = await problemOf(await raw(`/admin/v1/users/lee/sessions?${query}`));
      expect(problem, query).toMatchObject({ status: 400, code: 'invalid_session' });
      expect(problem.detail, query).toContain(field);
      expect((await problemOf(await raw(`/admin/v1/users/lee/grants?${query}`))).code).toBe(
        'invalid_grant_id',
      );
    }
    for (const path of [
      '/admin/v1/users/lee/sessions/%00',
      '/admin/v1/users/lee%0a/grants',
      '/admin/v1/users/lee/grants/a%1Fb',
    ]) {
      const response = await raw(path, { method: path.endsWith('grants') ? 'GET' : 'DELETE' });
      expect(response.status, path).toBe(404);
    }
    const anonymous = await raw('/admin/v1/users/lee/sessions', {}, 'idg_not-a-key');
    expect(anonymous.status).toBe(401);
    const reviewOnly = await t.addApiKey(['tokenreview']);
    expect((await raw('/admin/v1/users/lee/grants', { method: 'DELETE' }, reviewOnly)).status).toBe(403);
    expect((await admin.listUserGrants('lee')).items.map((g) => g.id)).toEqual([leeGrant]);

    // The SDK refuses what cannot be an id or a username before sending anything.
    await failure(admin.revokeUserSession('lee', '../x'), IdgateSdkError);
    await failure(admin.revokeUserGrant('lee', ''), IdgateSdkError);
    await failure(admin.listUserGrants('../clients'), IdgateSdkError);
    await failure(admin.listUserSessions('lee', { limit: 0 }), IdgateSdkError);
    expect(() => createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: '' })).toThrow(IdgateSdkError);
  });
});
