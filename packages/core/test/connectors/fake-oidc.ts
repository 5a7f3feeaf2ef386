import { OidcProviderConfig } from '@idgate/schema';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import { createOidcConnector } from '../../src/connectors/oidc.js';
import type { ConnectorFailure, ExternalIdentity } from '../../src/connectors/types.js';
import type { UpstreamOptions } from '../../src/connectors/upstream.js';
import { connectorFailure } from './connector-failure.js';
import { type FakeUpstream, startFakeUpstream } from './fake-upstream.js';

export const CLIENT_SECRET = 'oidc-client-secret-0123456789';
export const CODE = 'code-9f8e7d6c5b4a';
export const NONCE = 'nonce-of-this-sign-in';
export const REDIRECT = 'https://id.example.test/oauth/callback/corp';
export const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
export const ACCESS_TOKEN = 'upstream-at-5c0d9e1f7b3a';

/** A fake upstream OpenID Connect provider: discovery, JWKS, token and userinfo endpoints. */
export interface FakeOidc {
  upstream: FakeUpstream;
  /** What the token endpoint answers as `id_token`; a valid one for `u-100` at first. */
  idToken: string;
  /** An ID token with these claims over the defaults, signed with `key` (the JWKS's k1 by default). */
  sign(claims?: JWTPayload, key?: CryptoKey, kid?: string): Promise<string>;
  /** A key the JWKS does not hold. */
  otherKey: CryptoKey;
  /** Replaces the JWKS with one public key of kid `kid`, and answers the key's private half. */
  rotate(kid: string): Promise<CryptoKey>;
  /** A connector for this upstream with config `overrides`. */
  connector(
    overrides?: Record<string, unknown>,
    options?: UpstreamOptions,
  ): ReturnType<typeof createOidcConnector>;
  /** A sign-in through the code exchange. */
  exchange(overrides?: Record<string, unknown>): Promise<ExternalIdentity>;
  /** The ConnectorError of `promise`; no secret, code, verifier or token may show in it. */
  failure(promise: Promise<unknown>, expected: ConnectorFailure): ReturnType<typeof connectorFailure>;
  /** The discovery document this fake answers; tests may change their copy before a first request. */
  discovery: Record<string, unknown>;
}

async function publicJwk(key: CryptoKey, kid: string): Promise<JWK> {
  return { ...(await exportJWK(key)), kid, alg: 'ES256', use: 'sig' };
}

/**
 * Starts a fake upstream whose discovery advertises RFC 9207 `iss` in the authorization
 * response, as node-oidc-provider and Keycloak do.
 * @example const fake = await startFakeOidc(); expect((await fake.exchange()).subject).toBe('u-100');
 */
export async function startFakeOidc(): Promise<FakeOidc> {
  const pair = await generateKeyPair('ES256');
  let jwks = { keys: [await publicJwk(pair.publicKey, 'k1')] };
  const upstream = await startFakeUpstream({
    'GET /jwks': () => ({ json: jwks }),
    'POST /token': () => ({
      json: { access_token: ACCESS_TOKEN, token_type: 'Bearer', id_token: fake.idToken, expires_in: 300 },
    }),
    'GET /userinfo': { json: { sub: 'u-100', name: 'Alice Liddell' } },
  });
  const discovery: Record<string, unknown> = {
    issuer: upstream.url,
    authorization_endpoint: `${upstream.url}/authorize`,
    token_endpoint: `${upstream.url}/token`,
    jwks_uri: `${upstream.url}/jwks`,
    userinfo_endpoint: `${upstream.url}/userinfo`,
    id_token_signing_alg_values_supported: ['ES256'],
    authorization_response_iss_parameter_supported: true,
  };
  upstream.route('GET /.well-known/openid-configuration', () => ({ json: discovery }));

  const sign = (claims: JWTPayload = {}, key: CryptoKey = pair.privateKey, kid = 'k1') =>
    new SignJWT({
      nonce: NONCE,
      preferred_username: 'Alice',
      email: 'alice@corp.test',
      email_verified: true,
      groups: ['eng'],
      ...claims,
    })
      .setProtectedHeader({ alg: 'ES256', kid })
      .setIssuer(typeof claims.iss === 'string' ? claims.iss : upstream.url)
      .setSubject('u-100')
      .setAudience((claims.aud as string | string[] | undefined) ?? 'idgate')
      .setIssuedAt()
      .setExpirationTime(typeof claims.exp === 'number' ? claims.exp : '5m')
      .sign(key);

  const connector = (overrides: Record<string, unknown> = {}, options: UpstreamOptions = {}) =>
    createOidcConnector(
      OidcProviderConfig.parse({
        type: 'oidc',
        name: 'corp',
        issuer: upstream.url,
        clientId: 'idgate',
        clientSecret: CLIENT_SECRET,
        ...overrides,
      }),
      options,
    );

  const fake: FakeOidc = {
    upstream,
    idToken: await sign(),
    sign,
    otherKey: (await generateKeyPair('ES256')).privateKey,
    async rotate(kid) {
      const next = await generateKeyPair('ES256');
      jwks = { keys: [await publicJwk(next.publicKey, kid)] };
      return next.privateKey;
    },
    connector,
    exchange: (overrides = {}) =>
      connector(overrides).exchangeCode({
        code: CODE,
        redirectUri: REDIRECT,
        codeVerifier: VERIFIER,
        nonce: NONCE,
        // RFC 9207: the callback names the issuer, as the discovery document says it does.
        iss: discovery.issuer as string,
      }),
    failure: (promise, expected) =>
      connectorFailure(promise, expected, [CLIENT_SECRET, CODE, VERIFIER, ACCESS_TOKEN, fake.idToken]),
    discovery,
  };
  return fake;
}
