import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signIn, UserAgent } from '../helpers/user-agent.js';

const REDIRECT = 'https://rp.example.test/cb';

describe.each(testDatabaseUrls())('authorization code flow error paths on $name', (kind) => {
  let t: TestServer;
  let confidential: { clientId: string; clientSecret: string };
  let publicClient: string;
  let config: oidc.Configuration;

  beforeAll(async () => {
    t = await startTestServer(kind);
    await t.addUser('finn', 'battery-staple-01d5ce');
    confidential = await t.addClient({
      trusted: true,
      grants: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'offline_access'],
      redirectUris: [REDIRECT, 'https://rp.example.test/cb?tenant=a'],
    });
    publicClient = (
      await t.addClient({
        public: true,
        grants: ['authorization_code'],
        scopes: ['openid'],
        redirectUris: [REDIRECT],
      })
    ).clientId;
    config = await oidc.discovery(
      new URL(t.issuer),
      confidential.clientId,
      confidential.clientSecret,
      undefined,
      { execute: [oidc.allowInsecureRequests] },
    );
  });
  afterAll(async () => t?.close());

  const authorizeUrl = (params: Record<string, string>) =>
    `${t.issuer}/authorize?${new URLSearchParams(params)}`;
  const base = async () => {
    const codeVerifier = oidc.randomPKCECodeVerifier();
    return {
      codeVerifier,
      params: {
        client_id: confidential.clientId,
        redirect_uri: REDIRECT,
        response_type: 'code',
        scope: 'openid offline_access',
        state: 'state-1',
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      },
    };
  };
  const errorOf = (response: Response) =>
    Object.fromEntries(new URL(response.headers.get('location') as string).searchParams);

  it.each([
    [
      'an unregistered redirect_uri',
      { redirect_uri: 'https://evil.example/cb' },
      'redirect_uri is not registered for this client',
    ],
    [
      'a redirect_uri differing only by a trailing slash',
      { redirect_uri: `${REDIRECT}/` },
      'redirect_uri is not registered for this client',
    ],
    ['an unknown client', { client_id: 'nobody' }, 'the client is not known'],
    ['no client_id', { client_id: '' }, 'client_id is required'],
  ])('%s is shown to the user, never redirected', async (_name, override, message) => {
    const { params } = await base();
    const response = await new UserAgent().request(authorizeUrl({ ...params, ...override }));
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await response.text()).toContain(message);
  });

  it.each([
    ['an unsupported response_type', { response_type: 'token' }, 'unsupported_response_type'],
    ['a scope the client may not have', { scope: 'openid admin' }, 'invalid_scope'],
    ['PKCE plain', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['a malformed code_challenge', { code_challenge: 'short' }, 'invalid_request'],
    ['prompt=none with login', { prompt: 'none login' }, 'invalid_request'],
    ['a request object', { request: 'eyJ.x.y' }, 'request_not_supported'],
  ])('%s goes back to the client with state and iss', async (_name, override, error) => {
    const { params } = await base();
    const response = await new UserAgent().request(authorizeUrl({ ...params, ...override }));
    expect(response.status).toBe(303);
    expect(errorOf(response)).toMatchObject({ error, state: 'state-1', iss: t.issuer });
  });

  it('requires PKCE from a public client', async () => {
    const response = await new UserAgent().request(
      authorizeUrl({
        client_id: publicClient,
        redirect_uri: REDIRECT,
        response_type: 'code',
        scope: 'openid',
        state: 's',
      }),
    );
    expect(errorOf(response)).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('PKCE is required'),
    });
  });

  it('keeps the query of a registered redirect_uri', async () => {
    const { params } = await base();
    const { callback } = await signIn(
      new UserAgent(),
      authorizeUrl({ ...params, redirect_uri: 'https://rp.example.test/cb?tenant=a' }),
      {
        redirectPrefix: 'https://rp.example.test/cb',
        username: 'finn',
        password: 'battery-staple-01d5ce',
      },
    );
    expect(callback.searchParams.get('tenant')).toBe('a');
    expect(callback.searchParams.get('code')).toEqual(expect.any(String));
  });

  async function codeFor(agent = new UserAgent()) {
    const { params, codeVerifier } = await base();
    const { callback } = await signIn(agent, authorizeUrl(params), {
      redirectPrefix: REDIRECT,
      username: 'finn',
      password: 'battery-staple-01d5ce',
    });
    expect(callback.searchParams.get('state')).toBe('state-1');
    return { callback, codeVerifier };
  }

  it('refuses a missing or wrong PKCE verifier', async () => {
    const { callback } = await codeFor();
    await expect(
      oidc.authorizationCodeGrant(config, callback, { expectedState: 'state-1' }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
    const second = await codeFor();
    await expect(
      oidc.authorizationCodeGrant(config, second.callback, {
        expectedState: 'state-1',
        pkceCodeVerifier: oidc.randomPKCECodeVerifier(),
      }),
    ).rejects.toMatchObject({
      error: 'invalid_grant',
      error_description: 'code_verifier does not match the code_challenge',
    });
  });

  it('refuses a replayed code and revokes what it produced', async () => {
    const { callback, codeVerifier } = await codeFor();
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      expectedState: 'state-1',
      pkceCodeVerifier: codeVerifier,
    });
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toMatchObject({ active: true });
    await expect(
      oidc.authorizationCodeGrant(config, callback, {
        expectedState: 'state-1',
        pkceCodeVerifier: codeVerifier,
      }),
    ).rejects.toMatchObject({
      error: 'invalid_grant',
      error_description: 'the authorization code was already used',
    });
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false });
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('refuses a reused refresh token and revokes the whole grant', async () => {
    const { callback, codeVerifier } = await codeFor();
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      expectedState: 'state-1',
      pkceCodeVerifier: codeVerifier,
    });
    // Rotated twice: the first token's successor is used, so presenting the first token again is
    // reuse however soon it comes (the concurrent-refresh window covers only an unused successor).
    const second = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    const next = await oidc.refreshTokenGrant(config, second.refresh_token as string);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    await expect(oidc.refreshTokenGrant(config, next.refresh_token as string)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect(await oidc.tokenIntrospection(config, next.access_token)).toEqual({ active: false });
  });

  it('never widens scope on refresh, but narrows it', async () => {
    const { callback, codeVerifier } = await codeFor();
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      expectedState: 'state-1',
      pkceCodeVerifier: codeVerifier,
    });
    await expect(
      oidc.refreshTokenGrant(config, tokens.refresh_token as string, {
        scope: 'openid offline_access profile',
      }),
    ).rejects.toMatchObject({
      error: 'invalid_scope',
    });
    const narrowed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string, {
      scope: 'openid',
    });
    expect(narrowed.scope).toBe('openid');
  });

  it('a tampered state is caught by the relying party', async () => {
    const { callback, codeVerifier } = await codeFor();
    await expect(
      oidc.authorizationCodeGrant(config, callback, {
        expectedState: 'state-2',
        pkceCodeVerifier: codeVerifier,
      }),
    ).rejects.toMatchObject({
      cause: { message: 'unexpected "state" response parameter value' },
    });
  });

  it('a code of another client or for another redirect_uri fails', async () => {
    const { callback, codeVerifier } = await codeFor();
    const code = callback.searchParams.get('code') as string;
    const other = await t.addClient({ grants: ['authorization_code'], redirectUris: [REDIRECT] });
    const form = (extra: Record<string, string>) =>
      fetch(`${t.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          code_verifier: codeVerifier,
          ...extra,
        }),
      });
    const wrongClient = await form({
      redirect_uri: REDIRECT,
      client_id: other.clientId,
      client_secret: other.clientSecret,
    });
    expect(await wrongClient.json()).toMatchObject({ error: 'invalid_grant' });
  });
});
