import type { GitLabProviderConfig } from '@idgate/schema';
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

const NAME = 'GitLab';
/**
 * `read_user` for `/api/v4/user`, `openid` for the `groups` of `/oauth/userinfo`, `email` for the
 * primary address. Not `read_api`: listing `/api/v4/groups` would need it, and it reads every
 * project the user can see.
 */
const SCOPE = 'read_user openid email';
/** RFC 6750 §2.1 b64token: also keeps a presented token from breaking the Authorization header. */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]{1,4096}=*$/;

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
  const baseUrl = config.baseUrl.replace(/\/+$/, '');
  const allowed = config.allowedGroups.map((group) => group.replace(/^\/+|\/+$/g, '').toLowerCase());

  const isAllowed = (groups: string[]) =>
    groups.some((group) => {
      const path = group.toLowerCase();
      return allowed.some((root) => path === root || path.startsWith(`${root}/`));
    });

  async function loadIdentity(accessToken: string, refused: ConnectorFailure): Promise<ExternalIdentity> {
    const [userAnswer, userinfoAnswer] = await Promise.all([
      apiGet(new URL(`${baseUrl}/api/v4/user`), accessToken, refused, options),
      apiGet(new URL(`${baseUrl}/oauth/userinfo`), accessToken, refused, options),
    ]);
    const user = parseUser(checkedBody(userAnswer, 'user'));
    const groups = parseGroups(checkedBody(userinfoAnswer, 'userinfo'));
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
      const answer = await send(
        new URL(`${baseUrl}/oauth/token`),
        {
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
        },
        options,
      );
      if (answer.status !== 200) {
        const secrets = [config.clientSecret, code, codeVerifier];
        const detail = refusalDetail(safeJson(answer.text), secrets);
        throw new ConnectorError('upstream_error', `GitLab refused the sign-in${detail}`);
      }
      const body = parseJson(answer.text, 'token');
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

interface Answer {
  status: number;
  text: string;
}

/** One request; no answer, a timeout, 5xx or 429 are `upstream_unavailable`. Redirects are not followed. */
async function send(url: URL, init: RequestInit, options: GitLabConnectorOptions): Promise<Answer> {
  let answer: Answer;
  try {
    const response = await (options.fetch ?? globalThis.fetch)(url, {
      ...init,
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
    answer = { status: response.status, text: await response.text() };
  } catch (cause) {
    throw new ConnectorError('upstream_unavailable', `${NAME} did not answer`, { cause });
  }
  if (answer.status >= 500 || answer.status === 429) {
    throw new ConnectorError('upstream_unavailable', `${NAME} is unavailable (HTTP ${answer.status})`);
  }
  return answer;
}

/** An API GET with the token; 401 (a token GitLab does not accept) is `refused`. */
async function apiGet(
  url: URL,
  accessToken: string,
  refused: ConnectorFailure,
  options: GitLabConnectorOptions,
): Promise<Answer> {
  const answer = await send(
    url,
    { headers: { accept: 'application/json', authorization: `Bearer ${accessToken}` } },
    options,
  );
  if (answer.status === 401) throw new ConnectorError(refused, `${NAME} did not accept the access token`);
  return answer;
}

function checkedBody(answer: Answer, what: string): unknown {
  if (answer.status !== 200) {
    // 403 here is a token without the read_user or openid scope.
    throw new ConnectorError('upstream_error', `${NAME} refused the ${what} request (HTTP ${answer.status})`);
  }
  return parseJson(answer.text, what);
}

function parseJson(body: string, what: string): unknown {
  // No cause: a JSON.parse error quotes the body, which may hold a token.
  const value = safeJson(body);
  if (value === undefined)
    throw new ConnectorError(
      'invalid_upstream_response',
      `${NAME} answered the ${what} request with no JSON`,
    );
  return value;
}

function safeJson(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * ` (error: description)` from an OAuth error body, for a user-facing message: only plain text,
 * at most 200 characters, and nothing that repeats a secret of the request.
 */
function refusalDetail(body: unknown, secrets: string[]): string {
  if (!isRecord(body)) return '';
  const clean = (value: unknown, max: number) => {
    if (typeof value !== 'string' || secrets.some((secret) => secret !== '' && value.includes(secret)))
      return '';
    const cut = value.length > max ? `${value.slice(0, max - 1)}…` : value;
    return /^[\p{L}\p{N}\p{P}\p{Zs}]+$/u.test(cut) ? cut : '';
  };
  const parts = [clean(body.error, 80), clean(body.error_description, 200)].filter((part) => part !== '');
  return parts.length > 0 ? ` (${parts.join(': ')})` : '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The upstream answered something other than what it documents. */
function fail(what: string): never {
  throw new ConnectorError('invalid_upstream_response', `${NAME} answered the ${what} request unexpectedly`);
}
