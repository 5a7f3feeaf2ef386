import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import {
  addUpstreamProvider,
  expectRefreshesEndPastMaxStaleness,
  grantIdOf,
  revalidationEvents,
  reviewedGroups,
} from '../helpers/federation.js';
import { startTestServer, type TestServer, testClock } from '../helpers/server.js';
import { startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream-oidc.js';
import { UserAgent } from '../helpers/user-agent.js';

const INTERVAL_MS = 900_000;
/** `federation.revalidateMaxStaleness` by default: a day. */
const MAX_STALENESS_MS = 86_400_000;
/** Far more than a test takes in real time, far less than the interval. */
const MARGIN_MS = 300_000;

describe.each(testDatabaseUrls())(
  're-validation of an OpenID Connect upstream on refresh on $name',
  (kind) => {
    const clock = testClock();
    let t: TestServer;
    let upstream: UpstreamOidc;
    let tokenClient: { clientId: string; clientSecret: string };
    let reviewKey: string;
    let adminKey: string;

    beforeAll(async () => {
      t = await startTestServer(kind, {}, { clock });
      upstream = await startUpstreamOidc({
        redirectUris: [`${t.issuer}/callback/corp`],
        refreshTokens: true,
      });
      tokenClient = await t.addClient({
        name: 'kubectl',
        grants: ['authorization_code', 'refresh_token'],
        trusted: true,
        scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'],
      });
      reviewKey = await t.addApiKey(['tokenreview']);
      adminKey = await t.addApiKey(['admin']);
      await addUpstreamProvider(t, upstream, {
        scopes: ['openid', 'profile', 'email', 'groups'],
        tokenClientId: tokenClient.clientId,
      });
    });
    afterAll(async () => {
      await upstream?.stop();
      await t?.close();
    });

    const setAccount = (sub: string, groups: string[]) =>
      upstream.accounts.set(sub, { sub, preferred_username: sub, email: `${sub}@corp.test`, groups });

    /** A sign-in through the upstream answered as tokens at idgate's callback. */
    async function signInAs(sub: string): Promise<{ access_token: string; refresh_token: string }> {
      upstream.nextAccount = sub;
      const agent = new UserAgent();
      let response = await agent.request(`${t.issuer}/login/corp`);
      for (let hop = 0; hop < 12 && response.headers.get('location') !== null; hop++) {
        response = await agent.request(new URL(response.headers.get('location') as string, response.url));
      }
      expect(response.status).toBe(200);
      return (await response.json()) as { access_token: string; refresh_token: string };
    }

    const refresh = (refreshToken: string) =>
      fetch(`${t.issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${btoa(`${tokenClient.clientId}:${tokenClient.clientSecret}`)}`,
        },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
      });

    const groupsOf = (accessToken: string) => reviewedGroups(t.issuer, reviewKey, accessToken);

    const grantOf = async (accessToken: string) => {
      const payload = JSON.parse(
        atob((accessToken.split('.')[1] ?? '').replace(/-/g, '+').replace(/_/g, '/')),
      );
      return t.server.services.storage.grants.findById(payload.sid as string);
    };

    const tokenRequests = () => upstream.requests.filter((request) => request === 'POST /token').length;

    it('records the upstream identity on the grant, its refresh token sealed', async () => {
      setAccount('u-1', ['engineering']);
      const tokens = await signInAs('u-1');
      const grant = await grantOf(tokens.access_token);
      expect(grant?.upstream).toMatchObject({ provider: 'corp', subject: 'u-1' });
      expect(grant?.upstream?.sealedState).toMatch(/^v1\.[\w-]+\.[\w-]+$/);
      // Vouched for at the sign-in that opened the grant.
      const signedInAgo = (grant?.createdAt.getTime() ?? 0) - (grant?.upstream?.validatedAt.getTime() ?? 0);
      expect(signedInAgo).toBeGreaterThanOrEqual(0);
      expect(signedInAgo).toBeLessThan(5000);
    });

    it('within the interval a refresh asks nothing upstream; after it, new groups reach TokenReview', async () => {
      setAccount('u-2', ['engineering']);
      const first = await signInAs('u-2');
      expect(await groupsOf(first.access_token)).toEqual(['corp:engineering']);
      setAccount('u-2', ['platform', 'sre']);

      const before = upstream.requests.length;
      clock.advance(INTERVAL_MS - 1000);
      const soon = await refresh(first.refresh_token);
      expect(soon.status).toBe(200);
      const soonTokens = (await soon.json()) as { access_token: string; refresh_token: string };
      expect(upstream.requests.length).toBe(before);
      expect(await groupsOf(soonTokens.access_token)).toEqual(['corp:engineering']);

      clock.advance(2000);
      const tokensBefore = tokenRequests();
      const later = await refresh(soonTokens.refresh_token);
      expect(later.status).toBe(200);
      const laterTokens = (await later.json()) as { access_token: string; refresh_token: string };
      expect(tokenRequests()).toBe(tokensBefore + 1);
      expect(await groupsOf(laterTokens.access_token)).toEqual(['corp:platform', 'corp:sre']);
      const grant = await grantOf(laterTokens.access_token);
      expect(grant?.upstream?.validatedAt.getTime()).toBeGreaterThan(
        (grant?.createdAt.getTime() ?? 0) + INTERVAL_MS,
      );

      // The upstream's (possibly rotated) refresh token was kept: the next re-check works too.
      setAccount('u-2', ['sre']);
      clock.advance(INTERVAL_MS + 1000);
      const again = await refresh(laterTokens.refresh_token);
      expect(again.status).toBe(200);
      const againTokens = (await again.json()) as { access_token: string };
      expect(await groupsOf(againTokens.access_token)).toEqual(['corp:sre']);
    });

    it('refuses the refresh and revokes the grant when the upstream no longer knows the person', async () => {
      setAccount('u-3', ['engineering']);
      const tokens = await signInAs('u-3');
      upstream.accounts.delete('u-3');
      clock.advance(INTERVAL_MS + 1000);
      const response = await refresh(tokens.refresh_token);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        error: 'invalid_grant',
        error_description: 'the identity provider no longer knows this account',
      });
      expect((await grantOf(tokens.access_token))?.revokedAt).not.toBeNull();
      expect(await groupsOf(tokens.access_token)).toBe('not authenticated');
    });

    it('two concurrent refreshes of one token when a re-check is due: one asks upstream, both succeed', async () => {
      setAccount('u-5', ['engineering']);
      const tokens = await signInAs('u-5');
      setAccount('u-5', ['platform']);
      clock.advance(INTERVAL_MS + 1000);
      const tokensBefore = tokenRequests();
      const [a, b] = await Promise.all([refresh(tokens.refresh_token), refresh(tokens.refresh_token)]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(tokenRequests()).toBe(tokensBefore + 1);
      expect((await grantOf(tokens.access_token))?.revokedAt).toBeNull();
      // The reuse window answers both with the same successor.
      const [first, second] = (await Promise.all([a.json(), b.json()])) as { refresh_token: string }[];
      expect(first?.refresh_token).toEqual(expect.any(String));
      expect(first?.refresh_token).toBe(second?.refresh_token);
    });

    it('while the upstream is unreachable, refreshes go on for a day after it last vouched; then the grant is revoked, saying since when and why', async () => {
      setAccount('u-6', ['engineering']);
      const tokens = await signInAs('u-6');
      const grantId = grantIdOf(tokens.access_token);
      const vouchedAt = (await grantOf(tokens.access_token))?.upstream?.validatedAt;
      await upstream.down();
      try {
        clock.advance(INTERVAL_MS + 1000);
        const down = await refresh(tokens.refresh_token);
        expect(down.status).toBe(200);
        const downTokens = (await down.json()) as { access_token: string; refresh_token: string };

        clock.advance(MAX_STALENESS_MS - INTERVAL_MS - MARGIN_MS);
        const lastDay = await refresh(downTokens.refresh_token);
        expect(lastDay.status).toBe(200);
        const last = (await lastDay.json()) as { access_token: string; refresh_token: string };
        expect(await groupsOf(last.access_token)).toEqual(['corp:engineering']);

        clock.advance(2 * MARGIN_MS);
        const refused = await refresh(last.refresh_token);
        expect(refused.status).toBe(400);
        expect(await refused.json()).toEqual({
          error: 'invalid_grant',
          error_description: `the identity provider could not confirm the account since ${vouchedAt?.toISOString()}`,
        });
        expect(await groupsOf(last.access_token)).toBe('not authenticated');
        expect(await revalidationEvents(t, adminKey, grantId)).toEqual([
          { outcome: 'success', reason: 'upstream_unavailable' },
          { outcome: 'success', reason: 'upstream_unavailable' },
          { outcome: 'failure', reason: 'upstream_unavailable_too_long' },
        ]);

        // Revoked, not paused: the upstream coming back does not bring the grant back.
        await upstream.up();
        const back = await refresh(last.refresh_token);
        expect(back.status).toBe(400);
        expect(((await back.json()) as { error: string }).error).toBe('invalid_grant');
      } finally {
        await upstream.up();
      }
    });

    it('a re-check the upstream answers, due at once past the limit, confirms the grant again and the day counts from it', async () => {
      setAccount('u-7', ['engineering']);
      await expectRefreshesEndPastMaxStaleness({
        t,
        clock,
        reviewKey,
        adminKey,
        upstream,
        signIn: () => signInAs('u-7'),
        refresh: async (refreshToken) => {
          const response = await refresh(refreshToken);
          return { status: response.status, body: (await response.json()) as Record<string, unknown> };
        },
      });
    });

    it('keeps the grant when the upstream is unreachable, answering from current data, and warns once', async () => {
      setAccount('u-4', ['engineering']);
      const tokens = await signInAs('u-4');
      const grant = await grantOf(tokens.access_token);
      await upstream.stop();
      clock.advance(INTERVAL_MS + 1000);
      const response = await refresh(tokens.refresh_token);
      expect(response.status).toBe(200);
      const next = (await response.json()) as { access_token: string; refresh_token: string };
      expect(await groupsOf(next.access_token)).toEqual(['corp:engineering']);
      const again = await refresh(next.refresh_token);
      expect(again.status).toBe(200);
      const warnings = t.logs.filter(
        (line) =>
          line.includes('identity provider unreachable on refresh') && line.includes(grant?.id ?? '-'),
      );
      expect(warnings).toHaveLength(1);
      expect(t.logs.join('\n')).not.toContain(tokens.refresh_token);
    });
  },
);
