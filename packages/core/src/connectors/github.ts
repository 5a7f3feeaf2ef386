import type { GitHubProviderConfig } from '@idgate/schema';
import { BEARER_TOKEN, isRecord, RestUpstream, refusalDetail, safeJson, text, unexpected } from './rest.js';
import {
  ConnectorError,
  type ConnectorFailure,
  type ExternalIdentity,
  type RedirectConnector,
} from './types.js';

/** How the GitHub connector reaches GitHub. */
export interface GitHubConnectorOptions {
  /** The `fetch` that calls GitHub; `globalThis.fetch` by default. */
  fetch?: typeof fetch;
  /** How long each request to GitHub may take, in milliseconds (10 s by default). */
  timeoutMs?: number;
}

/** The upstream answered something other than what it documents. */
const fail: (what: string) => never = (what) => unexpected(NAME, what);
const NAME = 'GitHub';
/** The profile, the email addresses (to find the verified primary one), organizations and teams. */
const SCOPE = 'read:user user:email read:org';
/** 100 items a page; 10 pages bound the requests one sign-in can cause. */
const MAX_PAGES = 10;
const API_HEADERS = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' };
/** RFC 6750 §2.1 b64token: also keeps a presented token from breaking the Authorization header. */

interface GitHubUser {
  id: number;
  login: string;
  name: string | null;
}

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
  const rest = new RestUpstream(NAME, options, API_HEADERS);
  const baseUrl = config.baseUrl.replace(/\/+$/, '');
  const apiUrl = config.apiUrl.replace(/\/+$/, '');
  const apiOrigin = new URL(apiUrl).origin;
  const allowed = new Set(config.allowedOrganizations.map((org) => org.toLowerCase()));

  /**
   * A paginated API list, every item checked by `item` (undefined: not what GitHub documents).
   * Null when `optional` and GitHub answers 404, as it does for a token without the needed scope.
   */
  async function list<T>(
    path: string,
    accessToken: string,
    refused: ConnectorFailure,
    item: (value: unknown) => T | undefined,
    optional = false,
  ): Promise<T[] | null> {
    const items: T[] = [];
    let url: URL | null = new URL(`${apiUrl}${path}?per_page=100`);
    for (let page = 0; url !== null && page < MAX_PAGES; page++) {
      const answer = await rest.apiGet(url, accessToken, refused);
      if (answer.status === 404 && optional) return null;
      const body = rest.checkedBody(answer, path);
      if (!Array.isArray(body)) fail(path);
      for (const value of body) items.push(item(value) ?? fail(path));
      url = nextPage(answer.headers.get('link'), url, apiOrigin);
    }
    return items;
  }

  async function loadIdentity(accessToken: string, refused: ConnectorFailure): Promise<ExternalIdentity> {
    const user = parseUser(
      rest.checkedBody(await rest.apiGet(new URL(`${apiUrl}/user`), accessToken, refused), '/user'),
    );
    const [emails, orgs, teams] = await Promise.all([
      // A presented token without the user:email scope gives no address rather than no sign-in.
      list('/user/emails', accessToken, refused, parseEmail, true),
      list('/user/orgs', accessToken, refused, (value) => (isRecord(value) ? text(value.login) : undefined)),
      config.loadTeams ? list('/user/teams', accessToken, refused, parseTeam) : Promise.resolve([]),
    ]);
    const memberOf = [...(orgs ?? []), ...(teams ?? []).map((team) => team.org)];
    if (allowed.size > 0 && !memberOf.some((org) => allowed.has(org.toLowerCase()))) {
      throw new ConnectorError(
        'not_allowed',
        'Your GitHub account is not in an organization allowed to sign in here',
      );
    }
    const email = emails?.find((entry) => entry.primary && entry.verified)?.email ?? null;
    const groups = [...(orgs ?? []), ...(teams ?? []).map((team) => `${team.org}:${team.slug}`)];
    return {
      subject: String(user.id),
      username: user.login,
      email,
      emailVerified: email !== null,
      displayName: user.name,
      groups: [...new Set(groups)],
    };
  }

  return {
    kind: 'redirect',
    async authorizationUrl({ redirectUri, state, codeChallenge }) {
      const url = new URL(`${baseUrl}/login/oauth/authorize`);
      url.search = new URLSearchParams({
        client_id: config.clientId,
        redirect_uri: redirectUri,
        scope: SCOPE,
        state,
        code_challenge: codeChallenge,
        code_challenge_method: 'S256',
      }).toString();
      return url;
    },

    async exchangeCode({ code, redirectUri, codeVerifier }) {
      const answer = await rest.send(new URL(`${baseUrl}/login/oauth/access_token`), {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: config.clientId,
          client_secret: config.clientSecret,
          code,
          redirect_uri: redirectUri,
          code_verifier: codeVerifier,
        }).toString(),
      });
      const body = answer.status === 200 ? rest.parseJson(answer.text, 'token') : safeJson(answer.text);
      // GitHub answers a refused code with 200 and { error, error_description }.
      if (answer.status !== 200 || (isRecord(body) && body.error !== undefined)) {
        const secrets = [config.clientSecret, code, codeVerifier];
        throw new ConnectorError(
          'upstream_error',
          `GitHub refused the sign-in${refusalDetail(body, secrets)}`,
        );
      }
      if (!isRecord(body) || typeof body.access_token !== 'string' || typeof body.token_type !== 'string') {
        fail('token');
      }
      if (body.token_type.toLowerCase() !== 'bearer' || !BEARER_TOKEN.test(body.access_token)) {
        throw new ConnectorError('invalid_upstream_response', 'GitHub issued a token of an unexpected type');
      }
      // A token GitHub has just issued and then refuses is GitHub's failure, not a bad presented token.
      return loadIdentity(body.access_token, 'upstream_error');
    },

    async identityFromAccessToken({ accessToken, tokenType }) {
      if (tokenType.toLowerCase() !== 'bearer' || !BEARER_TOKEN.test(accessToken)) {
        throw new ConnectorError('invalid_upstream_token', 'Only GitHub bearer tokens are accepted');
      }
      return loadIdentity(accessToken, 'invalid_upstream_token');
    },
  };
}

