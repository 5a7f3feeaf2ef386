import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signIn, UserAgent } from '../helpers/user-agent.js';

const REDIRECT = 'https://rp.example.test/callback';
const AFTER_LOGOUT = 'https://rp.example.test/signed-out';

describe.each(testDatabaseUrls())('openid-client as a confidential relying party on $name', (kind) => {
  let t: TestServer;
  let client: { clientId: string; clientSecret: string };
  let userId: string;
  let config: oidc.Configuration;

  beforeAll(async () => {
    t = await startTestServer(kind);
    userId = await t.addUser('dana', 'battery-staple-987354', {
      email: 'dana@example.test',
      displayName: 'Dana',
      groups: ['platform'],
    });
    client = await t.addClient({
      name: 'Dashboard',
      grants: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'email', 'groups', 'offline_access'],
      redirectUris: [REDIRECT],
      postLogoutRedirectUris: [AFTER_LOGOUT],
    });
    config = await oidc.discovery(new URL(t.issuer), client.clientId, client.clientSecret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
  });
  afterAll(async () => t?.close());

  async function authorize(agent: UserAgent, extra: Record<string, string> = {}) {
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid profile email groups offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      ...extra,
    });
    const result = await signIn(agent, url, {
      redirectPrefix: REDIRECT,
      username: 'dana',
      password: 'battery-staple-987354',
    });
    return { ...result, codeVerifier, state, nonce };
  }

  it('runs the whole flow: discovery → authorize with PKCE → login → consent → tokens → userinfo → refresh → revoke → introspect → logout', async () => {
    const agent = new UserAgent();
    const first = await authorize(agent);
    expect(first.sawLogin).toBe(true);
    expect(first.sawConsent).toBe(true);
    expect(first.callback.searchParams.get('iss')).toBe(t.issuer);

    const tokens = await oidc.authorizationCodeGrant(config, first.callback, {
      pkceCodeVerifier: first.codeVerifier,
      expectedState: first.state,
      expectedNonce: first.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    expect(claims).toMatchObject({
      sub: userId,
      iss: t.issuer,
      aud: client.clientId,
      nonce: first.nonce,
      azp: client.clientId,
      email: 'dana@example.test',
    });
    expect(typeof claims?.auth_time).toBe('number');
    expect(tokens.refresh_token).toEqual(expect.any(String));

    const info = await oidc.fetchUserInfo(config, tokens.access_token, userId);
    expect(info).toMatchObject({
      sub: userId,
      preferred_username: 'dana',
      name: 'Dana',
      email: 'dana@example.test',
      groups: ['platform'],
    });

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.claims()?.sub).toBe(userId);

    expect(await oidc.tokenIntrospection(config, refreshed.access_token)).toMatchObject({
      active: true,
      sub: userId,
      client_id: client.clientId,
      username: 'dana',
    });
    expect(await oidc.tokenIntrospection(config, refreshed.refresh_token as string)).toMatchObject({
      active: true,
      token_type: 'refresh_token',
    });

    await oidc.tokenRevocation(config, refreshed.refresh_token as string);
    expect(await oidc.tokenIntrospection(config, refreshed.refresh_token as string)).toEqual({
      active: false,
    });
    expect(await oidc.tokenIntrospection(config, refreshed.access_token)).toEqual({ active: false });

    // A second sign-in from the same browser skips the form and the remembered consent.
    const second = await authorize(agent);
    expect(second.sawLogin).toBe(false);
    expect(second.sawConsent).toBe(false);
    const again = await oidc.authorizationCodeGrant(config, second.callback, {
      pkceCodeVerifier: second.codeVerifier,
      expectedState: second.state,
      expectedNonce: second.nonce,
    });

    const logout = oidc.buildEndSessionUrl(config, {
      id_token_hint: again.id_token as string,
      post_logout_redirect_uri: AFTER_LOGOUT,
      state: 'bye',
    });
    const response = await agent.request(logout);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`${AFTER_LOGOUT}?state=bye`);
    expect(await oidc.tokenIntrospection(config, again.access_token)).toEqual({ active: false });
    const third = await authorize(agent);
    expect(third.sawLogin).toBe(true);
  });

  it('prompt=none without a session answers login_required to the client', async () => {
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: 'st',
      prompt: 'none',
    });
    const response = await new UserAgent().request(url);
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get('location') as string);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      error: 'login_required',
      state: 'st',
      iss: t.issuer,
    });
  });
});
