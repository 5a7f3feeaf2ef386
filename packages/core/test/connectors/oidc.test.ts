import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ACCESS_TOKEN,
  CLIENT_SECRET,
  CODE,
  type FakeOidc,
  NONCE,
  REDIRECT,
  startFakeOidc,
  VERIFIER,
} from './fake-oidc.js';

let fake: FakeOidc;

beforeEach(async () => {
  fake = await startFakeOidc();
});
afterEach(async () => {
  vi.useRealTimers();
  await fake.upstream.close();
});

const authorizationUrl = (overrides: Record<string, unknown> = {}) =>
  fake
    .connector(overrides)
    .authorizationUrl({ redirectUri: REDIRECT, state: 's', nonce: NONCE, codeChallenge: 'c'.repeat(43) });

describe('upstream OpenID Connect sign-in', () => {
  it('builds the authorization URL from discovery, with PKCE S256, state and nonce', async () => {
    const url = await authorizationUrl();
    expect(`${url.origin}${url.pathname}`).toBe(`${fake.upstream.url}/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'idgate',
      redirect_uri: REDIRECT,
      state: 's',
      nonce: NONCE,
      code_challenge: 'c'.repeat(43),
      code_challenge_method: 'S256',
      scope: 'openid profile email groups',
    });
  });

  it('exchanges the code with client_secret_basic and the verifier, and maps the verified claims', async () => {
    expect(await fake.exchange()).toEqual({
      subject: 'u-100',
      username: 'Alice',
      email: 'alice@corp.test',
      emailVerified: true,
      displayName: null,
      groups: ['eng'],
      upstreamAuthentication: { amr: [], acr: null },
    });
    const [request] = fake.upstream.requestsTo('POST /token');
    expect(Object.fromEntries(request?.form ?? [])).toEqual({
      grant_type: 'authorization_code',
      code: CODE,
      redirect_uri: REDIRECT,
      code_verifier: VERIFIER,
    });
    // RFC 6749 §2.3.1: id and secret are form-urlencoded before they are joined.
    const basic = /^Basic (.+)$/.exec(request?.headers.authorization ?? '')?.[1] ?? '';
    const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
    expect(atob(basic).split(':').map(decode)).toEqual(['idgate', CLIENT_SECRET]);
  });

  it('sends the client secret in the form when the upstream takes only client_secret_post', async () => {
    fake.discovery.token_endpoint_auth_methods_supported = ['client_secret_post', 'private_key_jwt'];
    expect((await fake.exchange()).subject).toBe('u-100');
    const [request] = fake.upstream.requestsTo('POST /token');
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.form.get('client_id')).toBe('idgate');
    expect(request?.form.get('client_secret')).toBe(CLIENT_SECRET);
  });

  it("reads the upstream's amr and acr from the ID token: strings only, bounded", async () => {
    fake.idToken = await fake.sign({
      amr: ['pwd', 'mfa', 7, '', 'x'.repeat(257)],
      acr: 'urn:corp:acr:strong',
    });
    expect((await fake.exchange()).upstreamAuthentication).toEqual({
      amr: ['pwd', 'mfa'],
      acr: 'urn:corp:acr:strong',
    });
    fake.idToken = await fake.sign({ amr: 'mfa', acr: 5 });
    expect((await fake.exchange()).upstreamAuthentication).toEqual({ amr: [], acr: null });
  });

  it('takes groups given as one string, and ignores what is not a string', async () => {
    fake.idToken = await fake.sign({ groups: 'eng' });
    expect((await fake.exchange()).groups).toEqual(['eng']);
    fake.idToken = await fake.sign({ groups: ['eng', 7, '', 'ops'] });
    expect((await fake.exchange()).groups).toEqual(['eng', 'ops']);
    fake.idToken = await fake.sign({ roles: ['admin'] });
    expect((await fake.exchange({ claims: { groups: 'roles' } })).groups).toEqual(['admin']);
  });

  it('merges userinfo when asked to, and refuses userinfo about someone else', async () => {
    expect((await fake.exchange({ useUserinfo: true })).displayName).toBe('Alice Liddell');
    expect(fake.upstream.requestsTo('GET /userinfo')[0]?.headers.authorization).toBe(
      `Bearer ${ACCESS_TOKEN}`,
    );
    fake.upstream.route('GET /userinfo', { json: { sub: 'u-999', name: 'Mallory' } });
    const error = await fake.failure(fake.exchange({ useUserinfo: true }), 'invalid_upstream_response');
    expect(error.message).toMatch(
      /^the identity provider corp answered userinfo with something unusable \(.*"sub"/,
    );
  });

  it('keeps the discovery document and the keys between sign-ins, and tries discovery again after a failure', async () => {
    fake.upstream.route('GET /.well-known/openid-configuration', {
      status: 503,
      raw: 'down for maintenance',
    });
    const connector = fake.connector();
    const signIn = () =>
      connector.exchangeCode({
        code: CODE,
        redirectUri: REDIRECT,
        codeVerifier: VERIFIER,
        nonce: NONCE,
        iss: fake.upstream.url,
      });
    await fake.failure(signIn(), 'upstream_unavailable');
    fake.upstream.route('GET /.well-known/openid-configuration', () => ({ json: fake.discovery }));
    for (let i = 0; i < 3; i++) expect((await signIn()).subject).toBe('u-100');
    await connector.authorizationUrl({
      redirectUri: REDIRECT,
      state: 's',
      nonce: NONCE,
      codeChallenge: 'c'.repeat(43),
    });
    expect(fake.upstream.requestsTo('GET /.well-known/openid-configuration')).toHaveLength(2);
    expect(fake.upstream.requestsTo('GET /jwks')).toHaveLength(1);
  });

  it('fetches the keys again for a key it does not know, once the ones it has are a minute old', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const connector = fake.connector();
    const signIn = () =>
      connector.exchangeCode({
        code: CODE,
        redirectUri: REDIRECT,
        codeVerifier: VERIFIER,
        nonce: NONCE,
        iss: fake.upstream.url,
      });
    expect((await signIn()).subject).toBe('u-100');
    const rotated = await fake.rotate('k2');
    vi.setSystemTime(Date.now() + 61_000);
    fake.idToken = await fake.sign({}, rotated, 'k2');
    expect((await signIn()).subject).toBe('u-100');
    expect(fake.upstream.requestsTo('GET /jwks')).toHaveLength(2);
  });

  it('sends every request through the fetch it is given', async () => {
    const seen: string[] = [];
    const recording: typeof fetch = (input, init) => {
      seen.push(new URL(String(input)).pathname);
      return fetch(input, init);
    };
    const connector = fake.connector({ useUserinfo: true }, { fetch: recording });
    await connector.exchangeCode({
      code: CODE,
      redirectUri: REDIRECT,
      codeVerifier: VERIFIER,
      nonce: NONCE,
      iss: fake.upstream.url,
    });
    expect(seen).toEqual(['/.well-known/openid-configuration', '/token', '/jwks', '/userinfo']);
  });
});

describe('upstream OpenID Connect presented access token', () => {
  const present = (tokenType = 'bearer') =>
    fake.connector().identityFromAccessToken({ accessToken: ACCESS_TOKEN, tokenType });

  it('trusts a presented access token only when userinfo confirms it, and only Bearer', async () => {
    expect((await present('Bearer')).subject).toBe('u-100');
    expect((await fake.failure(present('mac'), 'invalid_upstream_token')).message).toBe(
      'only Bearer tokens of the identity provider corp are accepted',
    );
    fake.upstream.route('GET /userinfo', {
      status: 401,
      headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
    });
    expect((await fake.failure(present(), 'invalid_upstream_token')).message).toBe(
      'the identity provider corp did not accept the access token',
    );
  });

  it('asks introspection first when the upstream offers it: active, and issued to us', async () => {
    fake.discovery.introspection_endpoint = `${fake.upstream.url}/introspect`;
    const introspect = (json: Record<string, unknown>) => fake.upstream.route('POST /introspect', { json });
    introspect({ active: true, client_id: 'idgate', sub: 'u-100' });
    expect((await present()).subject).toBe('u-100');
    const [request] = fake.upstream.requestsTo('POST /introspect');
    expect(request?.form.get('token')).toBe(ACCESS_TOKEN);
    expect(request?.form.get('token_type_hint')).toBe('access_token');

    introspect({ active: false });
    expect((await fake.failure(present(), 'invalid_upstream_token')).message).toBe(
      'the identity provider corp does not confirm the access token',
    );
    introspect({ active: true, client_id: 'someone-else', aud: ['someone-else'] });
    expect((await fake.failure(present(), 'invalid_upstream_token')).message).toBe(
      'the access token was issued to another application of the identity provider corp',
    );
    introspect({ active: true, client_id: 'idgate', sub: 'u-200' });
    await fake.failure(present(), 'invalid_upstream_response');
  });
});
