import { GitLabProviderConfig } from '@idgate/schema';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGitLabConnector } from '../../src/connectors/gitlab.js';
import type { ConnectorFailure } from '../../src/connectors/types.js';
import { connectorFailure } from './connector-failure.js';
import { closedPortUrl, type FakeUpstream, fixture, startFakeUpstream } from './fake-upstream.js';

const CLIENT_SECRET = 'gloas-8f3c2a9d7e6b5a4c3d2e1f0a9b8c7d6e';
const TOKEN = fixture<{ access_token: string }>('gitlab-token').access_token;
const PRESENTED = 'c0ffee5ec0ffee5ec0ffee5ec0ffee5ec0ffee5ec0ffee5ec0ffee5ec0ffee5e';
const CODE = '1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b';
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const REDIRECT = 'https://id.example.test/oauth/callback/gitlab';
const SECRETS = [CLIENT_SECRET, TOKEN, PRESENTED, VERIFIER, CODE];

let upstream: FakeUpstream;

beforeEach(async () => {
  upstream = await startFakeUpstream({
    'POST /oauth/token': { json: fixture('gitlab-token') },
    'GET /api/v4/user': { json: fixture('gitlab-user') },
    'GET /oauth/userinfo': { json: fixture('gitlab-userinfo') },
  });
});
afterEach(() => upstream.close());

function connector(overrides: Record<string, unknown> = {}, timeoutMs?: number, baseUrl = upstream.url) {
  const config = GitLabProviderConfig.parse({
    type: 'gitlab',
    name: 'gitlab',
    clientId: 'a4f5e8c1b2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9',
    clientSecret: CLIENT_SECRET,
    baseUrl,
    ...overrides,
  });
  return createGitLabConnector(config, timeoutMs === undefined ? {} : { timeoutMs });
}

const signIn = (overrides: Record<string, unknown> = {}) =>
  connector(overrides).exchangeCode({
    code: CODE,
    redirectUri: REDIRECT,
    codeVerifier: VERIFIER,
    nonce: 'unused',
  });

const present = (accessToken = PRESENTED, tokenType = 'bearer') =>
  connector().identityFromAccessToken({ accessToken, tokenType });

/** The ConnectorError a promise rejects with; no secret or token of these tests may show in it. */
const failure = (promise: Promise<unknown>, expected: ConnectorFailure) =>
  connectorFailure(promise, expected, SECRETS);

