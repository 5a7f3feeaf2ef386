import { createIdgateClient, externalLoginUrl, IdgateHttpError, logoutUrl } from '@idgate/sdk';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addIdentityProvider } from '../helpers/federation.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { hasSlapd, PEOPLE_DN, type Slapd, startSlapd } from '../helpers/slapd.js';
import { UserAgent } from '../helpers/user-agent.js';

const SIGNED_OUT = 'https://app.example.test/signed-out';

describe.skipIf(!hasSlapd).each(testDatabaseUrls())(
  '@idgate/sdk probes, URL builders and password grant options on $name',
  (kind) => {
    let t: TestServer;
    let slapd: Slapd;
    let app: { clientId: string; clientSecret: string };

    beforeAll(async () => {
      slapd = await startSlapd();
      t = await startTestServer(kind);
      await t.addUser('carol', 'a long password');
      app = await t.addClient({
        grants: ['password', 'authorization_code'],
        trusted: true,
        scopes: ['openid', 'groups'],
        audiences: ['kubernetes:prod', 'kubernetes:dev'],
        postLogoutRedirectUris: [SIGNED_OUT],
      });
      await addIdentityProvider(t, {
        type: 'ldap',
        name: 'corp-ldap',
        url: slapd.url,
        bindDn: slapd.managerDn,
        bindPassword: slapd.managerPassword,
        userSearch: { baseDn: PEOPLE_DN },
        timeoutMs: 2000,
      });
      await addIdentityProvider(t, {
        type: 'github',
        name: 'github',
        clientId: 'Iv1.x',
        clientSecret: 's',
        tokenClientId: app.clientId,
      });
      await addIdentityProvider(t, { type: 'gitlab', name: 'gitlab', clientId: 'gl', clientSecret: 's' });
    });
    afterAll(async () => {
      await t?.close();
      await slapd?.stop();
    });

    const sdk = () => createIdgateClient({ baseUrl: t.baseUrl });

    it('health() and readiness() read /healthz and /readyz', async () => {
      expect(await sdk().health()).toEqual({ status: 'ok' });
      expect(await sdk().readiness()).toEqual({
        ready: true,
        status: 'ok',
        checks: { database: 'ok', migrations: 'ok', keys: 'ok' },
      });
    });

    it('passwordGrant sends provider (an LDAP directory) and resource (RFC 8707 audiences)', async () => {
      const tokens = await sdk().passwordGrant({
        clientId: app.clientId,
        clientSecret: app.clientSecret,
        username: 'alice',
        password: 'alice-pass',
        provider: 'corp-ldap',
        resource: 'kubernetes:prod',
        scope: 'openid',
      });
      expect(decodeJwt(tokens.access_token).aud).toBe('kubernetes:prod');
      const local = await sdk().passwordGrant({
        clientId: app.clientId,
        clientSecret: app.clientSecret,
        username: 'carol',
        password: 'a long password',
        resource: ['kubernetes:prod', 'kubernetes:dev'],
      });
      expect(decodeJwt(local.access_token).aud).toEqual(['kubernetes:prod', 'kubernetes:dev']);

      const refused = await sdk()
        .passwordGrant({
          clientId: app.clientId,
          clientSecret: app.clientSecret,
          username: 'carol',
          password: 'a long password',
          resource: 'kubernetes:other',
        })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(IdgateHttpError);
      expect((refused as IdgateHttpError).oauthError?.error).toBe('invalid_target');
      const unknown = await sdk()
        .passwordGrant({
          clientId: app.clientId,
          clientSecret: app.clientSecret,
          username: 'alice',
          password: 'alice-pass',
          provider: 'nope',
        })
        .catch((error: unknown) => error);
      expect((unknown as IdgateHttpError).oauthError?.error).toBe('invalid_request');
    });

    it('logoutUrl() signs a browser out at the end-session endpoint discovery names, back to the client', async () => {
      const metadata = await sdk().getProviderMetadata();
      const agent = new UserAgent();
      const { id_token } = await sdk().passwordGrant({
        clientId: app.clientId,
        clientSecret: app.clientSecret,
        username: 'carol',
        password: 'a long password',
        scope: 'openid',
      });
      const url = sdk().logoutUrl({ idTokenHint: id_token, postLogoutRedirectUri: SIGNED_OUT, state: 'xyz' });
      expect(`${url.origin}${url.pathname}`).toBe(metadata.end_session_endpoint);
      expect(logoutUrl(t.issuer, { clientId: app.clientId }).href).toBe(
        `${t.issuer}/logout?client_id=${app.clientId}`,
      );
      const response = await agent.request(url);
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toBe(`${SIGNED_OUT}?state=xyz`);
      expect(() => sdk().logoutUrl({ state: '' })).toThrow('state must be a non-empty string');
    });

    it('externalLoginUrl() starts a sign-in at an external provider', async () => {
      const url = sdk().externalLoginUrl('GitHub');
      expect(url.href).toBe(`${t.issuer}/login/GitHub`);
      expect(externalLoginUrl(`${t.issuer}/`, 'github', { interaction: 'i1' }).href).toBe(
        `${t.issuer}/login/github?interaction=i1`,
      );
      const response = await fetch(url, { redirect: 'manual' });
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toMatch(/^https:\/\/github\.com\/login\/oauth\/authorize\?/);
      // Refused before going upstream: nobody configured where the tokens of this sign-in would go.
      const refused = await fetch(externalLoginUrl(t.issuer, 'gitlab'), {
        redirect: 'manual',
        headers: { accept: 'application/json' },
      });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: 'invalid_request' });
      expect(() => sdk().externalLoginUrl('../admin')).toThrow('provider must be an identity provider name');
    });
  },
);
