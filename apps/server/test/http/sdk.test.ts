import {
  createAuthorizationRequest,
  createIdgateClient,
  IdgateHttpError,
  parseAuthorizationResponse,
} from '@idgate/sdk';
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrls } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { signIn, UserAgent } from '../helpers/user-agent.js';

describe.each(testDatabaseUrls())('@idgate/sdk against a real idgate on $name', (kind) => {
  let t: TestServer;
  let apiKey: string;
  let client: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    t = await startTestServer(kind);
    apiKey = await t.addApiKey(['tokenreview']);
    await t.addUser('carol', 'a long password', { groups: ['sre'] });
    client = await t.addClient({
      grants: ['password', 'client_credentials'],
      trusted: true,
      scopes: ['openid', 'groups', 'api'],
    });
  });
  afterAll(async () => t?.close());

  it('discovers, obtains tokens with both auth methods, verifies them offline and reviews them', async () => {
    const idgate = createIdgateClient({ baseUrl: t.baseUrl, apiKey });
    const metadata = await idgate.getProviderMetadata();
    expect(metadata.issuer).toBe(t.issuer);
    const jwks = createLocalJWKSet((await idgate.getJwks()) as JSONWebKeySet);

    const password = await idgate.passwordGrant({
      clientId: client.clientId,
      clientSecret: client.clientSecret,
      username: 'carol',
      password: 'a long password',
      scope: 'openid groups',
    });
    const service = await idgate.clientCredentialsGrant({
      clientId: client.clientId,
      clientSecret: client.clientSecret,
      authMethod: 'client_secret_post',
    });
    await jwtVerify(password.access_token, jwks, { issuer: metadata.issuer, typ: 'at+jwt' });
    await jwtVerify(password.id_token as string, jwks, {
      issuer: metadata.issuer,
      audience: client.clientId,
    });
    await jwtVerify(service.access_token, jwks, { issuer: metadata.issuer, typ: 'at+jwt' });

    const review = await idgate.reviewToken(password.access_token);
    expect(review.status).toMatchObject({
      authenticated: true,
      user: { username: 'carol', groups: ['sre'] },
    });
    const beta = await idgate.reviewToken(service.access_token, {
      apiVersion: 'authentication.k8s.io/v1beta1',
    });
    expect(beta.apiVersion).toBe('authentication.k8s.io/v1beta1');
    expect(beta.status.user?.username).toBe(`client:${client.clientId}`);
    expect((await idgate.reviewToken('garbage')).status).toEqual({
      authenticated: false,
      error: 'token is malformed',
    });
  });

  it('raises IdgateHttpError carrying the parsed OAuth error or problem', async () => {
    const idgate = createIdgateClient({ baseUrl: `${t.baseUrl}/`, apiKey: `idg_aaaaaaaa_${'c'.repeat(43)}` });
    const oauth = await idgate
      .passwordGrant({
        clientId: client.clientId,
        clientSecret: client.clientSecret,
        username: 'carol',
        password: 'wrong',
      })
      .catch((e: unknown) => e);
    expect(oauth).toBeInstanceOf(IdgateHttpError);
    expect((oauth as IdgateHttpError).status).toBe(400);
    expect((oauth as IdgateHttpError).oauthError).toEqual({
      error: 'invalid_grant',
      error_description: 'invalid username or password',
    });
    expect((oauth as Error).message).not.toContain('wrong');

    const problem = await idgate.reviewToken('x').catch((e: unknown) => e);
    expect(problem).toBeInstanceOf(IdgateHttpError);
    expect((problem as IdgateHttpError).status).toBe(401);
    expect((problem as IdgateHttpError).problem).toMatchObject({ code: 'api_key_invalid' });
  });

  it('runs the code flow with PKCE: exchange, userinfo, refresh, introspect, revoke', async () => {
    const redirectUri = 'https://app.example.test/cb';
    const web = await t.addClient({
      grants: ['authorization_code', 'refresh_token'],
      trusted: true,
      scopes: ['openid', 'groups', 'offline_access'],
      redirectUris: [redirectUri],
    });
    const idgate = createIdgateClient({ baseUrl: t.baseUrl });
    const request = await idgate.createAuthorizationRequest({
      clientId: web.clientId,
      redirectUri,
      scope: 'openid groups offline_access',
    });
    const { callback } = await signIn(new UserAgent(), request.url, {
      redirectPrefix: redirectUri,
      username: 'carol',
      password: 'a long password',
    });
    const { code } = parseAuthorizationResponse(callback, { state: request.state, issuer: t.issuer });
    const credentials = { clientId: web.clientId, clientSecret: web.clientSecret };

    const tokens = await idgate.exchangeCode({
      code,
      redirectUri,
      codeVerifier: request.codeVerifier,
      ...credentials,
    });
    expect(await idgate.userinfo(tokens.access_token)).toMatchObject({ groups: ['sre'] });
    const rotated = await idgate.refreshToken({
      refreshToken: tokens.refresh_token as string,
      ...credentials,
    });
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect(await idgate.introspectToken({ token: rotated.access_token, ...credentials })).toMatchObject({
      active: true,
      username: 'carol',
    });
    await idgate.revokeToken({
      token: rotated.refresh_token as string,
      tokenTypeHint: 'refresh_token',
      ...credentials,
    });
    expect(await idgate.introspectToken({ token: rotated.access_token, ...credentials })).toEqual({
      active: false,
    });
    const refused = await idgate.userinfo(rotated.access_token).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(IdgateHttpError);
    expect((refused as IdgateHttpError).oauthError?.error).toBe('invalid_token');

    const standalone = await createAuthorizationRequest({
      issuer: t.issuer,
      clientId: web.clientId,
      redirectUri,
    });
    expect(standalone.url.toString().startsWith(`${t.issuer}/authorize?`)).toBe(true);
  });
});