describe('GitLab authorization URL', () => {
  it('asks for read_user, openid and email with PKCE S256', async () => {
    const url = await connector().authorizationUrl({
      redirectUri: REDIRECT,
      state: 'st-1',
      nonce: 'n-1',
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    });
    expect(`${url.origin}${url.pathname}`).toBe(`${upstream.url}/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: 'a4f5e8c1b2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9',
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'read_user openid email',
      state: 'st-1',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
  });
});

describe('GitLab sign-in', () => {
  it('exchanges the code and reads the user and the groups of userinfo', async () => {
    expect(await signIn()).toEqual({
      subject: '1',
      username: 'john_smith',
      email: 'john@example.com',
      emailVerified: true,
      displayName: 'John Smith',
      groups: ['acme', 'acme/platform', 'acme/platform/infra', 'oss-friends'],
      upstreamState: JSON.stringify({
        refreshToken: '8257e65c97202ed1726cf9571600918f3bffb2544b26e00a61df9897668c33a1',
        redirectUri: REDIRECT,
      }),
    });

    const [exchange] = upstream.requestsTo('POST /oauth/token');
    expect(exchange?.headers.accept).toBe('application/json');
    expect(exchange?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(exchange?.form ?? [])).toEqual({
      grant_type: 'authorization_code',
      client_id: 'a4f5e8c1b2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9',
      client_secret: CLIENT_SECRET,
      code: CODE,
      redirect_uri: REDIRECT,
      code_verifier: VERIFIER,
    });
    for (const key of ['GET /api/v4/user', 'GET /oauth/userinfo']) {
      const calls = upstream.requestsTo(key);
      expect(calls).toHaveLength(1);
      expect(calls[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(calls[0]?.headers.accept).toBe('application/json');
    }
  });

  it('marks the email unverified when the account is not confirmed', async () => {
    upstream.route('GET /api/v4/user', { json: { ...fixture<object>('gitlab-user'), confirmed_at: null } });
    expect(await signIn()).toMatchObject({ email: 'john@example.com', emailVerified: false });
  });

  it('gives no email when GitLab shows none', async () => {
    const { email: _, ...user } = fixture<Record<string, unknown>>('gitlab-user');
    upstream.route('GET /api/v4/user', { json: user });
    expect(await signIn()).toMatchObject({ email: null, emailVerified: false });
  });

  it('gives no groups when userinfo has none', async () => {
    const { groups: _, ...userinfo } = fixture<Record<string, unknown>>('gitlab-userinfo');
    upstream.route('GET /oauth/userinfo', { json: userinfo });
    expect((await signIn()).groups).toEqual([]);
  });

  it('accepts a member of an allowed group or of one of its subgroups, whatever the case', async () => {
    expect((await signIn({ allowedGroups: ['oss-friends'] })).subject).toBe('1');
    upstream.route('GET /oauth/userinfo', {
      json: { ...fixture<object>('gitlab-userinfo'), groups: ['ACME/Platform/infra'] },
    });
    expect((await signIn({ allowedGroups: ['other', 'acme/platform'] })).groups).toEqual([
      'ACME/Platform/infra',
    ]);
  });

  it('refuses a user in none of the allowed groups (neither a parent nor a mere prefix counts)', async () => {
    upstream.route('GET /oauth/userinfo', {
      json: {
        ...fixture<object>('gitlab-userinfo'),
        groups: ['acme', 'acme/platformer', 'acme/platform-labs'],
      },
    });
    const error = await failure(signIn({ allowedGroups: ['acme/platform'] }), 'not_allowed');
    expect(error.message).toBe('Your GitLab account is not in a group allowed to sign in here');
  });
});

describe('GitLab presented access token', () => {
  it('reads the identity with a bearer token (any case)', async () => {
    expect((await present(PRESENTED, 'BEARER')).username).toBe('john_smith');
    expect(
      upstream.requests.every((request) => request.headers.authorization === `Bearer ${PRESENTED}`),
    ).toBe(true);
    expect(upstream.requestsTo('POST /oauth/token')).toHaveLength(0);
  });

  it('refuses a token GitLab does not accept (401)', async () => {
    upstream.route('GET /api/v4/user', { status: 401, json: fixture('gitlab-unauthorized') });
    await failure(present(), 'invalid_upstream_token');
  });

  it('refuses a token that is not a bearer token without asking GitLab', async () => {
    await failure(present(PRESENTED, 'mac'), 'invalid_upstream_token');
    await failure(present('', 'bearer'), 'invalid_upstream_token');
    expect(upstream.requests).toHaveLength(0);
  });

  it('reports a token without the openid scope as an upstream error', async () => {
    upstream.route('GET /oauth/userinfo', {
      status: 403,
      json: {
        error: 'insufficient_scope',
        error_description: 'The request requires higher privileges than provided by the access token.',
      },
    });
    expect((await failure(present(), 'upstream_error')).message).toBe(
      'GitLab refused the userinfo request (HTTP 403)',
    );
  });
});

describe('GitLab failures', () => {
  it('reports a refused code (400) with the plain-text description', async () => {
    upstream.route('POST /oauth/token', { status: 400, json: fixture('gitlab-token-error') });
    const error = await failure(signIn(), 'upstream_error');
    expect(error.message).toMatch(
      /^GitLab refused the sign-in \(invalid_grant: The provided authorization grant is invalid/,
    );
    expect(error.message.length).toBeLessThanOrEqual(
      'GitLab refused the sign-in (invalid_grant: )'.length + 200,
    );
    expect(upstream.requestsTo('GET /api/v4/user')).toHaveLength(0);
  });

  it('drops a description that repeats a secret', async () => {
    upstream.route('POST /oauth/token', {
      status: 401,
      json: { error: 'invalid_client', error_description: `unknown client secret ${CLIENT_SECRET}` },
    });
    expect((await failure(signIn(), 'upstream_error')).message).toBe(
      'GitLab refused the sign-in (invalid_client)',
    );
    upstream.route('POST /oauth/token', { status: 400, raw: '<html>Bad Request</html>' });
    expect((await failure(signIn(), 'upstream_error')).message).toBe('GitLab refused the sign-in');
  });

  it('calls a token refused right after the exchange an upstream error', async () => {
    upstream.route('GET /oauth/userinfo', { status: 401, json: fixture('gitlab-unauthorized') });
    await failure(signIn(), 'upstream_error');
  });

  it('rejects a token of another type from the exchange', async () => {
    upstream.route('POST /oauth/token', { json: { ...fixture<object>('gitlab-token'), token_type: 'mac' } });
    await failure(signIn(), 'invalid_upstream_response');
  });

  it('reports GitLab down, timing out or failing as unavailable', async () => {
    const down = connector({}, undefined, await closedPortUrl());
    const error = await failure(
      down.exchangeCode({ code: CODE, redirectUri: REDIRECT, codeVerifier: VERIFIER, nonce: 'n' }),
      'upstream_unavailable',
    );
    expect(error.message).toBe('GitLab did not answer');

    upstream.route('GET /oauth/userinfo', { hang: true });
    const started = Date.now();
    const timeout = connector({}, 200).identityFromAccessToken({
      accessToken: PRESENTED,
      tokenType: 'bearer',
    });
    expect((await failure(timeout, 'upstream_unavailable')).message).toBe('GitLab did not answer');
    expect(Date.now() - started).toBeLessThan(5_000);

    upstream.route('GET /oauth/userinfo', { json: fixture('gitlab-userinfo') });
    upstream.route('POST /oauth/token', { status: 503, raw: '<html>Service Unavailable</html>' });
    await failure(signIn(), 'upstream_unavailable');
  });

  it('rejects bodies that are not JSON or not what GitLab documents, saying what is amiss', async () => {
    const refusal = async () => (await failure(signIn(), 'invalid_upstream_response')).message;
    upstream.route('GET /api/v4/user', { raw: '<!DOCTYPE html><html>Sign in</html>' });
    expect(await refusal()).toBe('GitLab answered the user request with no JSON');
    upstream.route('GET /api/v4/user', { json: { ...fixture<object>('gitlab-user'), id: '1' } });
    expect(await refusal()).toBe(
      'GitLab answered the user request unexpectedly (id: Invalid input: expected number, received string)',
    );
    upstream.route('GET /api/v4/user', { json: { ...fixture<object>('gitlab-user'), confirmed_at: 1 } });
    expect(await refusal()).toMatch(/^GitLab answered the user request unexpectedly \(confirmed_at: /);
    upstream.route('GET /api/v4/user', { json: fixture('gitlab-user') });
    upstream.route('GET /oauth/userinfo', {
      json: { ...fixture<object>('gitlab-userinfo'), groups: 'acme' },
    });
    expect(await refusal()).toMatch(/^GitLab answered the userinfo request unexpectedly \(groups: /);
    upstream.route('GET /oauth/userinfo', {
      json: { ...fixture<object>('gitlab-userinfo'), groups: ['acme', 7] },
    });
    expect(await refusal()).toMatch(/^GitLab answered the userinfo request unexpectedly \(groups\.1: /);
    upstream.route('POST /oauth/token', { raw: `{"access_token": "${TOKEN}", ` });
    expect(await refusal()).toBe('GitLab answered the token request with no JSON');
  });

  it('reports a rate limit (429) as unavailable, with the wait Retry-After asks for', async () => {
    upstream.route('GET /oauth/userinfo', {
      status: 429,
      headers: { 'retry-after': '45' },
      raw: 'Retry later',
    });
    expect((await failure(present(), 'upstream_unavailable')).message).toBe(
      'GitLab is unavailable (HTTP 429); try again in 45 seconds',
    );
    expect(upstream.requestsTo('GET /oauth/userinfo')).toHaveLength(1);
  });
});
