import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addUpstreamProvider } from '../helpers/federation.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream-oidc.js';
import { UserAgent } from '../helpers/user-agent.js';

const REDIRECT = 'https://rp.example.test/callback';
const MFA = 'urn:idgate:acr:mfa';
const SINGLE = 'urn:idgate:acr:sf';
const UPSTREAM_ACR = 'urn:corp:acr:strong';

describe.each(testDatabaseUrls())("an upstream's second factor, seen by openid-client on $name", (kind) => {
  let t: TestServer;
  let upstream: UpstreamOidc;
  let config: oidc.Configuration;

  beforeAll(async () => {
    t = await startTestServer(kind);
    upstream = await startUpstreamOidc({
      redirectUris: ['trusted', 'by-acr', 'untrusted', 'with-userinfo'].map(
        (name) => `${t.issuer}/callback/${name}`,
      ),
    });
    upstream.accounts.set('u-1', {
      sub: 'u-1',
      preferred_username: 'carol',
      email: 'carol@corp.test',
      email_verified: true,
    });
    const client = await t.addClient({
      name: 'Dashboard',
      grants: ['authorization_code', 'refresh_token'],
      trusted: true,
      scopes: ['openid', 'email', 'offline_access'],
      redirectUris: [REDIRECT],
    });
    config = await oidc.discovery(new URL(t.issuer), client.clientId, client.clientSecret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    const scopes = ['openid', 'profile', 'email'];
    await addUpstreamProvider(t, upstream, {
      name: 'trusted',
      displayName: 'Trusted',
      scopes,
      trustUpstreamMfa: ['mfa', 'hwk'],
    });
    await addUpstreamProvider(t, upstream, {
      name: 'by-acr',
      displayName: 'By acr',
      scopes,
      trustUpstreamMfa: [UPSTREAM_ACR],
    });
    await addUpstreamProvider(t, upstream, { name: 'untrusted', displayName: 'Untrusted', scopes });
    await addUpstreamProvider(t, upstream, {
      name: 'with-userinfo',
      displayName: 'With userinfo',
      scopes,
      useUserinfo: true,
      trustUpstreamMfa: ['mfa'],
    });
  });
  afterAll(async () => {
    await upstream?.stop();
    await t?.close();
  });
  beforeEach(() => {
    upstream.nextAccount = 'u-1';
    upstream.nextLogin = { amr: ['pwd', 'mfa'] };
  });

  /**
   * An authorization request of the relying party, signed in through the provider `provider`
   * (its button on the login page, then the upstream and back), and the code exchanged.
   */
  async function viaProvider(provider: string, extra: Record<string, string> = {}) {
    const outcome = await signInVia(provider, extra);
    if (outcome === 'second-factor') throw new Error(`${provider}: idgate asked for its own second factor`);
    return outcome;
  }

  /** The tokens, or `second-factor` when idgate stops the sign-in at its own second-factor page. */
  async function signInVia(provider: string, extra: Record<string, string> = {}) {
    const agent = new UserAgent();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      ...extra,
    });
    let response = await agent.request(url);
    let at = url.toString();
    for (let hop = 0; hop < 20; hop++) {
      const location = response.headers.get('location');
      if (location === null) {
        const page = await response.text();
        const button = new RegExp(`<a href="([^"]+/login/${provider}[^"]*)">`).exec(page)?.[1];
        if (button === undefined) throw new Error(`no button for ${provider} (HTTP ${response.status})`);
        at = new URL(button.replace(/&amp;/g, '&'), at).toString();
        response = await agent.request(at);
        continue;
      }
      const next = new URL(location, at);
      if (next.pathname.endsWith('/oauth/second-factor')) return 'second-factor' as const;
      if (next.toString().startsWith(REDIRECT)) {
        return oidc.authorizationCodeGrant(config, next, {
          pkceCodeVerifier: codeVerifier,
          expectedState: state,
          idTokenExpected: true,
        });
      }
      at = next.toString();
      response = await agent.request(next);
    }
    throw new Error('too many redirects');
  }

  it('a provider trusted for mfa: the ID token, the access token and a refresh say MFA', async () => {
    const tokens = await viaProvider('trusted');
    expect(tokens.claims()).toMatchObject({ acr: MFA, amr: ['fed', 'mfa'] });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ acr: MFA, amr: ['fed', 'mfa'] });
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.claims()).toMatchObject({ acr: MFA, amr: ['fed', 'mfa'] });
  });

  it('a sign-in asking for MFA with acr_values is satisfied by the trusted upstream factor', async () => {
    const tokens = await viaProvider('trusted', { acr_values: MFA });
    expect(tokens.claims()).toMatchObject({ acr: MFA });
  });

  it('trusted, but the upstream says one factor: single factor', async () => {
    upstream.nextLogin = { amr: ['pwd'] };
    const tokens = await viaProvider('trusted');
    expect(tokens.claims()?.acr).toBe(SINGLE);
    expect(tokens.claims()?.amr).toBeUndefined();
  });

  it('trusted for an upstream acr: its acr counts, whatever the amr', async () => {
    upstream.nextLogin = { amr: ['pwd'], acr: UPSTREAM_ACR };
    expect((await viaProvider('by-acr')).claims()).toMatchObject({ acr: MFA, amr: ['fed', 'mfa'] });
    upstream.nextLogin = { amr: ['pwd', 'mfa'], acr: 'urn:corp:acr:weak' };
    expect((await viaProvider('by-acr')).claims()?.acr).toBe(SINGLE);
  });

  it("asks for idgate's own second factor when the upstream's does not count and one is needed", async () => {
    // Asked for with acr_values, the untrusted upstream's mfa is not enough; the trusted one's is.
    expect(await signInVia('untrusted', { acr_values: MFA })).toBe('second-factor');
    expect(await signInVia('trusted', { acr_values: MFA })).not.toBe('second-factor');
    // A user who must use a second factor gets no session from an upstream sign-in alone.
    const admin = await t.addApiKey(['admin']);
    const sub = (await viaProvider('untrusted')).claims()?.sub;
    const listed = await fetch(`${t.baseUrl}/admin/v1/users?limit=500`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    const { items } = (await listed.json()) as { items: Array<{ id: string; username: string }> };
    const username = items.find((user) => user.id === sub)?.username as string;
    const requirement = (required: boolean) =>
      fetch(`${t.baseUrl}/admin/v1/users/${username}/factors/requirement`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ required }),
      });
    expect((await requirement(true)).status).toBe(200);
    try {
      expect(await signInVia('untrusted')).toBe('second-factor');
    } finally {
      await requirement(false);
    }
    expect(await signInVia('untrusted')).not.toBe('second-factor');
  });

  it('a provider not trusted: the upstream amr mfa is a single factor here', async () => {
    const tokens = await viaProvider('untrusted');
    expect(tokens.claims()?.acr).toBe(SINGLE);
    expect(tokens.claims()?.amr).toBeUndefined();
    expect(decodeJwt(tokens.access_token).acr).toBe(SINGLE);
  });

  it("never takes the upstream's amr from userinfo, only from its ID token", async () => {
    upstream.accounts.set('u-2', { sub: 'u-2', preferred_username: 'dave', amr: ['mfa'] });
    upstream.nextAccount = 'u-2';
    upstream.nextLogin = { amr: ['pwd'] };
    const before = upstream.requests.length;
    const tokens = await viaProvider('with-userinfo');
    const userinfo = upstream.requests.slice(before).filter((request) => request === 'GET /me');
    expect(userinfo).toHaveLength(1);
    expect(tokens.claims()?.acr).toBe(SINGLE);
    expect(tokens.claims()?.amr).toBeUndefined();
  });

  it('the audit trail says whether the upstream second factor was trusted', async () => {
    await viaProvider('trusted');
    await viaProvider('untrusted');
    const items = await t.server.services.storage.auditEvents.list({
      types: ['sign-in.succeeded'],
      limit: 50,
    });
    const byProvider = (provider: string) =>
      items
        .filter((event) => (event.details as { provider?: string }).provider === provider)
        .map((event) => (event.details as { upstreamMfaTrusted?: boolean }).upstreamMfaTrusted);
    expect(byProvider('trusted')).toContain(true);
    expect(byProvider('untrusted')).not.toContain(true);
    expect(byProvider('untrusted')).toContain(false);
  });
});
