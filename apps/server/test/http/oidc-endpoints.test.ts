import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { signIn, UserAgent } from '../helpers/user-agent.js';

const REDIRECT = 'https://rp.example.test/cb';
const AFTER = 'https://rp.example.test/bye';

describe.each(testDatabaseUrls())('userinfo, revocation, introspection and logout on $name', (kind) => {
  let t: TestApp;
  let client: { clientId: string; clientSecret: string };
  let config: oidc.Configuration;
  let reviewKey: string;
  let userId: string;

  beforeAll(async () => {
    t = await startTestApp(kind);
    userId = await t.addUser('kim', 'battery-staple-cb1521', { groups: ['sre'] });
    client = await t.addClient({
      trusted: true,
      grants: ['authorization_code', 'refresh_token', 'client_credentials'],
      scopes: ['openid', 'groups', 'offline_access'],
      redirectUris: [REDIRECT],
      postLogoutRedirectUris: [AFTER],
    });
    reviewKey = await t.addApiKey(['tokenreview']);
    // openid-client only obtains the tokens these endpoints are tried with: in this process, over
    // the app's fetch. (test/interop runs it against a listening server.)
    config = await oidc.discovery(new URL(t.issuer), client.clientId, client.clientSecret, undefined, {
      execute: [oidc.allowInsecureRequests],
      [oidc.customFetch]: (url, options) => t.fetch(url, options as RequestInit),
    });
  });
  afterAll(async () => t?.close());

  async function login(
    agent = new UserAgent(t.fetch),
    scope = 'openid groups offline_access',
    relyingParty: oidc.Configuration = config,
  ) {
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(relyingParty, {
      redirect_uri: REDIRECT,
      scope,
      state: 's',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    const { callback } = await signIn(agent, url, {
      redirectPrefix: REDIRECT,
      username: 'kim',
      password: 'battery-staple-cb1521',
    });
    const tokens = await oidc.authorizationCodeGrant(relyingParty, callback, {
      pkceCodeVerifier: codeVerifier,
      expectedState: 's',
    });
    return { agent, tokens, callback, codeVerifier };
  }

  const review = async (token: string) => {
    const response = await t.fetch(`${t.issuer}/authenticate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${reviewKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }),
    });
    return ((await response.json()) as { status: { authenticated: boolean; error?: string } }).status;
  };
  const basic = { authorization: '' };
  beforeAll(() => {
    basic.authorization = `Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`;
  });
  const form = (
    path: string,
    body: Record<string, string> | string,
    headers: Record<string, string> = basic,
  ) =>
    t.fetch(`${t.issuer}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: typeof body === 'string' ? body : new URLSearchParams(body),
    });

  describe('revocation is seen at once by token review and introspection', () => {
    it('revoking an access token', async () => {
      const { tokens } = await login();
      expect((await review(tokens.access_token)).authenticated).toBe(true);
      expect(
        (await form('/revoke', { token: tokens.access_token, token_type_hint: 'access_token' })).status,
      ).toBe(200);
      expect(await review(tokens.access_token)).toEqual({
        authenticated: false,
        error: 'token has been revoked',
      });
      expect(await oidc.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false });
    });

    it('revoking a refresh token revokes the grant, access tokens included', async () => {
      const { tokens } = await login();
      expect((await form('/revoke', { token: tokens.refresh_token as string })).status).toBe(200);
      expect((await review(tokens.access_token)).authenticated).toBe(false);
    });

    it('logout from one application revokes that application’s grants of the session, not another’s', async () => {
      const other = await t.addClient({
        trusted: true,
        grants: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'offline_access'],
        redirectUris: [REDIRECT],
      });
      const otherConfig = await oidc.discovery(
        new URL(t.issuer),
        other.clientId,
        other.clientSecret,
        undefined,
        {
          execute: [oidc.allowInsecureRequests],
          [oidc.customFetch]: (url, options) => t.fetch(url, options as RequestInit),
        },
      );
      const { agent, tokens } = await login();
      // The same browser, signed in once, into a second application.
      const second = await login(agent, 'openid offline_access', otherConfig);
      const response = await agent.request(
        oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token as string }),
      );
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('You are signed out.');
      expect((await review(tokens.access_token)).authenticated).toBe(false);
      expect((await review(second.tokens.access_token)).authenticated).toBe(true);
      const refreshed = await oidc.refreshTokenGrant(otherConfig, second.tokens.refresh_token as string);
      expect((await review(refreshed.access_token)).authenticated).toBe(true);
      // The browser session is over all the same: the next sign-in asks for the password.
      const again = await login(agent, 'openid offline_access', otherConfig);
      expect(again.tokens.access_token).toBeDefined();
    });

    it('a disabled user', async () => {
      const { tokens } = await login();
      await t.services.storage.users.update(userId, { disabled: true, updatedAt: new Date() });
      try {
        expect(await review(tokens.access_token)).toEqual({
          authenticated: false,
          error: 'user is disabled',
        });
        expect(await oidc.tokenIntrospection(config, tokens.refresh_token as string)).toEqual({
          active: false,
        });
        await expect(oidc.fetchUserInfo(config, tokens.access_token, userId)).rejects.toMatchObject({
          status: 401,
        });
      } finally {
        await t.services.storage.users.update(userId, { disabled: false, updatedAt: new Date() });
      }
    });
  });

  describe('userinfo (RFC 6750 errors)', () => {
    it('answers claims for GET with a header and POST with a form field', async () => {
      const { tokens } = await login();
      const viaGet = await t.fetch(`${t.issuer}/userinfo`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(await viaGet.json()).toEqual({ sub: userId, groups: ['sre'] });
      const viaPost = await form('/userinfo', { access_token: tokens.access_token }, {});
      expect(await viaPost.json()).toEqual({ sub: userId, groups: ['sre'] });
    });

    it.each([
      ['no token', {}, 401, 'Bearer realm="idgate"'],
      [
        'a garbage token',
        { authorization: 'Bearer garbage' },
        401,
        'Bearer realm="idgate", error="invalid_token", error_description="token is malformed"',
      ],
      [
        'another scheme',
        { authorization: 'Basic abc' },
        401,
        'Bearer realm="idgate", error="invalid_request"',
      ],
    ])('%s', async (_name, headers, status, challenge) => {
      const response = await t.fetch(`${t.issuer}/userinfo`, { headers });
      expect(response.status).toBe(status);
      expect(response.headers.get('www-authenticate')).toBe(challenge);
    });

    it('a token without openid → 403 insufficient_scope; a client token → 401', async () => {
      const cc = await oidc.clientCredentialsGrant(config, {});
      const response = await t.fetch(`${t.issuer}/userinfo`, {
        headers: { authorization: `Bearer ${cc.access_token}` },
      });
      expect(response.status).toBe(401);
      const { tokens } = await login(new UserAgent(t.fetch), 'groups');
      const noOpenid = await t.fetch(`${t.issuer}/userinfo`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(noOpenid.status).toBe(403);
      expect(noOpenid.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    });

    it('answers CORS preflights for browser applications', async () => {
      const response = await t.fetch(`${t.issuer}/userinfo`, {
        method: 'OPTIONS',
        headers: { origin: 'https://spa.example', 'access-control-request-method': 'GET' },
      });
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-allow-headers')).toContain('Authorization');
    });
  });

  describe('revocation and introspection input', () => {
    it.each([
      ['no token', '/revoke', {}, 400, 'invalid_request'],
      ['no client authentication', '/revoke', { token: 'x' }, 401, 'invalid_client'],
      ['an unknown token (RFC 7009 §2.2: still 200)', '/revoke', { token: 'unknown-token' }, 200, undefined],
      ['no token', '/introspect', {}, 400, 'invalid_request'],
      ['garbage', '/introspect', { token: 'g'.repeat(20_000) }, 200, undefined],
    ])('%s at %s', async (_name, path, body, status, error) => {
      const headers = _name === 'no client authentication' ? {} : basic;
      const response = await form(path, body, headers);
      expect(response.status).toBe(status);
      if (error !== undefined) expect(await response.json()).toMatchObject({ error });
      if (path === '/introspect' && status === 200) expect(await response.json()).toEqual({ active: false });
    });

    it('refuses JSON bodies and repeated parameters', async () => {
      const json = await t.fetch(`${t.issuer}/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...basic },
        body: '{"token":"x"}',
      });
      expect(json.status).toBe(400);
      const repeated = await form('/introspect', 'token=a&token=b');
      expect(await repeated.json()).toMatchObject({ error: 'invalid_request' });
    });

    it('refuses to revoke another client’s live token', async () => {
      const { tokens } = await login();
      const other = await t.addClient({ grants: ['client_credentials'] });
      const response = await form(
        '/revoke',
        { token: tokens.access_token },
        { authorization: `Basic ${btoa(`${other.clientId}:${other.clientSecret}`)}` },
      );
      expect(response.status).toBe(400);
      expect((await review(tokens.access_token)).authenticated).toBe(true);
    });
  });

  describe('logout', () => {
    it('asks before signing out when the request does not prove where it comes from', async () => {
      const { agent, tokens } = await login();
      const page = await agent.request(`${t.issuer}/logout`);
      const html = await page.text();
      expect(html).toContain('Sign out?');
      expect((await review(tokens.access_token)).authenticated).toBe(true);
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] as string;
      const forged = await agent.request(`${t.issuer}/logout`, { form: { confirm: 'yes', csrf: 'forged' } });
      expect(await forged.text()).toContain('Sign out?');
      const done = await agent.request(`${t.issuer}/logout`, { form: { confirm: 'yes', csrf } });
      expect(await done.text()).toContain('You are signed out.');
      // Signed out of idgate, not of an application: the session is over (the next sign-in asks
      // for the password), the applications' grants stand (logout.revokeGrants: client).
      expect((await review(tokens.access_token)).authenticated).toBe(true);
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT,
        scope: 'openid',
        state: 's',
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
      });
      const again = await signIn(agent, url, {
        redirectPrefix: REDIRECT,
        username: 'kim',
        password: 'battery-staple-cb1521',
      });
      expect(again.sawLogin).toBe(true);
    });

    it.each([
      [
        'an unregistered post_logout_redirect_uri',
        (hint: string) => ({ id_token_hint: hint, post_logout_redirect_uri: 'https://evil.example/' }),
      ],
      [
        'a forged id_token_hint',
        () => ({
          id_token_hint: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.AAAA',
          post_logout_redirect_uri: AFTER,
        }),
      ],
      ['a redirect without a client', () => ({ post_logout_redirect_uri: AFTER })],
    ])('shows an error page, never redirecting, for %s', async (_name, params) => {
      const { agent, tokens } = await login();
      const response = await agent.request(
        `${t.issuer}/logout?${new URLSearchParams(params(tokens.id_token as string))}`,
      );
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
    });
  });

  it('keeps codes, refresh tokens and session secrets only as hashes, and logs no secret', async () => {
    const { agent, tokens, callback } = await login();
    const code = callback.searchParams.get('code') as string;
    const session = agent.cookies.get('idgate_session')?.value as string;
    const database = await openDatabase(t.database.url);
    try {
      const tables = [
        'authorization_codes',
        'refresh_tokens',
        'browser_sessions',
        'interactions',
        'grants',
        'oauth_clients',
        'api_keys',
        'users',
      ] as const;
      const dump = (
        await Promise.all(tables.map((table) => database.db.selectFrom(table).selectAll().execute()))
      )
        .map((rows) => JSON.stringify(rows))
        .join('\n');
      for (const secret of [
        code,
        tokens.refresh_token as string,
        session,
        client.clientSecret,
        reviewKey,
        'battery-staple-cb1521',
      ]) {
        expect(dump).not.toContain(secret);
      }
      expect(dump).toContain(createHash('sha256').update(code).digest('base64url'));
    } finally {
      await database.close();
    }
    const logs = t.logs.join('\n');
    for (const secret of [
      code,
      tokens.refresh_token as string,
      tokens.access_token,
      tokens.id_token as string,
      session,
      client.clientSecret,
      'battery-staple-cb1521',
      reviewKey,
    ]) {
      expect(logs).not.toContain(secret);
    }
    expect(logs).toContain('"url":"/oauth/authorize?');
  });
});
