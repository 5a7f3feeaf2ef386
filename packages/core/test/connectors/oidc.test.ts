import { OidcProviderConfig } from '@idgate/schema';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT, UnsecuredJWT } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorError, createOidcConnector } from '../../src/index.js';
import { closedPortUrl, type FakeUpstream, startFakeUpstream } from './fake-upstream.js';

const CLIENT_SECRET = 'oidc-client-secret-0123456789';
const NONCE = 'nonce-of-this-sign-in';
const REDIRECT = 'https://id.example.test/oauth/callback/corp';
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

let upstream: FakeUpstream;
let signingKey: CryptoKey;
let otherKey: CryptoKey;
let idToken: string;

async function sign(claims: JWTPayload, key: CryptoKey = signingKey): Promise<string> {
  return new SignJWT({
    nonce: NONCE,
    preferred_username: 'Alice',
    email: 'alice@corp.test',
    email_verified: true,
    groups: ['eng'],
    ...claims,
  })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(typeof claims.iss === 'string' ? claims.iss : upstream.url)
    .setSubject('u-100')
    .setAudience((claims.aud as string | string[] | undefined) ?? 'idgate')
    .setIssuedAt()
    .setExpirationTime(typeof claims.exp === 'number' ? claims.exp : '5m')
    .sign(key);
}

beforeEach(async () => {
  const pair = await generateKeyPair('ES256');
  signingKey = pair.privateKey;
  otherKey = (await generateKeyPair('ES256')).privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  upstream = await startFakeUpstream({
    'GET /.well-known/openid-configuration': (_request, fake) => ({
      json: {
        issuer: fake.url,
        authorization_endpoint: `${fake.url}/authorize`,
        token_endpoint: `${fake.url}/token`,
        jwks_uri: `${fake.url}/jwks`,
        userinfo_endpoint: `${fake.url}/userinfo`,
        id_token_signing_alg_values_supported: ['ES256'],
      },
    }),
    'GET /jwks': { json: { keys: [jwk] } },
    'POST /token': () => ({
      json: { access_token: 'upstream-at', token_type: 'Bearer', id_token: idToken, expires_in: 300 },
    }),
    'GET /userinfo': { json: { sub: 'u-100', name: 'Alice Liddell' } },
  });
  idToken = await sign({});
});
afterEach(() => upstream.close());

const connector = (overrides: Record<string, unknown> = {}) =>
  createOidcConnector(
    OidcProviderConfig.parse({
      type: 'oidc',
      name: 'corp',
      issuer: upstream.url,
      clientId: 'idgate',
      clientSecret: CLIENT_SECRET,
      ...overrides,
    }),
  );
const exchange = (overrides: Record<string, unknown> = {}) =>
  connector(overrides).exchangeCode({
    code: 'the-code',
    redirectUri: REDIRECT,
    codeVerifier: VERIFIER,
    nonce: NONCE,
  });

async function failure(promise: Promise<unknown>): Promise<ConnectorError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectorError);
  expect((error as Error).message).not.toContain(CLIENT_SECRET);
  return error as ConnectorError;
}

describe('upstream OpenID Connect connector', () => {
  it('builds the authorization URL from discovery, with PKCE S256 and nonce', async () => {
    const url = await connector().authorizationUrl({
      redirectUri: REDIRECT,
      state: 's',
      nonce: NONCE,
      codeChallenge: 'c'.repeat(43),
    });
    expect(`${url.origin}${url.pathname}`).toBe(`${upstream.url}/authorize`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: 'idgate',
      redirect_uri: REDIRECT,
      state: 's',
      nonce: NONCE,
      code_challenge_method: 'S256',
      scope: 'openid profile email',
    });
  });

  it('exchanges the code with client_secret_basic and the verifier, and maps the verified claims', async () => {
    expect(await exchange()).toEqual({
      subject: 'u-100',
      username: 'Alice',
      email: 'alice@corp.test',
      emailVerified: true,
      displayName: null,
      groups: ['eng'],
    });
    const [request] = upstream.requestsTo('POST /token');
    expect(request?.form.get('code_verifier')).toBe(VERIFIER);
    expect(request?.form.get('redirect_uri')).toBe(REDIRECT);
    expect(request?.headers.authorization).toBe(`Basic ${btoa(`idgate:${CLIENT_SECRET}`)}`);
  });

  it('merges userinfo when asked to', async () => {
    expect((await exchange({ useUserinfo: true })).displayName).toBe('Alice Liddell');
  });

  it.each([
    ['a wrong nonce', () => sign({ nonce: 'another-sign-in' }), /nonce/],
    ['another audience', () => sign({ aud: 'someone-else' }), /does not verify/],
    [
      'several audiences without us as azp',
      () => sign({ aud: ['idgate', 'someone-else'], azp: 'someone-else' }),
      /another client/,
    ],
    ['another issuer', () => sign({ iss: 'https://evil.example' }), /does not verify/],
    ['a signature by another key', () => sign({}, otherKey), /does not verify/],
    ['an expired ID token', () => sign({ exp: Math.floor(Date.now() / 1000) - 60 }), /does not verify/],
    [
      'alg none',
      async () =>
        new UnsecuredJWT({ nonce: NONCE })
          .setIssuer(upstream.url)
          .setSubject('u-100')
          .setAudience('idgate')
          .setIssuedAt()
          .setExpirationTime('5m')
          .encode(),
      /does not verify/,
    ],
  ])('refuses an ID token with %s', async (_name, make, message) => {
    idToken = await make();
    const error = await failure(exchange());
    expect(error.code).toBe('invalid_upstream_response');
    expect(error.message).toMatch(message);
  });

  it('reports an upstream that does not answer, and one that announces another issuer', async () => {
    const down = createOidcConnector(
      OidcProviderConfig.parse({
        type: 'oidc',
        name: 'corp',
        issuer: await closedPortUrl(),
        clientId: 'idgate',
        clientSecret: CLIENT_SECRET,
      }),
    );
    expect(
      (
        await failure(
          down.exchangeCode({ code: 'c', redirectUri: REDIRECT, codeVerifier: VERIFIER, nonce: NONCE }),
        )
      ).code,
    ).toBe('upstream_unavailable');
    const mixedUp = connector({ issuer: `${upstream.url}/other` });
    expect(
      (
        await failure(
          mixedUp.authorizationUrl({
            redirectUri: REDIRECT,
            state: 's',
            nonce: NONCE,
            codeChallenge: 'c'.repeat(43),
          }),
        )
      ).code,
    ).toBe('invalid_upstream_response');
  });

  it('trusts a presented access token only when userinfo confirms it, and only Bearer', async () => {
    expect(
      (await connector().identityFromAccessToken({ accessToken: 'upstream-at', tokenType: 'bearer' }))
        .subject,
    ).toBe('u-100');
    expect(
      (await failure(connector().identityFromAccessToken({ accessToken: 'x', tokenType: 'mac' }))).code,
    ).toBe('invalid_upstream_token');
  });
});
