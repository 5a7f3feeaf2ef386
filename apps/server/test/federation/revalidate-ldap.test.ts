import { Attribute, Change, type Client } from 'ldapts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import {
  addIdentityProvider,
  expectRefreshesEndPastMaxStaleness,
  reviewedGroups,
  type Tokens,
} from '../helpers/federation.js';
import { startTestServer, type TestServer, testClock } from '../helpers/server.js';
import {
  asManager,
  corpLdapProvider,
  GROUPS_DN,
  hasSlapd,
  type Slapd,
  startSlapd,
  userDn,
} from '../helpers/slapd.js';

const INTERVAL_MS = 900_000;

describe.skipIf(!hasSlapd).each(testDatabaseUrls())(
  're-validation of LDAP identities on refresh on $name',
  (kind) => {
    const clock = testClock();
    let t: TestServer;
    let slapd: Slapd;
    let client: { clientId: string; clientSecret: string };
    let reviewKey: string;
    let adminKey: string;

    beforeAll(async () => {
      slapd = await startSlapd();
      t = await startTestServer(kind, {}, { clock });
      client = await t.addClient({
        grants: ['password', 'refresh_token'],
        trusted: true,
        scopes: ['openid', 'groups', 'offline_access'],
      });
      reviewKey = await t.addApiKey(['tokenreview']);
      adminKey = await t.addApiKey(['admin']);
      await addIdentityProvider(t, corpLdapProvider(slapd));
    });
    afterAll(async () => {
      await t?.close();
      await slapd?.stop();
    });

    const directory = (change: (ldap: Client) => Promise<unknown>) => asManager(slapd, change);

    const token = async (form: Record<string, string>) => {
      const response = await fetch(`${t.issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`,
        },
        body: new URLSearchParams(form),
      });
      return { status: response.status, body: (await response.json()) as Record<string, string> };
    };
    const refresh = (refreshToken: string) =>
      token({ grant_type: 'refresh_token', refresh_token: refreshToken });

    /** A password grant through the directory, which must succeed. */
    const directorySignIn = async (username: string, password: string) => {
      const signIn = await token({
        grant_type: 'password',
        provider: 'corp-ldap',
        username,
        password,
        scope: 'openid groups offline_access',
      });
      expect(signIn.status).toBe(200);
      return signIn;
    };

    const groupsOf = (accessToken: string) => reviewedGroups(t.issuer, reviewKey, accessToken);

    it('a removed group membership, then a deleted entry, reach the next refresh after the interval', async () => {
      const signIn = await directorySignIn('bob', 'bob-pass');
      expect(await groupsOf(signIn.body.access_token as string)).toEqual(['corp-ldap:devs']);

      await directory((ldap) =>
        ldap.modify(`cn=devs,${GROUPS_DN}`, [
          new Change({
            operation: 'delete',
            modification: new Attribute({ type: 'member', values: [userDn('bob')] }),
          }),
        ]),
      );
      const early = await refresh(signIn.body.refresh_token as string);
      expect(early.status).toBe(200);
      expect(await groupsOf(early.body.access_token as string)).toEqual(['corp-ldap:devs']);

      clock.advance(INTERVAL_MS + 1000);
      const later = await refresh(early.body.refresh_token as string);
      expect(later.status).toBe(200);
      expect(await groupsOf(later.body.access_token as string)).toEqual([]);

      await directory((ldap) => ldap.del(userDn('bob')));
      clock.advance(INTERVAL_MS + 1000);
      const gone = await refresh(later.body.refresh_token as string);
      expect(gone).toEqual({
        status: 400,
        body: {
          error: 'invalid_grant',
          error_description: 'the identity provider no longer knows this account',
        },
      });
      expect(await groupsOf(later.body.access_token as string)).toBe('not authenticated');
    });

    it('while the directory is unreachable, refreshes go on for a day after it last vouched, then the grant is revoked', async () => {
      await expectRefreshesEndPastMaxStaleness({
        t,
        clock,
        reviewKey,
        adminKey,
        upstream: slapd,
        signIn: async () => (await directorySignIn('alice', 'alice-pass')).body as unknown as Tokens,
        refresh,
      });
    });

    it('keeps the grant when the directory cannot be reached', async () => {
      const signIn = await directorySignIn('alice', 'alice-pass');
      await slapd.stop();
      clock.advance(INTERVAL_MS + 1000);
      const refreshed = await refresh(signIn.body.refresh_token as string);
      expect(refreshed.status).toBe(200);
      expect(await groupsOf(refreshed.body.access_token as string)).toEqual([
        'corp-ldap:admins',
        'corp-ldap:devs',
      ]);
      expect(t.logs.some((line) => line.includes('identity provider unreachable on refresh'))).toBe(true);
      expect(t.logs.join('\n')).not.toContain(slapd.managerPassword);
    });
  },
);
