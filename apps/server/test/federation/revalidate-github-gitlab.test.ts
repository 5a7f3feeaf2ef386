import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeUpstream,
  fixture,
  startFakeUpstream,
} from '../../../../packages/core/test/connectors/fake-upstream.js';
import { testDatabaseUrls } from '../helpers/databases.js';
import {
  addIdentityProvider,
  expectRefreshesEndPastMaxStaleness,
  reviewedGroups,
} from '../helpers/federation.js';
import { startTestServer, type TestServer, testClock } from '../helpers/server.js';
import { UserAgent } from '../helpers/user-agent.js';

const INTERVAL_MS = 900_000;
const GITLAB_REFRESH = fixture<{ refresh_token: string }>('gitlab-token').refresh_token;

describe.each(testDatabaseUrls())(
  're-validation of GitHub and GitLab identities on refresh on $name',
  (kind) => {
    const clock = testClock();
    let t: TestServer;
    let github: FakeUpstream;
    let gitlab: FakeUpstream;
    let tokenClient: { clientId: string; clientSecret: string };
    let reviewKey: string;
    let adminKey: string;
    /** What the fakes answer right now. */
    const now = {
      githubUser: 200,
      githubOrgs: fixture<unknown[]>('github-orgs'),
      gitlabGroups: fixture<{ groups: string[] }>('gitlab-userinfo').groups,
      gitlabRefreshToken: GITLAB_REFRESH,
      rotations: 0,
    };

    beforeAll(async () => {
      t = await startTestServer(kind, {}, { clock });
      github = await startFakeUpstream({
        'POST /login/oauth/access_token': { json: fixture('github-token') },
        'GET /api/v3/user': () =>
          now.githubUser === 200
            ? { json: fixture('github-user') }
            : { status: now.githubUser, json: fixture('github-bad-credentials') },
        'GET /api/v3/user/emails': { json: fixture('github-emails') },
        'GET /api/v3/user/orgs': () => ({ json: now.githubOrgs }),
        'GET /api/v3/user/teams': { json: [] },
      });
      gitlab = await startFakeUpstream({
        'POST /oauth/token': (request) => {
          if (request.form.get('grant_type') !== 'refresh_token') return { json: fixture('gitlab-token') };
          if (request.form.get('refresh_token') !== now.gitlabRefreshToken)
            return {
              status: 400,
              json: { error: 'invalid_grant', error_description: 'The provided grant is invalid' },
            };
          now.gitlabRefreshToken = `rotated-refresh-token-${++now.rotations}`;
          return { json: { ...fixture<object>('gitlab-token'), refresh_token: now.gitlabRefreshToken } };
        },
        'GET /api/v4/user': { json: fixture('gitlab-user') },
        'GET /oauth/userinfo': () => ({
          json: { ...fixture<object>('gitlab-userinfo'), groups: now.gitlabGroups },
        }),
      });
      tokenClient = await t.addClient({
        grants: ['authorization_code', 'refresh_token'],
        trusted: true,
        scopes: ['openid', 'groups', 'offline_access'],
      });
      reviewKey = await t.addApiKey(['tokenreview']);
      adminKey = await t.addApiKey(['admin']);
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

    async function signIn(provider: string, code: string) {
      const agent = new UserAgent();
      const start = await agent.request(`${t.issuer}/login/${provider}`);
      const state = new URL(start.headers.get('location') as string).searchParams.get('state') as string;
      const response = await agent.request(
        `${t.issuer}/callback/${provider}?${new URLSearchParams({ code, state })}`,
      );
      expect(response.status).toBe(200);
      return (await response.json()) as { access_token: string; refresh_token: string };
    }

    const refresh = async (refreshToken: string) => {
      const response = await fetch(`${t.issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${btoa(`${tokenClient.clientId}:${tokenClient.clientSecret}`)}`,
        },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, string> };
    };

    const groupsOf = (accessToken: string) => reviewedGroups(t.issuer, reviewKey, accessToken);

    it('GitHub: organizations follow the user API; an outage keeps the grant; a 401 revokes it', async () => {
      const tokens = await signIn('github', 'gh-code');
      expect(await groupsOf(tokens.access_token)).toEqual(['github:Octo-Org', 'github:github']);

      now.githubOrgs = fixture<{ login: string }[]>('github-orgs').filter((org) => org.login === 'github');
      const apiCalls = () =>
        github.requests.filter((request) => request.path.startsWith('/api/v3/user')).length;
      const calls = apiCalls();
      const soon = await refresh(tokens.refresh_token);
      expect(soon.status).toBe(200);
      expect(apiCalls()).toBe(calls);
      clock.advance(INTERVAL_MS + 1000);
      const later = await refresh(soon.body.refresh_token as string);
      expect(later.status).toBe(200);
      expect(await groupsOf(later.body.access_token as string)).toEqual(['github:github']);

      now.githubUser = 503;
      clock.advance(INTERVAL_MS + 1000);
      const down = await refresh(later.body.refresh_token as string);
      expect(down.status).toBe(200);
      expect(await groupsOf(down.body.access_token as string)).toEqual(['github:github']);

      now.githubUser = 401;
      clock.advance(INTERVAL_MS + 1000);
      const gone = await refresh(down.body.refresh_token as string);
      expect(gone).toEqual({
        status: 400,
        body: {
          error: 'invalid_grant',
          error_description: 'the identity provider no longer knows this account',
        },
      });
      expect(await groupsOf(down.body.access_token as string)).toBe('not authenticated');
    });

    it('GitLab: refreshes upstream with the kept (rotated) refresh token; a lost allowed group revokes the grant', async () => {
      const tokens = await signIn('gitlab', 'gl-code');
      now.gitlabGroups = ['acme/platform', 'oss-friends'];
      clock.advance(INTERVAL_MS + 1000);
      const later = await refresh(tokens.refresh_token);
      expect(later.status).toBe(200);
      expect(await groupsOf(later.body.access_token as string)).toEqual([
        'gitlab:acme/platform',
        'gitlab:oss-friends',
      ]);
      const [first] = gitlab.requests.filter((request) => request.form.get('grant_type') === 'refresh_token');
      expect(first?.form.get('refresh_token')).toBe(GITLAB_REFRESH);
      expect(first?.form.get('client_secret')).toBe('app-secret-0123456789');

      // The rotated token was kept: presenting the first one again upstream would be refused.
      clock.advance(INTERVAL_MS + 1000);
      const again = await refresh(later.body.refresh_token as string);
      expect(again.status).toBe(200);
      expect(now.rotations).toBe(2);

      now.gitlabGroups = ['oss-friends'];
      clock.advance(INTERVAL_MS + 1000);
      const gone = await refresh(again.body.refresh_token as string);
      expect(gone.status).toBe(400);
      expect(gone.body.error).toBe('invalid_grant');
      expect(t.logs.join('\n')).not.toContain(GITLAB_REFRESH);
      expect(t.logs.join('\n')).not.toContain('rotated-refresh-token');
    });

    it('GitHub: while the API is unreachable, refreshes go on for a day after it last vouched, then the grant is revoked', async () => {
      now.githubUser = 200;
      await expectRefreshesEndPastMaxStaleness({
        t,
        clock,
        reviewKey,
        adminKey,
        upstream: github,
        signIn: () => signIn('github', 'gh-code'),
        refresh,
      });
    });

    it('GitLab: while it is unreachable, refreshes go on for a day after it last vouched, then the grant is revoked', async () => {
      // A sign-in of its own: the token the fake hands out first, in an allowed group.
      now.gitlabRefreshToken = GITLAB_REFRESH;
      now.gitlabGroups = ['acme/platform'];
      await expectRefreshesEndPastMaxStaleness({
        t,
        clock,
        reviewKey,
        adminKey,
        upstream: gitlab,
        signIn: () => signIn('gitlab', 'gl-code'),
        refresh,
      });
    });
  },
);
