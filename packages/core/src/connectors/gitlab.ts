import type { GitLabProviderConfig } from '@idgate/schema';
import { BEARER_TOKEN, isRecord, RestUpstream, refusalDetail, safeJson, text, unexpected } from './rest.js';
import {
  ConnectorError,
  type ConnectorFailure,
  type ExternalIdentity,
  type RedirectConnector,
} from './types.js';

/** How the GitLab connector reaches GitLab. */
export interface GitLabConnectorOptions {
  /** The `fetch` that calls GitLab; `globalThis.fetch` by default. */
  fetch?: typeof fetch;
  /** How long each request to GitLab may take, in milliseconds (10 s by default). */
  timeoutMs?: number;
}

/** The upstream answered something other than what it documents. */
const fail: (what: string) => never = (what) => unexpected(NAME, what);
const NAME = 'GitLab';
/**
 * `read_user` for `/api/v4/user`, `openid` for the `groups` of `/oauth/userinfo`, `email` for the
 * primary address. Not `read_api`: listing `/api/v4/groups` would need it, and it reads every
 * project the user can see.
 */
const SCOPE = 'read_user openid email';
/** RFC 6750 §2.1 b64token: also keeps a presented token from breaking the Authorization header. */

interface GitLabUser {
  id: number;
  username: string;
  name: string | null;
  email: string | null;
  confirmed: boolean;
}

/**
 * A GitLab (gitlab.com or self-managed) OAuth application, with PKCE. The identity comes from
 * `/api/v4/user` (the numeric id is the subject; the `email` counts as verified when the account
 * is confirmed), the groups are the full paths in the `groups` of `/oauth/userinfo` (direct
 * memberships and those inherited from an ancestor group). GitLab's ID token is not verified: the
 * API, called with the access token, is the source. With `allowedGroups`, only members of one of
 * them or of a subgroup of one get an identity.
 * @example
 * const gitlab = createGitLabConnector(GitLabProviderConfig.parse({ type: 'gitlab', name: 'gitlab', clientId, clientSecret }));
 * const url = await gitlab.authorizationUrl({ redirectUri, state, nonce, codeChallenge });
 * const identity = await gitlab.exchangeCode({ code, redirectUri, codeVerifier, nonce });
 */
export function createGitLabConnector(
  config: GitLabProviderConfig,
  options: GitLabConnectorOptions = {},
): RedirectConnector {
  const rest = new RestUpstream(NAME, options);
  const baseUrl = config.baseUrl.replace(/\/+$/, '');
  const allowed = config.allowedGroups.map((group) => group.replace(/^\/+|\/+$/g, '').toLowerCase());

  const isAllowed = (groups: string[]) =>
    groups.some((group) => {
      const path = group.toLowerCase();
      return allowed.some((root) => path === root || path.startsWith(`${root}/`));
    });

  async function loadIdentity(accessToken: string, refused: ConnectorFailure): Promise<ExternalIdentity> {
    const [userAnswer, userinfoAnswer] = await Promise.all([
      rest.apiGet(new URL(`${baseUrl}/api/v4/user`), accessToken, refused),
      rest.apiGet(new URL(`${baseUrl}/oauth/userinfo`), accessToken, refused),
    ]);
    const user = parseUser(rest.checkedBody(userAnswer, 'user'));
    const groups = parseGroups(rest.checkedBody(userinfoAnswer, 'userinfo'));
    if (allowed.length > 0 && !isAllowed(groups)) {
      throw new ConnectorError(
        'not_allowed',
        'Your GitLab account is not in a group allowed to sign in here',
      );
    }
    return {
      subject: String(user.id),
      username: user.username,
      email: user.email,
      emailVerified: user.email !== null && user.confirmed,
      displayName: user.name,
      groups,
    };
  }

  return {
    kind: 'redirect',
    async authorizationUrl({ redirectUri, state, codeChallenge }) {
      const url = new URL(`${baseUrl}/oauth/authorize`);
      url.search = new URLSearchParams({
        client_id: config.clientId,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: SCOPE,
        state,
        code_challenge: codeChallenge,
        code_challenge_method: 'S256',
      }).toString();
      return url;
    },

    async exchangeCode({ code, redirectUri, codeVerifier }) {
      const answer = await rest.send(new URL(`${baseUrl}/oauth/token`), {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          client_id: config.clientId,
          client_secret: config.clientSecret,
          code,
          redirect_uri: redirectUri,
          code_verifier: codeVerifier,
        }).toString(),
      });
      if (answer.status !== 200) {
        const secrets = [config.clientSecret, code, codeVerifier];
        const detail = refusalDetail(safeJson(answer.text), secrets);
        throw new ConnectorError('upstream_error', `GitLab refused the sign-in${detail}`);
      }
      const body = rest.parseJson(answer.text, 'token');
      if (!isRecord(body) || typeof body.access_token !== 'string' || typeof body.token_type !== 'string') {
        fail('token');
      }
      if (body.token_type.toLowerCase() !== 'bearer' || !BEARER_TOKEN.test(body.access_token)) {
        throw new ConnectorError('invalid_upstream_response', 'GitLab issued a token of an unexpected type');
      }
      // The id_token GitLab also returns is not checked: the API called with the token is the source.
      // A token GitLab has just issued and then refuses is GitLab's failure, not a bad presented token.
      return loadIdentity(body.access_token, 'upstream_error');
    },

    async identityFromAccessToken({ accessToken, tokenType }) {
      if (tokenType.toLowerCase() !== 'bearer' || !BEARER_TOKEN.test(accessToken)) {
        throw new ConnectorError('invalid_upstream_token', 'Only GitLab bearer tokens are accepted');
      }
      return loadIdentity(accessToken, 'invalid_upstream_token');
    },
  };
}

function parseUser(body: unknown): GitLabUser {
  if (!isRecord(body) || !Number.isSafeInteger(body.id) || (body.id as number) <= 0) fail('user');
  const username = text(body.username) ?? fail('user');
  for (const field of ['name', 'email', 'confirmed_at'] as const) {
    const value = body[field];
    if (value !== undefined && value !== null && typeof value !== 'string') fail('user');
  }
  return {
    id: body.id as number,
    username,
    name: text(body.name) ?? null,
    email: text(body.email) ?? null,
    confirmed: text(body.confirmed_at) !== undefined,
  };
}

/** The full paths of `groups` in GitLab's userinfo (absent: none). */
function parseGroups(body: unknown): string[] {
  if (!isRecord(body)) fail('userinfo');
  if (body.groups === undefined || body.groups === null) return [];
  if (!Array.isArray(body.groups)) fail('userinfo');
  const groups = body.groups.map((group) => text(group) ?? fail('userinfo'));
  return [...new Set(groups)];
}

// --- HTTP with GitLab (the same shape as the GitHub connector's) ---
