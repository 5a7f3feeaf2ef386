import {
  GitHubEmails,
  GitHubOrganizations,
  type GitHubProviderConfig,
  GitHubTeams,
  GitHubUser,
  type UpstreamSchema,
} from '@idgate/schema';
import { oauthAppConnector } from './oauth-app.js';
import {
  ConnectorError,
  type ConnectorFailure,
  type ExternalIdentity,
  type RedirectConnector,
} from './types.js';
import { Upstream, type UpstreamOptions } from './upstream.js';

/** How the GitHub connector reaches GitHub. */
export type GitHubConnectorOptions = UpstreamOptions;

/** The profile, the email addresses (to find the verified primary one), organizations and teams. */
const SCOPE = 'read:user user:email read:org';
/** 100 items a page; 10 pages bound the requests one sign-in can cause. */
const MAX_PAGES = 10;
const API_HEADERS = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' };

/**
 * A GitHub (or GitHub Enterprise) OAuth app. The identity comes from the REST API: `/user` (the
 * numeric id is the subject, as logins can be renamed), the verified primary address of
 * `/user/emails`, and as groups the `/user/orgs` logins and, with `loadTeams`, `/user/teams` as
 * `org:team-slug`. With `allowedOrganizations`, only members of one of them (compared without
 * regard to case) get an identity. GitHub is OAuth only: the nonce is not used.
 * @example
 * const github = createGitHubConnector(GitHubProviderConfig.parse({ type: 'github', name: 'github', clientId, clientSecret }));
 * const url = await github.authorizationUrl({ redirectUri, state, nonce, codeChallenge });
 * const identity = await github.exchangeCode({ code, redirectUri, codeVerifier, nonce });
 */
export function createGitHubConnector(
  config: GitHubProviderConfig,
  options: GitHubConnectorOptions = {},
): RedirectConnector {
  const github = new Upstream('GitHub', options, [config.clientSecret]);
  const baseUrl = config.baseUrl.replace(/\/+$/, '');
  const apiUrl = config.apiUrl.replace(/\/+$/, '');
  const apiOrigin = new URL(apiUrl).origin;
  const allowed = new Set(config.allowedOrganizations.map((org) => org.toLowerCase()));

  /**
   * Every page of an API list. Null when `optional` and GitHub answers 404, as it does for a
   * token without the needed scope.
   */
  async function list<T>(
    path: string,
    accessToken: string,
    refused: ConnectorFailure,
    page: UpstreamSchema<T[]>,
    optional = false,
  ): Promise<T[] | null> {
    const items: T[] = [];
    let url: URL | null = new URL(`${apiUrl}${path}?per_page=100`);
    for (let count = 0; url !== null && count < MAX_PAGES; count++) {
      const answer = await github.get(url, accessToken, refused, API_HEADERS);
      if (answer.status === 404 && optional) return null;
      items.push(...(await github.read(answer, path, page, [accessToken])));
      url = nextPage(answer.headers.get('link'), url);
    }
    return items;
  }

  /**
   * The `rel="next"` URL of a Link header (RFC 8288 §3), only on the API's origin: the token is
   * never sent elsewhere.
   */
  function nextPage(link: string | null, current: URL): URL | null {
    for (const [, target, params] of (link ?? '').matchAll(/<([^>]*)>([^<]*)/g)) {
      const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))/i.exec(params ?? '');
      if (!(rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/).includes('next')) continue;
      const next = URL.canParse(target ?? '', current) ? new URL(target ?? '', current) : null;
      if (next?.origin !== apiOrigin) {
        throw github.error('invalid_upstream_response', 'GitHub answered with a next page on another host');
      }
      return next;
    }
    return null;
  }

  async function loadIdentity(accessToken: string, refused: ConnectorFailure): Promise<ExternalIdentity> {
    const userAnswer = await github.get(new URL(`${apiUrl}/user`), accessToken, refused, API_HEADERS);
    const user = await github.read(userAnswer, '/user', GitHubUser, [accessToken]);
    const [emails, orgs, teams] = await Promise.all([
      // A presented token without the user:email scope gives no address rather than no sign-in.
      list('/user/emails', accessToken, refused, GitHubEmails, true),
      list('/user/orgs', accessToken, refused, GitHubOrganizations),
      config.loadTeams ? list('/user/teams', accessToken, refused, GitHubTeams) : Promise.resolve([]),
    ]);
    const orgLogins = (orgs ?? []).map((org) => org.login);
    const memberOf = [...orgLogins, ...(teams ?? []).map((team) => team.organization.login)];
    if (allowed.size > 0 && !memberOf.some((org) => allowed.has(org.toLowerCase()))) {
      throw new ConnectorError(
        'not_allowed',
        'Your GitHub account is not in an organization allowed to sign in here',
      );
    }
    const email = emails?.find((entry) => entry.primary && entry.verified)?.email ?? null;
    const teamNames = (teams ?? []).map((team) => `${team.organization.login}:${team.slug}`);
    return {
      subject: String(user.id),
      username: user.login,
      email,
      emailVerified: email !== null,
      displayName: user.name || null,
      groups: [...new Set([...orgLogins, ...teamNames])],
    };
  }

  return oauthAppConnector(github, {
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    scope: SCOPE,
    authorizationEndpoint: `${baseUrl}/login/oauth/authorize`,
    tokenEndpoint: `${baseUrl}/login/oauth/access_token`,
    loadIdentity,
  });
}
