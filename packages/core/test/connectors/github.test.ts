import { GitHubProviderConfig } from '@idgate/schema';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorError, type ConnectorFailure, createGitHubConnector } from '../../src/index.js';
import { closedPortUrl, type FakeUpstream, fixture, startFakeUpstream } from './fake-upstream.js';

const CLIENT_SECRET = 'gh-client-secret-5f2b8c1e9d';
const TOKEN = fixture<{ access_token: string }>('github-token').access_token;
const PRESENTED = 'gho_presentedTokenFromTheCli0123456789';
const CODE = 'a1b2c3d4e5f6a7b8c9d0';
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const REDIRECT = 'https://id.example.test/oauth/callback/github';
const SECRETS = [CLIENT_SECRET, TOKEN, PRESENTED, VERIFIER, CODE];

let upstream: FakeUpstream;

beforeEach(async () => {
  upstream = await startFakeUpstream({
    'POST /login/oauth/access_token': { json: fixture('github-token') },
    'GET /api/v3/user': { json: fixture('github-user') },
    'GET /api/v3/user/emails': { json: fixture('github-emails') },
    'GET /api/v3/user/orgs': { json: fixture('github-orgs') },
    'GET /api/v3/user/teams': (request, fake) =>
      request.query.get('page') === '2'
        ? { json: fixture('github-teams-page2') }
        : {
            json: fixture('github-teams-page1'),
            headers: {
              link: `<${fake.url}/api/v3/user/teams?per_page=100&page=2>; rel="next", <${fake.url}/api/v3/user/teams?per_page=100&page=2>; rel="last"`,
            },
          },
  });
});
afterEach(() => upstream.close());

/** GitHub Enterprise shape: the API under /api/v3 of the same host. */
function connector(overrides: Record<string, unknown> = {}, timeoutMs?: number, base = upstream.url) {
  const config = GitHubProviderConfig.parse({
    type: 'github',
    name: 'github',
    clientId: 'Iv1.8a61f9b3a7aba766',
    clientSecret: CLIENT_SECRET,
    baseUrl: base,
    apiUrl: `${base}/api/v3`,
    ...overrides,
  });
  return createGitHubConnector(config, timeoutMs === undefined ? {} : { timeoutMs });
}

const signIn = (overrides: Record<string, unknown> = {}) =>
  connector(overrides).exchangeCode({
    code: CODE,
    redirectUri: REDIRECT,
    codeVerifier: VERIFIER,
    nonce: 'unused',
  });