function parseUser(body: unknown): GitHubUser {
  if (!isRecord(body) || !Number.isSafeInteger(body.id) || (body.id as number) <= 0) fail('/user');
  const login = text(body.login) ?? fail('/user');
  if (body.name !== undefined && body.name !== null && typeof body.name !== 'string') fail('/user');
  return { id: body.id as number, login, name: text(body.name) ?? null };
}

function parseEmail(value: unknown): { email: string; primary: boolean; verified: boolean } | undefined {
  if (!isRecord(value) || typeof value.primary !== 'boolean' || typeof value.verified !== 'boolean')
    return undefined;
  const email = text(value.email);
  return email === undefined ? undefined : { email, primary: value.primary, verified: value.verified };
}

function parseTeam(value: unknown): { org: string; slug: string } | undefined {
  if (!isRecord(value) || !isRecord(value.organization)) return undefined;
  const org = text(value.organization.login);
  const slug = text(value.slug);
  return org === undefined || slug === undefined ? undefined : { org, slug };
}

// --- HTTP with GitHub (the same shape as the GitLab connector's) ---

/**
 * The `rel="next"` URL of a Link header (RFC 8288), only on the API's origin: the token is never
 * sent elsewhere.
 */
function nextPage(link: string | null, current: URL, origin: string): URL | null {
  for (const [, target, params] of (link ?? '').matchAll(/<([^>]*)>([^<]*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))/i.exec(params ?? '');
    if (!(rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/).includes('next')) continue;
    const next = URL.canParse(target ?? '', current) ? new URL(target ?? '', current) : null;
    if (next?.origin !== origin) fail('pagination');
    return next;
  }
  return null;
}
