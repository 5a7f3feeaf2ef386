import type { AuditEvent } from '@idgate/schema';
import {
  createIdgateAdminClient,
  createIdgateClient,
  type IdgateAdminClient,
  type IdgateClient,
  IdgateHttpError,
} from '@idgate/sdk';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { httpError } from '../helpers/http-error.js';
import { startTestServer, type TestServer, testClock } from '../helpers/server.js';
import { browser, signInTo, webApplication } from './sign-ins.js';

// When something is compromised (issue 23 point 9), over real HTTP on each database: a signing
// key retired at once, not-befores globally, per client and per user, a client's sessions and
// grants, blocked source addresses — and hostile input on each new route answered 4xx, never 5xx.

const PASSWORD = 'a sturdy pass phrase!';
const SECOND = 1000;

describe.each(testDatabaseUrls())('incident response over HTTP on $name', (kind) => {
  let t: TestServer;
  let adminKey: string;
  let admin: IdgateAdminClient;
  let idgate: IdgateClient;
  let cli: { clientId: string; clientSecret: string };
  let other: { clientId: string; clientSecret: string };
  const clock = testClock();

  /** The test server as the browser helpers take it: its own fetch is the real one. */
  const asApp = () =>
    ({
      ...t,
      fetch: (input: string | URL | Request, init?: RequestInit) => fetch(input, init),
    }) as unknown as TestApp;
  const raw = (path: string, init: RequestInit = {}) =>
    fetch(`${t.baseUrl}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${adminKey}`, ...(init.headers as Record<string, string>) },
    });
  const password = (username: string, client = cli) =>
    idgate.passwordGrant({ ...client, username, password: PASSWORD, scope: 'openid offline_access' });
  /** What every place that checks an access token says of it. */
  const liveness = async (accessToken: string, client = cli) => ({
    review: (await idgate.reviewToken(accessToken)).status.authenticated,
    introspection: (await idgate.introspectToken({ token: accessToken, ...client })).active,
    userinfo: await idgate.userinfo(accessToken).then(
      () => true,
      () => false,
    ),
  });
  const LIVE = { review: true, introspection: true, userinfo: true };
  const DEAD = { review: false, introspection: false, userinfo: false };
  const refreshFails = async (refreshToken: string, client = cli) => {
    const error = await idgate.refreshToken({ ...client, refreshToken }).then(
      () => undefined,
      (e: unknown) => e,
    );
    return error instanceof IdgateHttpError && error.oauthError?.error === 'invalid_grant';
  };
  const logoutWithHint = (idToken: string) =>
    fetch(`${t.issuer}/logout?${new URLSearchParams({ id_token_hint: idToken })}`, { redirect: 'manual' });
  const events = async (type: AuditEvent['type']) =>
    (await admin.listEvents({ type: [type], limit: 500 })).items;

  beforeAll(async () => {
    t = await startTestServer(kind, { bruteForce: { maxFailuresPerAddress: 3 } }, { clock });
    for (const username of ['kim', 'lee', 'max', 'ned']) await t.addUser(username, PASSWORD);
    adminKey = await t.addApiKey(['admin', 'tokenreview']);
    admin = createIdgateAdminClient({ baseUrl: t.baseUrl, apiKey: adminKey });
    idgate = createIdgateClient({ baseUrl: t.baseUrl, apiKey: adminKey });
    const grants = ['password', 'refresh_token'] as const;
    const scopes = ['openid', 'offline_access'];
    cli = await t.addClient({ name: 'CLI', trusted: true, grants: [...grants], scopes });
    other = await t.addClient({ name: 'Other', trusted: true, grants: [...grants], scopes });
  });
  afterAll(async () => t?.close());

  describe('retiring a signing key at once', () => {
    it('refuses the only signing key without a new one, then with rotate takes it out of JWKS and refuses every token it signed', async () => {
      const before = await password('kim');
      const kid = decodeProtectedHeader(before.access_token).kid as string;
      expect(await liveness(before.access_token)).toEqual(LIVE);

      const refused = await httpError(admin.retireSigningKey(kid));
      expect([refused.status, refused.problem?.code]).toEqual([409, 'last_signing_key']);
      expect(await liveness(before.access_token)).toEqual(LIVE);

      const { retired, created } = await admin.retireSigningKey(kid, { rotate: true });
      expect(retired).toMatchObject({ kid, state: 'expired' });
      expect(created?.state).toBe('active');
      const jwks = (await (await fetch(`${t.issuer}/keys`)).json()) as { keys: Array<{ kid: string }> };
      expect(jwks.keys.map((k) => k.kid)).toEqual([created?.kid]);
      expect(await liveness(before.access_token)).toEqual(DEAD);
      // An ID token it signed proves nothing to logout any more.
      expect((await logoutWithHint(before.id_token as string)).status).toBe(400);

      // The new key signs at once; its tokens live.
      const after = await password('kim');
      expect(decodeProtectedHeader(after.access_token).kid).toBe(created?.kid);
      expect(await liveness(after.access_token)).toEqual(LIVE);

      const [event] = (await events('key.retired')).filter(
        (e) => e.type === 'key.retired' && e.details.kid === kid,
      );
      expect(event).toMatchObject({
        actor: { kind: 'api-key' },
        details: { kid, created: created?.kid, trigger: 'admin' },
      });
    });

    it('takes a key a rotation retired (still published) out of JWKS at once, unlike the rotation', async () => {
      const token = await password('lee');
      const old = decodeProtectedHeader(token.access_token).kid as string;
      await admin.rotateSigningKeys();
      clock.advance(SECOND);
      // Rotation keeps the old key published: its tokens verify.
      const keys = async () =>
        ((await (await fetch(`${t.issuer}/keys`)).json()) as { keys: Array<{ kid: string }> }).keys.map(
          (k) => k.kid,
        );
      expect(await keys()).toContain(old);
      expect(await liveness(token.access_token)).toEqual(LIVE);
      // Another key signs: no rotate needed.
      const { retired, created } = await admin.retireSigningKey(old);
      expect([retired.state, created]).toEqual(['expired', null]);
      expect(await keys()).not.toContain(old);
      expect(await liveness(token.access_token)).toEqual(DEAD);
      const again = await httpError(admin.retireSigningKey(old));
      expect([again.status, again.problem?.code]).toEqual([404, 'signing_key_not_found']);
    });

    it('answers hostile kids and bodies with 4xx problems', async () => {
      const cases: Array<[string, RequestInit, number, string]> = [
        ['/admin/v1/signing-keys/no-such-kid/retire', { method: 'POST' }, 404, 'signing_key_not_found'],
        ['/admin/v1/signing-keys/..%2F..%2Fetc/retire', { method: 'POST' }, 400, 'invalid_signing_key'],
        // Longer than any path parameter may be (fastify's 100 characters).
        [`/admin/v1/signing-keys/${'k'.repeat(129)}/retire`, { method: 'POST' }, 414, 'invalid_url'],
        ['/admin/v1/signing-keys/a.b%20c/retire', { method: 'POST' }, 400, 'invalid_signing_key'],
        // Not UTF-8: refused before any route.
        ['/admin/v1/signing-keys/%00%FF/retire', { method: 'POST' }, 400, 'invalid_url'],
        [
          '/admin/v1/signing-keys/abc/retire',
          { method: 'POST', body: '{"rotate":"yes"}', headers: { 'content-type': 'application/json' } },
          400,
          'invalid_signing_key',
        ],
        [
          '/admin/v1/signing-keys/abc/retire',
          { method: 'POST', body: '{"rotate":true,"x":1}', headers: { 'content-type': 'application/json' } },
          400,
          'invalid_signing_key',
        ],
      ];
      for (const [path, init, status, code] of cases) {
        const response = await raw(path, init);
        const body = (await response.json()) as { code?: string };
        expect([path.slice(0, 60), response.status, body.code]).toEqual([path.slice(0, 60), status, code]);
      }
    });
  });

  describe('not-before (revoke everything issued before an instant)', () => {
    it('per user: the user’s access, refresh and ID tokens are refused everywhere; others’ and later ones live', async () => {
      const kim = await password('kim');
      const lee = await password('lee');
      clock.advance(SECOND);
      const asked = clock.now();
      const inForce = await admin.setNotBefore({ scope: 'user', subject: 'KIM' });
      expect(inForce.scope).toBe('user');
      expect(Date.parse(inForce.notBefore)).toBeGreaterThanOrEqual(asked);
      expect(Date.parse(inForce.notBefore)).toBeLessThanOrEqual(clock.now());
      expect(await liveness(kim.access_token)).toEqual(DEAD);
      expect((await idgate.introspectToken({ token: kim.refresh_token as string, ...cli })).active).toBe(
        false,
      );
      expect(await refreshFails(kim.refresh_token as string)).toBe(true);
      expect((await logoutWithHint(kim.id_token as string)).status).toBe(400);
      expect(await liveness(lee.access_token)).toEqual(LIVE);
      expect(await refreshFails(lee.refresh_token as string)).toBe(false);
      // Issued in a later second: lives.
      clock.advance(SECOND);
      const fresh = await password('kim');
      expect(await liveness(fresh.access_token)).toEqual(LIVE);
      expect(await refreshFails(fresh.refresh_token as string)).toBe(false);
    });

    it('per client: that client’s tokens are refused, another client’s live', async () => {
      const mine = await password('max', other);
      const theirs = await password('max', cli);
      clock.advance(SECOND);
      await admin.setNotBefore({ scope: 'client', subject: other.clientId });
      expect(await liveness(mine.access_token, other)).toEqual(DEAD);
      expect(await refreshFails(mine.refresh_token as string, other)).toBe(true);
      expect(await liveness(theirs.access_token)).toEqual(LIVE);
    });

    it('globally: every token and browser session before it is refused; a sign-in after it works', async () => {
      const web = await webApplication(asApp(), 'Web');
      const agent = browser(asApp());
      const signedIn = await signInTo(web, agent, { username: 'ned', password: PASSWORD });
      expect(signedIn.sawLogin).toBe(true);
      const ned = await password('ned');
      clock.advance(SECOND);
      // An instant in the past, given explicitly: tokens since then stay.
      const past = new Date(clock.now() - 60 * SECOND).toISOString();
      expect((await admin.setNotBefore({ scope: 'global', before: past })).notBefore).toBe(past);
      expect(await liveness(ned.access_token)).toEqual(LIVE);
      // A not-before is only ever raised: now.
      const now = (await admin.setNotBefore({ scope: 'global' })).notBefore;
      expect(Date.parse(now)).toBeGreaterThan(Date.parse(past));
      expect((await admin.setNotBefore({ scope: 'global', before: past })).notBefore).toBe(now);
      // A minute ahead at most (another machine's clock), and then it counts as now.
      const ahead = new Date(clock.now() + 30 * SECOND).toISOString();
      expect(
        Date.parse((await admin.setNotBefore({ scope: 'global', before: ahead })).notBefore),
      ).toBeLessThan(Date.parse(ahead));
      expect(await liveness(ned.access_token)).toEqual(DEAD);
      expect(await liveness(signedIn.tokens.access_token, web)).toEqual(DEAD);
      expect(await refreshFails(signedIn.tokens.refresh_token as string, web)).toBe(true);
      // The browser's session is over: the next authorization asks for a password again.
      clock.advance(SECOND);
      const again = await signInTo(web, agent, { username: 'ned', password: PASSWORD });
      expect(again.sawLogin).toBe(true);
      expect(await liveness(again.tokens.access_token, web)).toEqual(LIVE);

      const listed = (await admin.listNotBefore()).items;
      expect(listed.map((n) => n.scope)).toEqual(['global', 'client', 'user']);
      const recorded = await events('tokens.revoked-before');
      expect(recorded.map((e) => e.type === 'tokens.revoked-before' && e.details.scope)).toEqual([
        'user',
        'client',
        'global',
        'global',
        'global',
        'global',
      ]);
    });

    it('answers hostile input with 400 or 404 problems, never 5xx', async () => {
      const future = new Date(clock.now() + 3600 * SECOND).toISOString();
      const cases: Array<[unknown, number, string]> = [
        [{ scope: 'global', before: future }, 400, 'invalid_not_before'],
        [{ scope: 'global', before: '9999-12-31T23:59:59Z' }, 400, 'invalid_not_before'],
        [{ scope: 'global', before: 'yesterday' }, 400, 'invalid_not_before'],
        [{ scope: 'global', before: '2026-13-45T25:61:00Z' }, 400, 'invalid_not_before'],
        [{ scope: 'global', before: 1700000000 }, 400, 'invalid_not_before'],
        [{ scope: 'global', subject: 'x' }, 400, 'invalid_not_before'],
        [{ scope: 'user' }, 400, 'invalid_not_before'],
        [{ scope: 'realm' }, 400, 'invalid_not_before'],
        [{ scope: 'user', subject: 'x'.repeat(300) }, 400, 'invalid_not_before'],
        [{ scope: 'user', subject: 'nobody' }, 404, 'user_not_found'],
        [{ scope: 'client', subject: 'cl_nobody' }, 404, 'client_not_found'],
        [[], 400, 'invalid_not_before'],
        ['{', 400, 'invalid_body'],
      ];
      for (const [body, status, code] of cases) {
        const response = await raw('/admin/v1/not-before', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        });
        const problem = (await response.json()) as { code?: string };
        expect([body, response.status, problem.code]).toEqual([body, status, code]);
      }
      const text = await raw('/admin/v1/not-before', { method: 'POST', body: 'scope=global' });
      expect(text.status).toBe(415);
    });
  });

  describe("a client's sessions and grants", () => {
    it('lists them a page at a time, revokes one and then all, and ends the sessions that signed in to it', async () => {
      clock.advance(SECOND);
      const app = asApp();
      const wiki = await webApplication(app, 'Wiki');
      const agent = browser(app);
      const session = await signInTo(wiki, agent, { username: 'lee', password: PASSWORD });
      const viaPassword = [await password('kim', other), await password('lee', other)];

      const first = await admin.listClientGrants(other.clientId, { limit: 1 });
      expect(first.items).toHaveLength(1);
      expect(first.nextCursor).not.toBeNull();
      const second = await admin.listClientGrants(other.clientId, {
        limit: 1,
        cursor: first.nextCursor as string,
      });
      expect(second.items.map((g) => g.clientId)).toEqual([other.clientId]);
      const sid = (token: string) => decodeJwt(token).sid as string;
      const all = (await admin.listClientGrants(other.clientId)).items.map((g) => g.id);
      expect(all).toEqual(expect.arrayContaining(viaPassword.map((v) => sid(v.access_token))));

      await admin.revokeClientGrant(other.clientId, sid(viaPassword[0]?.access_token as string));
      expect(await liveness(viaPassword[0]?.access_token as string, other)).toEqual(DEAD);
      expect(await liveness(viaPassword[1]?.access_token as string, other)).toEqual(LIVE);
      const wrongClient = await httpError(
        admin.revokeClientGrant(cli.clientId, sid(viaPassword[1]?.access_token as string)),
      );
      expect([wrongClient.status, wrongClient.problem?.code]).toEqual([404, 'grant_not_found']);
      expect((await admin.revokeClientGrants(other.clientId)).revoked).toBeGreaterThan(0);
      expect(await liveness(viaPassword[1]?.access_token as string, other)).toEqual(DEAD);
      expect((await admin.listClientGrants(other.clientId)).items).toEqual([]);

      const sessions = (await admin.listClientSessions(wiki.clientId)).items;
      expect(sessions.map((s) => [s.userId, s.clients.map((c) => c.name)])).toEqual([
        [expect.any(String), ['Wiki']],
      ]);
      expect(await admin.revokeClientSessions(wiki.clientId)).toEqual({ ended: 1, revokedGrants: 1 });
      expect(await liveness(session.tokens.access_token, wiki)).toEqual(DEAD);
      expect((await admin.listClientSessions(wiki.clientId)).items).toEqual([]);
      expect((await signInTo(wiki, agent, { username: 'lee', password: PASSWORD })).sawLogin).toBe(true);

      for (const [path, method, status, code] of [
        ['/admin/v1/clients/cl_nobody/grants', 'GET', 404, 'client_not_found'],
        ['/admin/v1/clients/cl_nobody/sessions', 'DELETE', 404, 'client_not_found'],
        [`/admin/v1/clients/${other.clientId}/grants?limit=0`, 'GET', 400, 'invalid_grant_id'],
        [`/admin/v1/clients/${other.clientId}/grants?cursor=%22%3E`, 'GET', 400, 'invalid_grant_id'],
        [`/admin/v1/clients/${other.clientId}/sessions?cursor=eyJ4IjoxfQ`, 'GET', 400, 'invalid_session'],
        [`/admin/v1/clients/${other.clientId}/grants/..%2F..`, 'DELETE', 400, 'invalid_grant_id'],
      ] as const) {
        const response = await raw(path, { method });
        expect([path, response.status, ((await response.json()) as { code: string }).code]).toEqual([
          path,
          status,
          code,
        ]);
      }
    });
  });

  describe('blocked source addresses', () => {
    it('lists an address blocked after failed sign-ins, lifts it, and refuses what is not an address', async () => {
      clock.advance(3600 * SECOND);
      for (const username of ['a1', 'a2', 'a3'])
        expect(
          await idgate.passwordGrant({ ...cli, username, password: 'wrong' }).then(
            () => 200,
            (e: IdgateHttpError) => e.status,
          ),
        ).toBe(400);
      const blocked = await idgate.passwordGrant({ ...cli, username: 'kim', password: PASSWORD }).then(
        () => 200,
        (e: IdgateHttpError) => e.status,
      );
      expect(blocked).toBe(429);
      const { items } = await admin.listBlockedAddresses();
      expect(items).toEqual([
        // The refused attempt counts too: an ongoing attack keeps the block in place.
        { address: '127.0.0.1', channel: 'grant', failures: 4, blockedUntil: expect.any(String) },
      ]);
      expect(await admin.liftAddressBlock('127.0.0.1')).toEqual({ lifted: ['127.0.0.1'] });
      expect((await admin.listBlockedAddresses()).items).toEqual([]);
      expect((await password('kim')).access_token).toEqual(expect.any(String));
      // Blocked again, then everything lifted at once.
      for (const username of ['b1', 'b2', 'b3'])
        await idgate.passwordGrant({ ...cli, username, password: 'wrong' }).catch(() => undefined);
      expect((await admin.listBlockedAddresses()).items).toHaveLength(1);
      expect(await admin.liftAddressBlocks()).toEqual({ lifted: ['127.0.0.1'] });
      expect((await password('kim')).access_token).toEqual(expect.any(String));
      const lifts = await events('address.unblocked');
      expect(
        lifts.map((e) => e.type === 'address.unblocked' && [e.details.all, e.details.addresses]),
      ).toEqual([
        [false, ['127.0.0.1']],
        [true, ['127.0.0.1']],
      ]);

      const nul = await raw('/admin/v1/blocked-addresses/%00', { method: 'DELETE' });
      expect(nul.status).toBe(404);
      for (const address of ['not-an-address', '999.1.1.1', 'a'.repeat(100), '1.2.3.4%2F8', '%3Cscript%3E']) {
        const response = await raw(`/admin/v1/blocked-addresses/${address}`, { method: 'DELETE' });
        expect([
          address.slice(0, 20),
          response.status,
          ((await response.json()) as { code: string }).code,
        ]).toEqual([address.slice(0, 20), 400, 'invalid_address']);
      }
      expect(await admin.liftAddressBlock('2001:db8::1')).toEqual({ lifted: [] });
    });
  });
});
