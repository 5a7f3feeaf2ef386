import { DEVICE_CODE_GRANT_TYPE, DeviceAuthorizationResponse } from '@idgate/schema';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addIdentityProvider, addUpstreamProvider } from '../helpers/federation.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { corpLdapProvider, hasSlapd, type Slapd, startSlapd } from '../helpers/slapd.js';
import { startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream-oidc.js';
import { readForm, UserAgent } from '../helpers/user-agent.js';

describe.skipIf(!hasSlapd).each(testDatabaseUrls())(
  'the device verification page signs in through external providers on $name',
  (kind) => {
    let t: TestServer;
    let upstream: UpstreamOidc;
    let slapd: Slapd;
    let kubectl: { clientId: string };

    beforeAll(async () => {
      slapd = await startSlapd();
      t = await startTestServer(kind);
      upstream = await startUpstreamOidc({ redirectUris: [`${t.issuer}/callback/corp`] });
      upstream.accounts.set('u-300', {
        sub: 'u-300',
        preferred_username: 'quinn',
        email: 'quinn@corp.test',
        email_verified: true,
        groups: ['sre'],
      });
      upstream.nextAccount = 'u-300';
      kubectl = await t.addClient({
        name: 'kubectl',
        public: true,
        grants: [DEVICE_CODE_GRANT_TYPE, 'refresh_token'],
        scopes: ['openid', 'groups', 'offline_access'],
      });
      await addUpstreamProvider(t, upstream, {
        displayName: 'Corp SSO',
        scopes: ['openid', 'profile', 'email', 'groups'],
      });
      await addIdentityProvider(t, corpLdapProvider(slapd, { displayName: 'Corporate directory' }));
    });
    afterAll(async () => {
      await upstream?.stop();
      await t?.close();
      await slapd?.stop();
    });

    async function startDevice() {
      const response = await fetch(`${t.issuer}/device_authorization`, {
        method: 'POST',
        body: new URLSearchParams({ client_id: kubectl.clientId, scope: 'openid groups offline_access' }),
      });
      return DeviceAuthorizationResponse.parse(await response.json());
    }
    async function poll(deviceCode: string) {
      const response = await fetch(`${t.issuer}/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: DEVICE_CODE_GRANT_TYPE,
          device_code: deviceCode,
          client_id: kubectl.clientId,
        }),
      });
      return (await response.json()) as Record<string, unknown>;
    }
    /** Follows redirects (through the upstream too) until a page answers. */
    async function follow(
      agent: UserAgent,
      response: Response,
    ): Promise<{ response: Response; html: string }> {
      let current = response;
      for (let hop = 0; hop < 15 && current.headers.get('location') !== null; hop++) {
        current = await agent.request(
          new URL(current.headers.get('location') as string, current.url || t.issuer),
        );
      }
      return { response: current, html: await current.text() };
    }
    async function toLoginPage(agent: UserAgent, userCode: string) {
      const entered = await agent.request(`${t.issuer}/device`, { form: { user_code: userCode } });
      const login = await follow(agent, entered);
      expect(login.html).toContain('name="password"');
      return login.html;
    }
    async function allow(agent: UserAgent, confirmHtml: string) {
      const { action, fields } = readForm(confirmHtml);
      const done = await agent.request(new URL(action, t.issuer), { form: { ...fields, decision: 'allow' } });
      expect(await done.text()).toContain('You may return to your device');
    }

    it('through an upstream OpenID Connect provider: the callback lands on the confirmation', async () => {
      const device = await startDevice();
      const agent = new UserAgent();
      const login = await toLoginPage(agent, device.user_code);
      const link = /<a href="([^"]+)">Sign in with Corp SSO<\/a>/.exec(login)?.[1];
      expect(link).toBeDefined();
      const confirm = await follow(
        agent,
        await agent.request(new URL((link as string).replace(/&amp;/g, '&'), t.issuer)),
      );
      expect(confirm.response.url).toContain(`${t.issuer}/device?interaction=`);
      expect(confirm.html).toContain('Allow kubectl on your device?');
      expect(confirm.html).toContain('Signed in as <strong>quinn</strong>');
      await allow(agent, confirm.html);
      const tokens = await poll(device.device_code);
      const user = await t.server.services.storage.users.findByUsername('quinn');
      expect(decodeJwt(tokens.access_token as string)).toMatchObject({
        sub: user?.id,
        scope: 'openid groups offline_access',
      });
    });

    it('through LDAP: the directory password on the login form, then the confirmation', async () => {
      const device = await startDevice();
      const agent = new UserAgent();
      const login = await toLoginPage(agent, device.user_code);
      expect(login).toContain('Corporate directory');
      const { action, fields } = readForm(login);
      const all = () => t.server.services.storage.auditEvents.list({ limit: 1000 });
      const before = (await all()).length;
      const confirm = await follow(
        agent,
        await agent.request(new URL(action, t.issuer), {
          form: { ...fields, provider: 'corp-ldap', username: 'alice', password: 'alice-pass' },
        }),
      );
      // The bind is an upstream sign-in, as a callback is.
      const alice = await t.server.services.storage.users.findByUsername('alice');
      // Both name the client of the device authorization the sign-in is for.
      expect((await all()).slice(before).map((e) => [e.type, e.subject, e.clientId, e.details])).toEqual([
        ['upstream.sign-in', alice?.id, kubectl.clientId, { provider: 'corp-ldap', reason: null }],
        [
          'sign-in.succeeded',
          alice?.id,
          kubectl.clientId,
          {
            method: 'ldap',
            provider: 'corp-ldap',
            channel: 'browser',
            username: 'alice',
            reason: null,
            groupsDropped: 0,
          },
        ],
      ]);
      expect(confirm.html).toContain('Allow kubectl on your device?');
      expect(confirm.html).toContain('Signed in as <strong>alice</strong>');
      await allow(agent, confirm.html);
      const tokens = await poll(device.device_code);
      expect(tokens).toMatchObject({ token_type: 'Bearer' });
      expect(tokens.refresh_token).toEqual(expect.any(String));
      const claims = decodeJwt(tokens.id_token as string);
      expect(claims.groups).toEqual(expect.arrayContaining(['corp-ldap:admins', 'corp-ldap:devs']));
    });
  },
);
