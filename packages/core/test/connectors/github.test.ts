import { describe, expect, it } from 'vitest';
import {
  CLIENT_SECRET,
  CODE,
  failure,
  PRESENTED,
  REDIRECT,
  TOKEN,
  useFakeGitHub,
  VERIFIER,
} from './fake-github.js';
import { fixture, startFakeUpstream } from './fake-upstream.js';

const { upstream, connector, signIn } = useFakeGitHub();

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
      // GitHub issued no refresh token: the access token is what a refresh re-checks with.
      upstreamState: JSON.stringify({ accessToken: TOKEN }),
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
