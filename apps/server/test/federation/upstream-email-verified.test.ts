import { createIdgateAdminClient, type IdgateAdminClient } from '@idgate/sdk';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addUpstreamProvider } from '../helpers/federation.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startUpstreamOidc, type UpstreamOidc } from '../helpers/upstream-oidc.js';
import { UserAgent } from '../helpers/user-agent.js';

const REDIRECT = 'https://rp.example.test/callback';

describe.each(testDatabaseUrls())("an upstream's email_verified, seen by openid-client on $name", (kind) => {
  let t: TestServer;
  let upstream: UpstreamOidc;
  let config: oidc.Configuration;
  let admin: IdgateAdminClient;

  beforeAll(async () => {
    t = await startTestServer(kind);
    admin = createIdgateAdminClient({
      baseUrl: t.baseUrl,
      apiKey: await t.addApiKey(['users:read', 'users:write']),
    });
    upstream = await startUpstreamOidc({
      redirectUris: ['vouched', 'unvouched'].map((name) => `${t.issuer}/callback/${name}`),
    });
    upstream.accounts.set('u-1', {
      sub: 'u-1',
      preferred_username: 'carol',
      email: 'carol@corp.test',
      email_verified: true,
    });
    upstream.accounts.set('u-2', {
      sub: 'u-2',
      preferred_username: 'dave',
      email: 'dave@corp.test',
      email_verified: false,
    });
    const client = await t.addClient({
      name: 'Dashboard',
      grants: ['authorization_code'],
      trusted: true,
      scopes: ['openid', 'email', 'profile'],
      redirectUris: [REDIRECT],
    });
    config = await oidc.discovery(new URL(t.issuer), client.clientId, client.clientSecret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    const scopes = ['openid', 'profile', 'email'];
    await addUpstreamProvider(t, upstream, { name: 'vouched', scopes, trustEmailVerified: true });
    await addUpstreamProvider(t, upstream, { name: 'unvouched', scopes });
  });
  afterAll(async () => {
    await upstream?.stop();
    await t?.close();
  });

  /** The tokens of a sign-in of `account` through the provider `provider` (its login page button). */
  async function viaProvider(provider: string, account: string) {
    upstream.nextAccount = account;
    const agent = new UserAgent();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid email profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
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
      if (next.toString().startsWith(REDIRECT))
        return oidc.authorizationCodeGrant(config, next, {
          pkceCodeVerifier: codeVerifier,
          expectedState: state,
          idTokenExpected: true,
        });
      at = next.toString();
      response = await agent.request(next);
    }
    throw new Error('too many redirects');
  }

  async function emailClaims(tokens: Awaited<ReturnType<typeof viaProvider>>) {
    const id = tokens.claims();
    const info = await oidc.fetchUserInfo(config, tokens.access_token, id?.sub as string);
    return { id: { email: id?.email, email_verified: id?.email_verified }, userinfo: info };
  }

  it('a provider trusted for it: a verified upstream email is email_verified true, until it changes', async () => {
    const tokens = await viaProvider('vouched', 'u-1');
    const seen = await emailClaims(tokens);
    expect(seen.id).toEqual({ email: 'carol@corp.test', email_verified: true });
    expect(seen.userinfo).toMatchObject({ email: 'carol@corp.test', email_verified: true });
    expect(decodeJwt(tokens.id_token as string).email_verified).toBe(true);
    // An administrator gives the user another email: idgate vouches for it no more.
    const username = tokens.claims()?.preferred_username as string;
    await admin.updateUser(username, { email: 'carol@elsewhere.test' });
    const after = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()?.sub as string);
    expect(after).toMatchObject({ email: 'carol@elsewhere.test', email_verified: false });
    // Back to the one the provider verified: verified again.
    await admin.updateUser(username, { email: 'carol@corp.test' });
    const back = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()?.sub as string);
    expect(back).toMatchObject({ email: 'carol@corp.test', email_verified: true });
  });

  it('trusted, but the upstream did not verify the email: false, even once an administrator sets it', async () => {
    const tokens = await viaProvider('vouched', 'u-2');
    // An unverified upstream email is not taken as the new user's.
    expect(tokens.claims()?.email).toBeUndefined();
    await admin.updateUser(tokens.claims()?.preferred_username as string, { email: 'dave@corp.test' });
    const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()?.sub as string);
    expect(info).toMatchObject({ email: 'dave@corp.test', email_verified: false });
  });

  it('a provider not trusted for it (the default): false, whatever the upstream said', async () => {
    const seen = await emailClaims(await viaProvider('unvouched', 'u-1'));
    expect(seen.id).toEqual({ email: 'carol@corp.test', email_verified: false });
    expect(seen.userinfo).toMatchObject({ email: 'carol@corp.test', email_verified: false });
  });
});
