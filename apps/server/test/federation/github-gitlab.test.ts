import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The recorded API bodies and the fake server live with the connector tests; one set of fixtures.
import {
  type FakeUpstream,
  fixture,
  startFakeUpstream,
} from '../../../../packages/core/test/connectors/fake-upstream.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import { addIdentityProvider, reviewedUser } from '../helpers/federation.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { UserAgent } from '../helpers/user-agent.js';

describe.each(testDatabaseUrls())('GitHub and GitLab through the callback on $name', (kind) => {
  let t: TestServer;
  let github: FakeUpstream;
  let gitlab: FakeUpstream;
  let reviewKey: string;

  beforeAll(async () => {
    t = await startTestServer(kind);
    github = await startFakeUpstream({
      'POST /login/oauth/access_token': { json: fixture('github-token') },
      'GET /api/v3/user': (request) =>
        request.headers.authorization === 'Bearer gho_revoked_token_0000000000'
          ? { status: 401, json: fixture('github-bad-credentials') }
          : { json: fixture('github-user') },
      'GET /api/v3/user/emails': { json: fixture('github-emails') },
      'GET /api/v3/user/orgs': { json: fixture('github-orgs') },
      'GET /api/v3/user/teams': { json: fixture('github-teams-page1') },
    });
    gitlab = await startFakeUpstream({
      'POST /oauth/token': { json: fixture('gitlab-token') },
      'GET /api/v4/user': { json: fixture('gitlab-user') },
      'GET /oauth/userinfo': { json: fixture('gitlab-userinfo') },
    });
    const tokenClient = await t.addClient({
      grants: ['authorization_code'],
      trusted: true,
      scopes: ['openid', 'groups'],
    });
    reviewKey = await t.addApiKey(['tokenreview']);
    const common = {
      clientId: 'app-id',
      clientSecret: 'app-secret-0123456789',
      tokenClientId: tokenClient.clientId,
    };
    await addIdentityProvider(t, {
      ...common,
      type: 'github',
      name: 'github',
      baseUrl: github.url,
      apiUrl: `${github.url}/api/v3`,
    });
    await addIdentityProvider(t, {
      ...common,
      type: 'github',
      name: 'github-acme',
      baseUrl: github.url,
      apiUrl: `${github.url}/api/v3`,
      allowedOrganizations: ['acme'],
    });
    await addIdentityProvider(t, {
      ...common,
      type: 'gitlab',
      name: 'gitlab',
      baseUrl: gitlab.url,
      allowedGroups: ['acme/platform'],
    });
  });
  afterAll(async () => {
    await github?.close();
    await gitlab?.close();
    await t?.close();
  });

  async function callback(
    provider: string,
    query: (state: string) => Record<string, string>,
  ): Promise<Response> {
    const agent = new UserAgent();
    const start = await agent.request(`${t.issuer}/login/${provider}`);
    expect(start.status).toBe(303);
    const upstreamUrl = new URL(start.headers.get('location') as string);
    expect(upstreamUrl.searchParams.get('redirect_uri')).toBe(`${t.issuer}/callback/${provider}`);
    expect(upstreamUrl.searchParams.get('code_challenge_method')).toBe('S256');
    const state = upstreamUrl.searchParams.get('state') as string;
    return agent.request(`${t.issuer}/callback/${provider}?${new URLSearchParams(query(state))}`);
  }

  /** The user a TokenReview names for `accessToken` (the test fails if it names none). */
  const groupsOf = async (accessToken: string) => {
    const user = await reviewedUser(t.issuer, reviewKey, accessToken);
    if (user === 'not authenticated') throw new Error('the TokenReview did not authenticate the token');
    return user;
  };

  it('GitHub code form: org and team memberships become prefixed groups', async () => {
    const response = await callback('github', (state) => ({ code: 'gh-code', state }));
    expect(response.status).toBe(200);
    const { access_token } = (await response.json()) as { access_token: string };
    const user = await groupsOf(access_token);
    expect(user.username).toBe('octocat');
    expect(user.groups).toEqual(['github:Octo-Org', 'github:github', 'github:github:justice-league']);
    const exchange = github.requests.find((r) => r.path === '/login/oauth/access_token');
    expect(exchange?.form?.get('code_verifier')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('GitHub token form: a presented token the API confirms, and one it does not', async () => {
    const ok = await callback('github', (state) => ({
      access_token: 'gho_presented_token_0123456789',
      token_type: 'bearer',
      state,
    }));
    expect(ok.status).toBe(200);
    const refused = await callback('github', (state) => ({
      access_token: 'gho_revoked_token_0000000000',
      token_type: 'bearer',
      state,
    }));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'access_denied' });
  });

  it('GitHub allow-list: a user outside the allowed organizations is refused', async () => {
    const response = await callback('github-acme', (state) => ({ code: 'gh-code', state }));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'access_denied' });
  });

  it('GitLab code form: group paths become prefixed groups; the allow-list admits a subgroup member', async () => {
    const response = await callback('gitlab', (state) => ({ code: 'gl-code', state }));
    expect(response.status).toBe(200);
    const { access_token } = (await response.json()) as { access_token: string };
    const user = await groupsOf(access_token);
    expect(user.groups).toEqual([
      'gitlab:acme',
      'gitlab:acme/platform',
      'gitlab:acme/platform/infra',
      'gitlab:oss-friends',
    ]);
  });
});
