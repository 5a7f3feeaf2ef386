import { DEVICE_CODE_GRANT_TYPE } from '@idgate/schema';
import { Attribute, Change, type Client } from 'ldapts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserGrants } from '../helpers/browser-grants.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addIdentityProvider } from '../helpers/federation.js';
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
import { UserAgent } from '../helpers/user-agent.js';

const INTERVAL_MS = 900_000;
const RP = 'https://wiki.example.test/cb';
const LOCAL_PASSWORD = 'correct-horse-battery-staple-7';
const GONE = {
  error: 'invalid_grant',
  error_description: 'the identity provider no longer knows this account',
};

describe.skipIf(!hasSlapd).each(testDatabaseUrls())(
  're-validation of browser grants from the login form (LDAP, local) on $name',
  (kind) => {
    const clock = testClock();
    let t: TestServer;
    let slapd: Slapd;
    let flows: ReturnType<typeof browserGrants>;

    beforeAll(async () => {
      slapd = await startSlapd();
      t = await startTestServer(kind, {}, { clock });
      const web = await t.addClient({
        name: 'Wiki',
        grants: ['authorization_code', 'refresh_token'],
        trusted: true,
        scopes: ['openid', 'groups', 'offline_access'],
        redirectUris: [RP],
      });
      const device = await t.addClient({
        name: 'kubectl',
        public: true,
        grants: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
        scopes: ['openid', 'groups', 'offline_access'],
      });
      await addIdentityProvider(t, corpLdapProvider(slapd, { displayName: 'Corporate directory' }));
      await t.addUser('ursula', LOCAL_PASSWORD, { groups: ['local-team'] });
      flows = browserGrants(t, {
        reviewKey: await t.addApiKey(['tokenreview']),
        web: { ...web, redirectUri: RP },
        device,
      });
    });
    afterAll(async () => {
      await t?.close();
      await slapd?.stop();
    });

    const directory = (change: (ldap: Client) => Promise<unknown>) => asManager(slapd, change);
    const leaveGroup = (group: string, uid: string) =>
      directory((ldap) =>
        ldap.modify(`cn=${group},${GROUPS_DN}`, [
          new Change({
            operation: 'delete',
            modification: new Attribute({ type: 'member', values: [userDn(uid)] }),
          }),
        ]),
      );

    it('authorization code with the directory password: a left group, then a deleted entry, reach the refresh after the interval', async () => {
      const tokens = await flows.codeFlow(new UserAgent(), {
        username: 'bob',
        password: 'bob-pass',
        provider: 'corp-ldap',
      });
      const grant = await flows.grant(tokens);
      expect(grant?.upstream).toMatchObject({ provider: 'corp-ldap' });
      expect(await flows.groupsOf(tokens.access_token)).toEqual(['corp-ldap:devs']);

      await leaveGroup('devs', 'bob');
      const early = await flows.refresh(tokens);
      expect(await flows.groupsOf(early.tokens?.access_token as string)).toEqual(['corp-ldap:devs']);
      clock.advance(INTERVAL_MS + 1000);
      const later = await flows.refresh(early.tokens as NonNullable<typeof early.tokens>);
      expect(later.status).toBe(200);
      expect(await flows.groupsOf(later.tokens?.access_token as string)).toEqual([]);

      await directory((ldap) => ldap.del(userDn('bob')));
      clock.advance(INTERVAL_MS + 1000);
      const refused = await flows.refresh(later.tokens as NonNullable<typeof later.tokens>);
      expect(refused).toMatchObject({ status: 400, body: GONE });
      expect((await flows.grant(tokens))?.revokedAt).not.toBeNull();
      expect(await flows.groupsOf(later.tokens?.access_token as string)).toBe('not authenticated');
    });

    it('device flow with the directory password: the grant re-checks the directory', async () => {
      const tokens = await flows.deviceFlow(new UserAgent(), {
        username: 'alice',
        password: 'alice-pass',
        provider: 'corp-ldap',
      });
      expect((await flows.grant(tokens))?.upstream).toMatchObject({ provider: 'corp-ldap' });
      expect(await flows.groupsOf(tokens.access_token)).toEqual(['corp-ldap:admins', 'corp-ldap:devs']);
      await leaveGroup('devs', 'alice');
      clock.advance(INTERVAL_MS + 1000);
      const refreshed = await flows.refresh(tokens, 'device');
      expect(refreshed.status).toBe(200);
      expect(await flows.groupsOf(refreshed.tokens?.access_token as string)).toEqual(['corp-ldap:admins']);
    });

    it('a local password sign-in in the browser opens grants with no upstream, refreshed as before', async () => {
      const agent = new UserAgent();
      const web = await flows.codeFlow(agent, { username: 'ursula', password: LOCAL_PASSWORD });
      const device = await flows.deviceFlow(agent);
      for (const tokens of [web, device]) {
        const grant = await flows.grant(tokens);
        expect(grant?.upstream).toBeNull();
        const session = await t.server.services.storage.sessions.findById(grant?.sessionId as string);
        expect(session?.upstream).toBeNull();
      }
      clock.advance(INTERVAL_MS + 1000);
      const refreshed = await flows.refresh(web);
      expect(refreshed.status).toBe(200);
      expect(await flows.groupsOf(refreshed.tokens?.access_token as string)).toEqual(['local-team']);
      expect((await flows.refresh(device, 'device')).status).toBe(200);
      expect(t.logs.some((line) => line.includes('identity provider unreachable on refresh'))).toBe(false);
    });
  },
);