/** The ConnectorError a promise rejects with; its message must never carry a secret or a token. */
async function failure(promise: Promise<unknown>, expected: ConnectorFailure): Promise<ConnectorError> {
  const error = await promise.then(
    () => expect.unreachable('expected a ConnectorError'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectorError);
  const connectorError = error as ConnectorError;
  expect(connectorError.code).toBe(expected);
  for (const secret of SECRETS) expect(connectorError.message).not.toContain(secret);
  return connectorError;
}

describe('GitHub authorization URL', () => {
  it('asks for the profile, emails and orgs, with PKCE S256 and no nonce', async () => {
    const url = await connector().authorizationUrl({
      redirectUri: REDIRECT,
      state: 'st-1',
      nonce: 'n-1',
      codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    });
    expect(`${url.origin}${url.pathname}`).toBe(`${upstream.url}/login/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: 'Iv1.8a61f9b3a7aba766',
      redirect_uri: REDIRECT,
      scope: 'read:user user:email read:org',
      state: 'st-1',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
  });
});

describe('GitHub sign-in', () => {
  it('exchanges the code and reads the identity, orgs and both pages of teams', async () => {
    expect(await signIn()).toEqual({
      subject: '1',
      username: 'octocat',
      email: 'octocat@github.com',
      emailVerified: true,
      displayName: 'monalisa octocat',
      groups: ['github', 'Octo-Org', 'github:justice-league', 'Octo-Org:platform-sre'],
    });

    const [exchange] = upstream.requestsTo('POST /login/oauth/access_token');
    expect(exchange?.headers.accept).toBe('application/json');
    expect(exchange?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(exchange?.form ?? [])).toEqual({
      client_id: 'Iv1.8a61f9b3a7aba766',
      client_secret: CLIENT_SECRET,
      code: CODE,
      redirect_uri: REDIRECT,
      code_verifier: VERIFIER,
    });

    const apiCalls = upstream.requests.filter((request) => request.path.startsWith('/api/v3/'));
    expect(apiCalls).toHaveLength(5);
    for (const call of apiCalls) {
      expect(call.method).toBe('GET');
      expect(call.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(call.headers.accept).toBe('application/vnd.github+json');
      expect(call.headers['x-github-api-version']).toBe('2022-11-28');
    }
    const teams = upstream.requestsTo('GET /api/v3/user/teams');
    expect(teams.map((request) => request.query.toString())).toEqual(['per_page=100', 'per_page=100&page=2']);
    expect(upstream.requestsTo('GET /api/v3/user/orgs')[0]?.query.get('per_page')).toBe('100');
  });

  it('leaves teams out without loadTeams', async () => {
    expect((await signIn({ loadTeams: false })).groups).toEqual(['github', 'Octo-Org']);
    expect(upstream.requestsTo('GET /api/v3/user/teams')).toHaveLength(0);
  });

  it('gives no email when no primary address is verified', async () => {
    upstream.route('GET /api/v3/user/emails', {
      json: [
        { email: 'octocat@github.com', verified: false, primary: true, visibility: 'public' },
        { email: 'octocat@example.com', verified: true, primary: false, visibility: null },
      ],
    });
    expect(await signIn()).toMatchObject({ email: null, emailVerified: false });
  });

  it('gives no email when the token may not read the addresses (404)', async () => {
    upstream.route('GET /api/v3/user/emails', { status: 404, json: { message: 'Not Found' } });
    expect(await signIn()).toMatchObject({ email: null, emailVerified: false, username: 'octocat' });
  });

  it('accepts a member of an allowed organization, whatever the case', async () => {
    expect((await signIn({ allowedOrganizations: ['acme', 'OCTO-ORG'] })).subject).toBe('1');
  });

  it('counts an organization known only from a team', async () => {
    upstream.route('GET /api/v3/user/orgs', { json: [] });
    expect((await signIn({ allowedOrganizations: ['octo-org'] })).groups).toEqual([
      'github:justice-league',
      'Octo-Org:platform-sre',
    ]);
  });

  it('refuses a user in none of the allowed organizations', async () => {
    const error = await failure(signIn({ allowedOrganizations: ['acme'] }), 'not_allowed');
    expect(error.message).toBe('Your GitHub account is not in an organization allowed to sign in here');
  });

  it('stops following pages after 10', async () => {
    upstream.route('GET /api/v3/user/teams', (request, fake) => ({
      json: [],
      headers: {
        link: `<${fake.url}/api/v3/user/teams?page=${Number(request.query.get('page') ?? 1) + 1}>; rel="next"`,
      },
    }));
    await signIn();
    expect(upstream.requestsTo('GET /api/v3/user/teams')).toHaveLength(10);
  });

  it('never follows a next page on another origin (the token would go there)', async () => {
    const elsewhere = await startFakeUpstream({ 'GET /user/teams': { json: [] } });
    upstream.route('GET /api/v3/user/teams', {
      json: fixture('github-teams-page1'),
      headers: { link: `<${elsewhere.url}/user/teams?page=2>; rel="next"` },
    });
    await failure(signIn(), 'invalid_upstream_response');
    expect(elsewhere.requests).toHaveLength(0);
    await elsewhere.close();
  });
});

describe('GitHub presented access token', () => {
  it('reads the identity with a bearer token (any case)', async () => {
    const identity = await connector().identityFromAccessToken({
      accessToken: PRESENTED,
      tokenType: 'Bearer',
    });
    expect(identity.username).toBe('octocat');
    expect(
      upstream.requests.every((request) => request.headers.authorization === `Bearer ${PRESENTED}`),
    ).toBe(true);
    expect(upstream.requestsTo('POST /login/oauth/access_token')).toHaveLength(0);
  });

  it('refuses a token GitHub does not accept (401)', async () => {
    upstream.route('GET /api/v3/user', { status: 401, json: fixture('github-bad-credentials') });
    await failure(
      connector().identityFromAccessToken({ accessToken: PRESENTED, tokenType: 'bearer' }),
      'invalid_upstream_token',
    );
  });

  it('refuses a token that is not a bearer token without asking GitHub', async () => {
    await failure(
      connector().identityFromAccessToken({ accessToken: PRESENTED, tokenType: 'mac' }),
      'invalid_upstream_token',
    );
    await failure(
      connector().identityFromAccessToken({ accessToken: 'bad\r\nheader', tokenType: 'bearer' }),
      'invalid_upstream_token',
    );
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('GitHub failures', () => {
  it('reports a refused code (200 with error) with the plain-text description', async () => {
    upstream.route('POST /login/oauth/access_token', { json: fixture('github-token-error') });
    const error = await failure(signIn(), 'upstream_error');
    expect(error.message).toBe(
      'GitHub refused the sign-in (bad_verification_code: The code passed is incorrect or expired.)',
    );
    expect(upstream.requestsTo('GET /api/v3/user')).toHaveLength(0);
  });

  it('drops a description that repeats a secret or is not plain text', async () => {
    upstream.route('POST /login/oauth/access_token', {
      json: { error: 'incorrect_client_credentials', error_description: `secret ${CLIENT_SECRET} is wrong` },
    });
    expect((await failure(signIn(), 'upstream_error')).message).toBe(
      'GitHub refused the sign-in (incorrect_client_credentials)',
    );
    const refuse = (description: string) =>
      upstream.route('POST /login/oauth/access_token', {
        json: { error: 'x', error_description: description },
      });
    refuse('<script>alert(1)</script>');
    expect((await failure(signIn(), 'upstream_error')).message).toBe('GitHub refused the sign-in (x)');
    refuse('y'.repeat(500));
    const cut = (await failure(signIn(), 'upstream_error')).message;
    expect(cut).toBe(`GitHub refused the sign-in (x: ${'y'.repeat(199)}…)`);
  });

  it('calls a token refused right after the exchange an upstream error', async () => {
    upstream.route('GET /api/v3/user', { status: 401, json: fixture('github-bad-credentials') });
    await failure(signIn(), 'upstream_error');
  });

  it('rejects a token of another type from the exchange', async () => {
    upstream.route('POST /login/oauth/access_token', { json: { access_token: TOKEN, token_type: 'mac' } });
    await failure(signIn(), 'invalid_upstream_response');
  });

  it('reports GitHub down, timing out or failing as unavailable', async () => {
    const down = await closedPortUrl();
    const error = await failure(
      connector({}, undefined, down).exchangeCode({
        code: CODE,
        redirectUri: REDIRECT,
        codeVerifier: VERIFIER,
        nonce: 'n',
      }),
      'upstream_unavailable',
    );
    expect(error.message).toBe('GitHub did not answer');

    upstream.route('GET /api/v3/user', { hang: true });
    const started = Date.now();
    const timeout = connector({}, 200).identityFromAccessToken({
      accessToken: PRESENTED,
      tokenType: 'bearer',
    });
    expect((await failure(timeout, 'upstream_unavailable')).message).toBe('GitHub did not answer');
    expect(Date.now() - started).toBeLessThan(5_000);

    upstream.route('GET /api/v3/user', { status: 502, raw: '<html>Bad Gateway</html>' });
    await failure(signIn(), 'upstream_unavailable');
  });

  it('rejects bodies that are not JSON or not what GitHub documents', async () => {
    upstream.route('GET /api/v3/user', { raw: '{"login": "octocat", garbage' });
    await failure(signIn(), 'invalid_upstream_response');
    upstream.route('GET /api/v3/user', { json: { ...fixture<object>('github-user'), id: '1' } });
    await failure(signIn(), 'invalid_upstream_response');
    upstream.route('GET /api/v3/user', { json: fixture('github-user') });
    upstream.route('GET /api/v3/user/teams', { json: [{ slug: 'no-org' }] });
    await failure(signIn(), 'invalid_upstream_response');
    upstream.route('POST /login/oauth/access_token', { raw: `access_token=${TOKEN}&token_type=bearer` });
    await failure(signIn(), 'invalid_upstream_response');
  });

  it('reports other refusals of the API as upstream errors', async () => {
    upstream.route('GET /api/v3/user/orgs', { status: 403, json: { message: 'Resource not accessible' } });
    expect((await failure(signIn(), 'upstream_error')).message).toBe(
      'GitHub refused the /user/orgs request (HTTP 403)',
    );
  });
});
