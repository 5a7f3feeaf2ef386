import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type AuthorizationRequestOptions,
  computeCodeChallenge,
  createAuthorizationRequest,
  createIdgateClient,
  generateCodeVerifier,
  IdgateAuthorizationError,
  IdgateSdkError,
  parseAuthorizationResponse,
} from '../src/index.js';

/** base64url(SHA-256(ASCII(verifier))), computed with node:crypto, independently of the SDK. */
const s256 = (verifier: string) => createHash('sha256').update(verifier, 'ascii').digest('base64url');
const BASE64URL_43 = /^[A-Za-z0-9_-]{43}$/;
const issuer = 'https://id.example.com/oauth';
const options = {
  issuer,
  clientId: 'app',
  redirectUri: 'https://app.example.com/callback',
} as const satisfies AuthorizationRequestOptions;

describe('RFC 7636 PKCE', () => {
  it('computes the Appendix B test vector', async () => {
    expect(await computeCodeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('agrees with node:crypto for verifiers of 43 to 128 unreserved characters', async () => {
    for (const verifier of [
      'a'.repeat(43),
      `${'~._-'.repeat(32)}`,
      'Z9'.repeat(64),
      generateCodeVerifier(),
    ]) {
      expect(await computeCodeChallenge(verifier)).toBe(s256(verifier));
    }
  });

  it('refuses a verifier that RFC 7636 §4.1 does not allow', async () => {
    for (const bad of ['', 'a'.repeat(42), 'a'.repeat(129), `${'a'.repeat(42)}+`, `${'a'.repeat(42)}é`]) {
      await expect(computeCodeChallenge(bad)).rejects.toThrow(IdgateSdkError);
    }
  });

  it('generates 43-character base64url verifiers (32 random bytes), all different', () => {
    const verifiers = Array.from({ length: 200 }, generateCodeVerifier);
    for (const verifier of verifiers) {
      expect(verifier).toMatch(BASE64URL_43);
      expect(Buffer.from(verifier, 'base64url')).toHaveLength(32);
    }
    expect(new Set(verifiers).size).toBe(200);
  });
});

describe('createAuthorizationRequest', () => {
  it('builds {issuer}/authorize with code, PKCE S256, state and nonce, in order', async () => {
    const request = await createAuthorizationRequest(options);
    expect(request.url).toBeInstanceOf(URL);
    expect(`${request.url.origin}${request.url.pathname}`).toBe(`${issuer}/authorize`);
    expect([...request.url.searchParams.keys()]).toEqual([
      'response_type',
      'client_id',
      'redirect_uri',
      'scope',
      'state',
      'nonce',
      'code_challenge',
      'code_challenge_method',
    ]);
    const query = Object.fromEntries(request.url.searchParams);
    expect(query).toEqual({
      response_type: 'code',
      client_id: 'app',
      redirect_uri: 'https://app.example.com/callback',
      scope: 'openid',
      state: request.state,
      nonce: request.nonce,
      code_challenge: s256(request.codeVerifier),
      code_challenge_method: 'S256',
    });
    expect(request.codeVerifier).toMatch(BASE64URL_43);
    expect(request.state).toMatch(BASE64URL_43);
    expect(request.nonce).toMatch(BASE64URL_43);
    expect(request.url.search).toContain('&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcallback&');
  });

  it('generates a fresh verifier, state and nonce every time', async () => {
    const requests = await Promise.all(Array.from({ length: 50 }, () => createAuthorizationRequest(options)));
    const values = requests.flatMap((r) => [r.codeVerifier, r.state, r.nonce]);
    expect(new Set(values).size).toBe(150);
  });

  it('sends no nonce without the openid scope, and the given state, nonce, prompt, max_age, login_hint', async () => {
    const plain = await createAuthorizationRequest({ ...options, scope: 'groups  offline_access' });
    expect(plain.nonce).toBeUndefined();
    expect('nonce' in plain).toBe(false);
    expect(plain.url.searchParams.has('nonce')).toBe(false);
    expect(plain.url.searchParams.get('scope')).toBe('groups offline_access');

    const custom = await createAuthorizationRequest({
      ...options,
      scope: 'openid groups',
      state: 'my state',
      nonce: 'n-1',
      prompt: ['login', 'consent'],
      maxAge: 0,
      loginHint: 'alice',
    });
    expect([custom.state, custom.nonce]).toEqual(['my state', 'n-1']);
    expect(custom.url.search).toBe(
      '?response_type=code&client_id=app&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcallback' +
        '&scope=openid+groups&state=my+state&nonce=n-1' +
        `&code_challenge=${s256(custom.codeVerifier)}&code_challenge_method=S256` +
        '&prompt=login+consent&max_age=0&login_hint=alice',
    );
    const none = await createAuthorizationRequest({ ...options, prompt: 'none' });
    expect(none.url.searchParams.get('prompt')).toBe('none');
  });

  it('sends acr_values space-separated, and none when empty', async () => {
    const one = await createAuthorizationRequest({ ...options, acrValues: 'urn:idgate:acr:mfa' });
    expect(one.url.searchParams.get('acr_values')).toBe('urn:idgate:acr:mfa');
    const two = await createAuthorizationRequest({
      ...options,
      acrValues: ['urn:idgate:acr:mfa', 'urn:idgate:acr:sf'],
    });
    expect(two.url.searchParams.get('acr_values')).toBe('urn:idgate:acr:mfa urn:idgate:acr:sf');
    const empty = await createAuthorizationRequest({ ...options, acrValues: [] });
    expect(empty.url.searchParams.has('acr_values')).toBe(false);
  });

  it.each([
    ['a baseUrl', { baseUrl: 'https://id.example.com' }, 'https://id.example.com/oauth/authorize'],
    [
      'a baseUrl with a slash',
      { baseUrl: 'https://id.example.com/' },
      'https://id.example.com/oauth/authorize',
    ],
    [
      'a baseUrl under a prefix',
      { baseUrl: new URL('https://x.example/idgate/') },
      'https://x.example/idgate/oauth/authorize',
    ],
    ['an issuer', { issuer }, 'https://id.example.com/oauth/authorize'],
    ['an issuer with a slash', { issuer: `${issuer}/` }, 'https://id.example.com/oauth/authorize'],
    ['an issuer URL', { issuer: new URL(issuer) }, 'https://id.example.com/oauth/authorize'],
  ] as const)('finds the authorization endpoint from %s', async (_label, where, endpoint) => {
    const { url } = await createAuthorizationRequest({
      clientId: 'app',
      redirectUri: 'http://127.0.0.1/cb',
      ...where,
    });
    expect(`${url.origin}${url.pathname}`).toBe(endpoint);
  });

  it('is available on the client, below its baseUrl', async () => {
    const client = createIdgateClient({ baseUrl: 'http://localhost:8080/idgate' });
    const request = await client.createAuthorizationRequest({
      clientId: 'cli',
      redirectUri: 'http://127.0.0.1:8000/',
    });
    expect(`${request.url.origin}${request.url.pathname}`).toBe(
      'http://localhost:8080/idgate/oauth/authorize',
    );
    expect(request.url.searchParams.get('code_challenge')).toBe(s256(request.codeVerifier));
    expect(request.nonce).toMatch(BASE64URL_43);
  });

  it.each([
    ['neither baseUrl nor issuer', { clientId: 'app', redirectUri: 'https://a/cb' }],
    ['both baseUrl and issuer', { ...options, baseUrl: 'https://id.example.com' }],
    ['an issuer with a query', { ...options, issuer: `${issuer}?x=1` }],
    ['a relative issuer', { ...options, issuer: '/oauth' }],
    ['a non-http issuer', { ...options, issuer: 'ftp://id.example.com/oauth' }],
    ['an empty clientId', { ...options, clientId: '' }],
    ['a relative redirectUri', { ...options, redirectUri: '/callback' }],
    ['a redirectUri with a fragment', { ...options, redirectUri: 'https://a/cb#x' }],
    ['an empty scope', { ...options, scope: '  ' }],
    ['an empty state', { ...options, state: '' }],
    ['prompt none with login', { ...options, prompt: ['none', 'login'] }],
    ['a negative maxAge', { ...options, maxAge: -1 }],
    ['a fractional maxAge', { ...options, maxAge: 1.5 }],
  ])('refuses %s', async (_label, bad) => {
    await expect(createAuthorizationRequest(bad as AuthorizationRequestOptions)).rejects.toThrow(
      IdgateSdkError,
    );
  });
});

describe('parseAuthorizationResponse', () => {
  const state = 'st-1';
  const callback = (query: string) => `https://app.example.com/callback?${query}`;
  const iss = `iss=${encodeURIComponent(issuer)}`;

  it('returns the code of a response whose state and iss match', () => {
    expect(
      parseAuthorizationResponse(callback(`code=c%2B1&state=${state}&iss=${encodeURIComponent(issuer)}`), {
        state,
        issuer,
      }),
    ).toEqual({
      code: 'c+1',
    });
  });

  it('accepts a URL object (no iss needed when no issuer is expected), and a path with a query', () => {
    expect(parseAuthorizationResponse(new URL(callback(`state=${state}&code=c`)), { state })).toEqual({
      code: 'c',
    });
    expect(parseAuthorizationResponse(`/callback?code=c&state=${state}&${iss}`, { state, issuer })).toEqual({
      code: 'c',
    });
  });

  it('throws IdgateAuthorizationError for an error response', () => {
    const error = thrown(() =>
      parseAuthorizationResponse(
        callback(
          `error=access_denied&error_description=The+user+said+no&error_uri=https%3A%2F%2Fh&state=${state}&iss=${issuer}`,
        ),
        { state, issuer },
      ),
    );
    expect(error).toBeInstanceOf(IdgateAuthorizationError);
    expect(error).toBeInstanceOf(IdgateSdkError);
    expect(error).toMatchObject({
      name: 'IdgateAuthorizationError',
      message: 'authorization failed: access_denied (The user said no)',
      error: 'access_denied',
      errorDescription: 'The user said no',
      errorUri: 'https://h',
      state,
    });
    const bare = thrown(() =>
      parseAuthorizationResponse(callback(`error=login_required&state=${state}`), { state }),
    );
    expect(bare).toMatchObject({
      message: 'authorization failed: login_required',
      errorDescription: undefined,
    });
  });

  it.each([
    ['a state mismatch', `code=c&state=other&${iss}`, /differs from the state of the request/],
    ['a missing state', `code=c&${iss}`, /carries no state/],
    [
      'a state mismatch on an error response',
      `error=access_denied&state=other&${iss}`,
      /differs from the state/,
    ],
    ['a missing iss when an issuer is expected', `code=c&state=${state}`, /carries no iss/],
    ['an empty iss', `code=c&state=${state}&iss=`, /RFC 9207/],
    [
      'an iss of another issuer',
      `code=c&state=${state}&iss=https%3A%2F%2Fevil.example%2Foauth`,
      /comes from issuer "https:\/\/evil.example\/oauth", not "https:\/\/id.example.com\/oauth" \(RFC 9207\)/,
    ],
    [
      'an iss that differs only by a slash',
      `code=c&state=${state}&iss=${encodeURIComponent(`${issuer}/`)}`,
      /RFC 9207/,
    ],
    [
      'an iss mismatch on an error response',
      `error=access_denied&state=${state}&iss=https%3A%2F%2Fevil`,
      /RFC 9207/,
    ],
    ['a missing code', `state=${state}&${iss}`, /neither a code nor an error/],
    ['an empty code', `code=&state=${state}&${iss}`, /neither a code nor an error/],
    ['a repeated code', `code=a&code=b&state=${state}&${iss}`, /repeats the code parameter/],
    ['a repeated state', `code=a&state=${state}&state=${state}&${iss}`, /repeats the state parameter/],
    ['a repeated iss', `code=a&state=${state}&${iss}&${iss}`, /repeats the iss parameter/],
  ])('throws IdgateSdkError for %s', (_label, query, message) => {
    const error = thrown(() => parseAuthorizationResponse(callback(query), { state, issuer }));
    expect(error).toBeInstanceOf(IdgateSdkError);
    expect(error).not.toBeInstanceOf(IdgateAuthorizationError);
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('other');
  });

  it('refuses an empty expected state (that would accept a response without state)', () => {
    expect(() => parseAuthorizationResponse(callback('code=c&state='), { state: '' })).toThrow(
      IdgateSdkError,
    );
  });

  it('round-trips with createAuthorizationRequest', async () => {
    const request = await createAuthorizationRequest(options);
    const back = new URL(options.redirectUri);
    back.searchParams.set('code', 'xyz');
    back.searchParams.set('state', request.state);
    back.searchParams.set('iss', issuer);
    expect(parseAuthorizationResponse(back, { state: request.state, issuer })).toEqual({ code: 'xyz' });
  });
});

function thrown(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}
