import { DEVICE_CODE_GRANT_TYPE } from '@idgate/schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserGrants } from '../helpers/browser-grants.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addUpstreamProvider } from '../helpers/federation.js';
import { startTestServer, type TestServer, testClock } from '../helpers/server.js';
import { startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream-oidc.js';
import { UserAgent } from '../helpers/user-agent.js';

const INTERVAL_MS = 900_000;
const RP = 'https://wiki.example.test/cb';
const GONE = {
  error: 'invalid_grant',
  error_description: 'the identity provider no longer knows this account',
};

describe.each(testDatabaseUrls())(
  're-validation of browser grants through an OpenID Connect upstream on $name',
  (kind) => {
    const clock = testClock();
    let t: TestServer;
    let upstream: UpstreamOidc;
    let rotating: UpstreamOidc;
    let flows: ReturnType<typeof browserGrants>;

    beforeAll(async () => {
      t = await startTestServer(kind, {}, { clock });
      upstream = await startUpstreamOidc({
        redirectUris: [`${t.issuer}/callback/corp`],
        refreshTokens: true,
      });
      rotating = await startUpstreamOidc({
        redirectUris: [`${t.issuer}/callback/rotating`],
        refreshTokens: true,
        rotateRefreshTokens: true,
      });
      const web = await t.addClient({
        name: 'Wiki',
        grants: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'groups', 'offline_access'],
        redirectUris: [RP],
      });
      const device = await t.addClient({
        name: 'kubectl',
        public: true,
        grants: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
        scopes: ['openid', 'groups', 'offline_access'],
      });
      await addUpstreamProvider(t, upstream, {
        displayName: 'Corp SSO',
        scopes: ['openid', 'profile', 'email', 'groups'],
      });
      await addUpstreamProvider(t, rotating, {
        name: 'rotating',
        displayName: 'Rotating SSO',
        scopes: ['openid', 'profile', 'email', 'groups'],
      });
      flows = browserGrants(t, {
        reviewKey: await t.addApiKey(['tokenreview']),
        web: { ...web, redirectUri: RP },
        device,
      });
    });
    afterAll(async () => {
      await rotating?.stop();
      await upstream?.stop();
      await t?.close();
    });

    const setAccount = (sub: string, groups: string[]) =>
      upstream.accounts.set(sub, { sub, preferred_username: sub, email: `${sub}@corp.test`, groups });
    /** The next browser sign-in at the upstream is `sub`'s. */
    const upstreamSignsIn = (sub: string, groups: string[]) => {
      setAccount(sub, groups);
      upstream.nextAccount = sub;
    };
    const tokenRequests = () => upstream.requests.filter((request) => request === 'POST /token').length;

    it('authorization code: the grant carries the identity its session recorded, and a refresh after the interval brings the groups of now', async () => {
      upstreamSignsIn('b-1', ['engineering']);
      const agent = new UserAgent();
      const first = await flows.codeFlow(agent, { via: 'Corp SSO' });
      const grant = await flows.grant(first);
      expect(grant?.upstream).toMatchObject({ provider: 'corp', subject: 'b-1' });
      // The upstream refresh token, sealed: never at rest in plain text.
      expect(grant?.upstream?.sealedState).toMatch(/^v1\.[\w-]+\.[\w-]+$/);
      const session = await t.server.services.storage.sessions.findById(grant?.sessionId as string);
      expect(session?.upstream).toStrictEqual(grant?.upstream);
      expect(await flows.groupsOf(first.access_token)).toEqual(['corp:engineering']);

      setAccount('b-1', ['platform', 'sre']);
      const before = upstream.requests.length;
      clock.advance(INTERVAL_MS - 1000);
      const soon = await flows.refresh(first);
      expect(soon.status).toBe(200);
      expect(upstream.requests.length).toBe(before);
      expect(await flows.groupsOf(soon.tokens?.access_token as string)).toEqual(['corp:engineering']);

      clock.advance(2000);
      const asked = tokenRequests();
      const later = await flows.refresh(soon.tokens as NonNullable<typeof soon.tokens>);
      expect(later.status).toBe(200);
      expect(tokenRequests()).toBe(asked + 1);
      expect(await flows.groupsOf(later.tokens?.access_token as string)).toEqual([
        'corp:platform',
        'corp:sre',
      ]);
    });

    it('authorization code: refused and revoked once the upstream no longer knows the person', async () => {
      upstreamSignsIn('b-2', ['engineering']);
      const tokens = await flows.codeFlow(new UserAgent(), { via: 'Corp SSO' });
      upstream.accounts.delete('b-2');
      clock.advance(INTERVAL_MS + 1000);
      const refused = await flows.refresh(tokens);
      expect(refused).toMatchObject({ status: 400, body: GONE });
      expect((await flows.grant(tokens))?.revokedAt).not.toBeNull();
      expect(await flows.groupsOf(tokens.access_token)).toBe('not authenticated');
    });

    it('a second, silent authorization from the same session (prompt=none) hands on the same record, re-checked at once when the sign-in is older than the interval', async () => {
      upstreamSignsIn('b-3', ['engineering']);
      const agent = new UserAgent();
      const first = await flows.codeFlow(agent, { via: 'Corp SSO' });
      const signedIn = await flows.grant(first);
      clock.advance(INTERVAL_MS + 1000);
      setAccount('b-3', ['sre']);

      const asked = upstream.requests.length;
      const second = await flows.silentCodeFlow(agent);
      // Single sign-on: no trip upstream for the code itself.
      expect(upstream.requests.length).toBe(asked);
      const grant = await flows.grant(second);
      expect(grant?.id).not.toBe(signedIn?.id);
      expect(grant?.sessionId).toBe(signedIn?.sessionId);
      // The session's record as the sign-in made it: vouched for back then, not now.
      expect(grant?.upstream).toStrictEqual(signedIn?.upstream);

      const refreshes = tokenRequests();
      const refreshed = await flows.refresh(second);
      expect(refreshed.status).toBe(200);
      expect(tokenRequests()).toBe(refreshes + 1);
      expect(await flows.groupsOf(refreshed.tokens?.access_token as string)).toEqual(['corp:sre']);
      const vouched = (await flows.grant(second))?.upstream?.validatedAt.getTime() ?? 0;
      expect(vouched).toBeGreaterThan((signedIn?.upstream?.validatedAt.getTime() ?? 0) + INTERVAL_MS);
    });

    it('device flow: the approval hands the sign-in on to the grant; groups follow upstream, then the grant ends with the account', async () => {
      upstreamSignsIn('b-4', ['engineering']);
      const tokens = await flows.deviceFlow(new UserAgent(), { via: 'Corp SSO' });
      const grant = await flows.grant(tokens);
      expect(grant?.upstream).toMatchObject({
        provider: 'corp',
        subject: 'b-4',
        sealedState: expect.any(String),
      });
      const session = await t.server.services.storage.sessions.findById(grant?.sessionId as string);
      expect(session?.upstream).toStrictEqual(grant?.upstream);

      setAccount('b-4', ['sre']);
      clock.advance(INTERVAL_MS + 1000);
      const refreshed = await flows.refresh(tokens, 'device');
      expect(refreshed.status).toBe(200);
      expect(await flows.groupsOf(refreshed.tokens?.access_token as string)).toEqual(['corp:sre']);

      upstream.accounts.delete('b-4');
      clock.advance(INTERVAL_MS + 1000);
      const refused = await flows.refresh(refreshed.tokens as NonNullable<typeof refreshed.tokens>, 'device');
      expect(refused).toMatchObject({ status: 400, body: GONE });
      expect((await flows.grant(tokens))?.revokedAt).not.toBeNull();
      expect(await flows.groupsOf(refreshed.tokens?.access_token as string)).toBe('not authenticated');
    });

    it("device flow in a browser already signed in: the session's record goes to the device's grant", async () => {
      upstreamSignsIn('b-5', ['engineering']);
      const agent = new UserAgent();
      const web = await flows.codeFlow(agent, { via: 'Corp SSO' });
      const asked = upstream.requests.length;
      const device = await flows.deviceFlow(agent);
      expect(upstream.requests.length).toBe(asked);
      const webGrant = await flows.grant(web);
      const deviceGrant = await flows.grant(device);
      expect(deviceGrant?.sessionId).toBe(webGrant?.sessionId);
      expect(deviceGrant?.upstream).toStrictEqual(webGrant?.upstream);

      upstream.accounts.delete('b-5');
      clock.advance(INTERVAL_MS + 1000);
      expect(await flows.refresh(device, 'device')).toMatchObject({ status: 400, body: GONE });
      expect((await flows.grant(device))?.revokedAt).not.toBeNull();
    });

    it('keeps a browser grant when the upstream cannot be reached, answering from what is known', async () => {
      upstreamSignsIn('b-6', ['engineering']);
      const tokens = await flows.codeFlow(new UserAgent(), { via: 'Corp SSO' });
      await upstream.stop();
      clock.advance(INTERVAL_MS + 1000);
      const refreshed = await flows.refresh(tokens);
      expect(refreshed.status).toBe(200);
      expect(await flows.groupsOf(refreshed.tokens?.access_token as string)).toEqual(['corp:engineering']);
      expect((await flows.grant(tokens))?.revokedAt).toBeNull();
      expect(t.logs.some((line) => line.includes('identity provider unreachable on refresh'))).toBe(true);
    });

    it('an upstream that rotates refresh tokens: every grant of the session goes on with the token as rotated', async () => {
      rotating.accounts.set('r-1', { sub: 'r-1', preferred_username: 'r-1', groups: ['engineering'] });
      rotating.nextAccount = 'r-1';
      const agent = new UserAgent();
      const first = await flows.codeFlow(agent, { via: 'Rotating SSO' });
      const second = await flows.silentCodeFlow(agent);
      const signedIn = (await flows.grant(second))?.upstream?.sealedState;
      rotating.accounts.set('r-1', { sub: 'r-1', preferred_username: 'r-1', groups: ['sre'] });
      clock.advance(INTERVAL_MS + 1000);

      // The first grant's check spends the sign-in's upstream token and gets a new one...
      const a = await flows.refresh(first);
      expect(a.status).toBe(200);
      const rotated = (await flows.grant(first))?.upstream?.sealedState;
      expect(rotated).not.toBe(signedIn);
      // ...which the second grant and the session now hold, so the second grant's check succeeds
      // (with the spent one, the upstream would refuse it, and revoke its whole grant).
      const b = await flows.refresh(second);
      expect(b.status).toBe(200);
      expect((await flows.grant(second))?.revokedAt).toBeNull();
      expect(await flows.groupsOf(b.tokens?.access_token as string)).toEqual(['rotating:sre']);
      expect((await flows.grant(second))?.upstream?.sealedState).not.toBe(signedIn);

      // A later code from the session hands on the newest token, and every grant keeps working.
      const third = await flows.silentCodeFlow(agent);
      const thirdGrant = await flows.grant(third);
      const session = await t.server.services.storage.sessions.findById(thirdGrant?.sessionId as string);
      expect(thirdGrant?.upstream?.sealedState).toBe(session?.upstream?.sealedState);
      clock.advance(INTERVAL_MS + 1000);
      for (const refreshed of [a.tokens, b.tokens, third]) {
        expect((await flows.refresh(refreshed as NonNullable<typeof refreshed>)).status).toBe(200);
      }
    });
  },
);
