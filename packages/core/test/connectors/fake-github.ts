import { GitHubProviderConfig } from '@idgate/schema';
import { afterEach, beforeEach, expect } from 'vitest';
import { createGitHubConnector } from '../../src/connectors/github.js';
import type { ConnectorFailure } from '../../src/connectors/types.js';
import { connectorFailure } from './connector-failure.js';
import { type FakeUpstream, fixture, startFakeUpstream } from './fake-upstream.js';

export const CLIENT_SECRET = 'gh-client-secret-5f2b8c1e9d';
export const TOKEN = fixture<{ access_token: string }>('github-token').access_token;
export const PRESENTED = 'gho_presentedTokenFromTheCli0123456789';
export const CODE = 'a1b2c3d4e5f6a7b8c9d0';
export const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
export const REDIRECT = 'https://id.example.test/oauth/callback/github';
const SECRETS = [CLIENT_SECRET, TOKEN, PRESENTED, VERIFIER, CODE];

/**
 * A fake GitHub Enterprise (the API under /api/v3 of the same host) answering recorded bodies,
 * the teams in two pages, new for each test of the calling file; and connectors for it.
 * @example const { upstream, signIn } = useFakeGitHub(); it('…', () => upstream.route('GET /api/v3/user', { status: 401 }));
 */
export function useFakeGitHub() {
  let current: FakeUpstream | undefined;
  beforeEach(async () => {
    current = await startFakeGitHub();
  });
  afterEach(() => current?.close());
  const live = () => current ?? expect.unreachable('the fake GitHub runs only inside a test');
  const upstream: FakeUpstream = {
    get url() {
      return live().url;
    },
    get requests() {
      return live().requests;
    },
    route: (key, route) => live().route(key, route),
    requestsTo: (key) => live().requestsTo(key),
    down: () => live().down(),
    up: () => live().up(),
    close: () => live().close(),
  };
  /** The connector for `base` (the fake's URL by default), with config `overrides`. */
  const connector = (overrides: Record<string, unknown> = {}, timeoutMs?: number, base = upstream.url) => {
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
  };
  /** A sign-in through the code exchange. */
  const signIn = (overrides: Record<string, unknown> = {}) =>
    connector(overrides).exchangeCode({
      code: CODE,
      redirectUri: REDIRECT,
      codeVerifier: VERIFIER,
      nonce: 'unused',
    });
  return { upstream, connector, signIn };
}

function startFakeGitHub(): Promise<FakeUpstream> {
  return startFakeUpstream({
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
}

/** The ConnectorError a promise rejects with; no secret or token of these tests may show in it. */
export const failure = (promise: Promise<unknown>, expected: ConnectorFailure) =>
  connectorFailure(promise, expected, SECRETS);
