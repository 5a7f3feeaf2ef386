import { UnsecuredJWT } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CODE, type FakeOidc, NONCE, REDIRECT, startFakeOidc, VERIFIER } from './fake-oidc.js';
import { closedPortUrl } from './fake-upstream.js';

let fake: FakeOidc;

beforeEach(async () => {
  fake = await startFakeOidc();
});
afterEach(() => fake.upstream.close());

const start = (overrides: Record<string, unknown> = {}) =>
  fake
    .connector(overrides)
    .authorizationUrl({ redirectUri: REDIRECT, state: 's', nonce: NONCE, codeChallenge: 'c'.repeat(43) });

describe('upstream OpenID Connect ID token checks', () => {
  it.each([
    ['a wrong nonce', () => fake.sign({ nonce: 'another-sign-in' }), /"nonce"/],
    ['another audience', () => fake.sign({ aud: 'someone-else' }), /"aud"/],
    [
      'several audiences without us as azp',
      () => fake.sign({ aud: ['idgate', 'someone-else'], azp: 'someone-else' }),
      /"azp"/,
    ],
    ['another issuer', () => fake.sign({ iss: 'https://evil.example' }), /"iss"/],
    ['a signature by another key', () => fake.sign({}, fake.otherKey), /signature/],
    ['a key the upstream does not publish', () => fake.sign({}, fake.otherKey, 'k9'), /no applicable keys/],
    ['an expired ID token', () => fake.sign({ exp: Math.floor(Date.now() / 1000) - 60 }), /"exp"/],
    [
      'alg none',
      async () =>
        new UnsecuredJWT({ nonce: NONCE })
          .setIssuer(fake.upstream.url)
          .setSubject('u-100')
          .setAudience('idgate')
          .setIssuedAt()
          .setExpirationTime('5m')
          .encode(),
      /"alg"/,
    ],
  ])('refuses an ID token with %s', async (_name, make, reason) => {
    fake.idToken = await make();
    const error = await fake.failure(fake.exchange(), 'invalid_upstream_response');
    expect(error.message).toMatch(
      /^the identity provider corp sent a token response that does not verify \(/,
    );
    expect(error.message).toMatch(reason);
  });

  it('refuses a token response without an ID token', async () => {
    fake.upstream.route('POST /token', { json: { access_token: 'at', token_type: 'Bearer' } });
    const error = await fake.failure(fake.exchange(), 'invalid_upstream_response');
    expect(error.message).toMatch(/"id_token"/);
  });
});

describe('upstream OpenID Connect failures', () => {
  it("compares the authorization response's iss with the issuer, and requires it when the upstream says it sends it (RFC 9207)", async () => {
    const signIn = (iss?: string) =>
      fake
        .connector()
        .exchangeCode({ code: CODE, redirectUri: REDIRECT, codeVerifier: VERIFIER, nonce: NONCE, iss });
    expect((await fake.failure(signIn('https://evil.example'), 'upstream_error')).message).toBe(
      'the authorization response from the identity provider corp names another issuer in its iss parameter (RFC 9207)',
    );
    expect((await fake.failure(signIn(), 'upstream_error')).message).toBe(
      'the authorization response from the identity provider corp carries no iss parameter, which it says it sends (RFC 9207)',
    );
    expect(fake.upstream.requestsTo('POST /token')).toHaveLength(0);
    fake.discovery.authorization_response_iss_parameter_supported = false;
    expect((await signIn()).subject).toBe('u-100');
    fake.discovery.authorization_response_iss_parameter_supported = true;
  });

  it('reports an upstream that does not answer, or answers too slowly', async () => {
    const down = await closedPortUrl();
    expect((await fake.failure(start({ issuer: down }), 'upstream_unavailable')).message).toBe(
      'the identity provider corp did not answer',
    );
    fake.upstream.route('POST /token', { hang: true });
    const started = Date.now();
    const slow = fake.connector({}, { timeoutMs: 200 }).exchangeCode({
      code: CODE,
      redirectUri: REDIRECT,
      codeVerifier: VERIFIER,
      nonce: NONCE,
      iss: fake.upstream.url,
    });
    expect((await fake.failure(slow, 'upstream_unavailable')).message).toBe(
      'the identity provider corp did not answer',
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('reports 429 and 5xx as unavailable, with the wait Retry-After asks for, and asks only once', async () => {
    fake.upstream.route('POST /token', {
      status: 429,
      headers: { 'retry-after': '30' },
      json: { error: 'slow_down' },
    });
    expect((await fake.failure(fake.exchange(), 'upstream_unavailable')).message).toBe(
      'the identity provider corp is unavailable (HTTP 429); try again in 30 seconds',
    );
    expect(fake.upstream.requestsTo('POST /token')).toHaveLength(1);
    fake.upstream.route('POST /token', {
      json: { access_token: 'at', token_type: 'Bearer', id_token: fake.idToken },
    });
    fake.upstream.route('GET /jwks', { status: 502, raw: '<html>Bad Gateway</html>' });
    expect((await fake.failure(fake.exchange(), 'upstream_unavailable')).message).toBe(
      'the identity provider corp is unavailable (HTTP 502)',
    );
  });

  it('refuses a discovery document that is missing, not JSON, or for another issuer', async () => {
    expect(
      (await fake.failure(start({ issuer: `${fake.upstream.url}/other` }), 'invalid_upstream_response'))
        .message,
    ).toBe('the identity provider corp has no discovery document (HTTP 404)');
    fake.discovery.issuer = 'https://evil.example';
    expect((await fake.failure(start(), 'invalid_upstream_response')).message).toMatch(
      /^the identity provider corp has no usable discovery document \(.*"issuer"/,
    );
    fake.upstream.route('GET /.well-known/openid-configuration', { raw: '<html>Sign in</html>' });
    expect((await fake.failure(start(), 'invalid_upstream_response')).message).toBe(
      'the identity provider corp answered the discovery request with no JSON',
    );
  });

  it('takes an issuer configured with a trailing slash the upstream does not write', async () => {
    const issuer = `${fake.upstream.url}/realms/corp`;
    fake.upstream.route('GET /realms/corp/.well-known/openid-configuration', () => ({
      json: { ...fake.discovery, issuer },
    }));
    fake.idToken = await fake.sign({ iss: issuer });
    const connector = fake.connector({ issuer: `${issuer}/` });
    const identity = await connector.exchangeCode({
      code: CODE,
      redirectUri: REDIRECT,
      codeVerifier: VERIFIER,
      nonce: NONCE,
      iss: issuer,
    });
    expect(identity.subject).toBe('u-100');
  });

  it('reports a refused code with the plain-text reason, never quoting the code or verifier', async () => {
    const refuse = (description: string) =>
      fake.upstream.route('POST /token', {
        status: 400,
        json: { error: 'invalid_grant', error_description: description },
      });
    refuse('The authorization code has expired');
    expect((await fake.failure(fake.exchange(), 'upstream_error')).message).toBe(
      'the identity provider corp refused the sign-in (invalid_grant: The authorization code has expired)',
    );
    for (const quoted of [CODE, VERIFIER]) {
      refuse(`code ${quoted} is not valid`);
      expect((await fake.failure(fake.exchange(), 'upstream_error')).message).toBe(
        'the identity provider corp refused the sign-in (invalid_grant)',
      );
    }
    fake.upstream.route('POST /token', { status: 400, raw: '<html>Bad Request</html>' });
    expect((await fake.failure(fake.exchange(), 'upstream_error')).message).toBe(
      'the identity provider corp refused the sign-in',
    );
  });

  it('refuses a token response that is not JSON', async () => {
    fake.upstream.route('POST /token', { raw: '<html>Welcome</html>' });
    expect((await fake.failure(fake.exchange(), 'invalid_upstream_response')).message).toBe(
      'the identity provider corp answered the token request with no JSON',
    );
  });
});
