import { OAuthError, UpstreamTokenResponse } from '@idgate/schema';
import {
  ConnectorError,
  type ConnectorFailure,
  type ExternalIdentity,
  type RedirectConnector,
  recheckOutcome,
} from './types.js';
import type { Upstream } from './upstream.js';

/** A bearer token as RFC 6750 §2.1 spells it; anything else is refused before it travels. */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]{1,4096}=*$/;

/** An OAuth app at a REST upstream: where it sends users and codes, and how it reads the identity. */
export interface OAuthApp {
  clientId: string;
  clientSecret: string;
  scope: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  /** Parameters the upstream wants besides the standard ones, in the authorization URL. */
  authorizationParameters?: Record<string, string>;
  /** Likewise in the token request. */
  tokenParameters?: Record<string, string>;
  /**
   * The identity behind an access token, from the upstream's API. `refused` is the failure for a
   * token the API does not take.
   */
  loadIdentity(accessToken: string, refused: ConnectorFailure): Promise<ExternalIdentity>;
}

/**
 * A RedirectConnector for an OAuth app at a REST upstream (GitHub, GitLab): authorization code
 * with PKCE S256 (RFC 7636), the client secret in the token request's form (RFC 6749 §2.3.1), and
 * the identity read with the bearer token; the nonce is not used, as these are not OIDC sign-ins.
 * @example return oauthAppConnector(new Upstream('GitHub', options, [config.clientSecret]), { ...app, loadIdentity });
 */
export function oauthAppConnector(upstream: Upstream, app: OAuthApp): RedirectConnector {
  return {
    kind: 'redirect',
    async authorizationUrl({ redirectUri, state, codeChallenge }) {
      const url = new URL(app.authorizationEndpoint);
      url.search = new URLSearchParams({
        client_id: app.clientId,
        redirect_uri: redirectUri,
        ...app.authorizationParameters,
        scope: app.scope,
        state,
        code_challenge: codeChallenge,
        code_challenge_method: 'S256',
      }).toString();
      return url;
    },

    async exchangeCode({ code, redirectUri, codeVerifier }) {
      const token = await exchange(upstream, app.tokenEndpoint, [code, codeVerifier], {
        ...app.tokenParameters,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        code,
        redirect_uri: redirectUri,
        code_verifier: codeVerifier,
      });
      // A token the upstream has just issued and then refuses is its failure, not a bad presented token.
      const identity = await app.loadIdentity(token.accessToken, 'upstream_error');
      return { ...identity, upstreamState: stateOf(token, redirectUri) };
    },

    async identityFromAccessToken({ accessToken, tokenType }) {
      if (tokenType.toLowerCase() !== 'bearer' || !BEARER_TOKEN.test(accessToken)) {
        throw new ConnectorError(
          'invalid_upstream_token',
          `Only ${upstream.name} bearer tokens are accepted`,
        );
      }
      const identity = await app.loadIdentity(accessToken, 'invalid_upstream_token');
      return { ...identity, upstreamState: stateOf({ accessToken }, undefined) };
    },

    /**
     * The user API again: with the upstream refresh token (GitLab, GitHub apps with expiring
     * tokens) after a refresh grant, else with the kept access token. A refused refresh token, an
     * access token the API no longer takes (401), a missing user (404) or a lost membership of an
     * allowed organization or group means the person is gone.
     */
    async refresh({ subject, state }) {
      const kept = parseState(state);
      if (kept === undefined) return { status: 'unavailable', reason: 'no upstream token was kept' };
      return recheckOutcome(subject, async () => {
        let token: UpstreamToken = { accessToken: kept.accessToken ?? '' };
        if (kept.refreshToken !== undefined) {
          token = await exchange(
            upstream,
            app.tokenEndpoint,
            [kept.refreshToken],
            {
              ...app.tokenParameters,
              client_id: app.clientId,
              client_secret: app.clientSecret,
              grant_type: 'refresh_token',
              refresh_token: kept.refreshToken,
              ...(kept.redirectUri === undefined ? {} : { redirect_uri: kept.redirectUri }),
            },
            'refresh',
          );
        }
        const identity = await app.loadIdentity(token.accessToken, 'invalid_upstream_token');
        return { ...identity, upstreamState: stateOf(token, kept.redirectUri) };
      });
    },
  };
}

/** What a token answer gave: the bearer token and, when the upstream issues one, a refresh token. */
interface UpstreamToken {
  accessToken: string;
  refreshToken?: string | undefined;
}

/** The kept upstream state: the refresh token (and the redirect URI GitLab wants with it) or the access token. */
function stateOf(token: UpstreamToken, redirectUri: string | undefined): string {
  return JSON.stringify(
    token.refreshToken === undefined
      ? { accessToken: token.accessToken }
      : { refreshToken: token.refreshToken, redirectUri },
  );
}

function parseState(
  state: string,
): { accessToken?: string; refreshToken?: string; redirectUri?: string } | undefined {
  try {
    const parsed = JSON.parse(state) as Record<string, unknown> | null;
    const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
    const accessToken = text(parsed?.accessToken);
    const refreshToken = text(parsed?.refreshToken);
    const redirectUri = text(parsed?.redirectUri);
    if (accessToken === undefined && refreshToken === undefined) return undefined;
    return {
      ...(accessToken === undefined ? {} : { accessToken }),
      ...(refreshToken === undefined ? {} : { refreshToken }),
      ...(redirectUri === undefined ? {} : { redirectUri }),
    };
  } catch {
    return undefined;
  }
}

/** Refusals of a refresh token that mean it is no longer good (GitHub says `bad_refresh_token`). */
const REFRESH_TOKEN_REFUSED = ['invalid_grant', 'bad_refresh_token'];

/**
 * The code exchange (RFC 6749 §4.1.3) or a refresh (§6), answering the bearer access token and
 * the refresh token, if any. An answer carrying `error` is a refusal whatever its status: GitHub
 * refuses with 200. A refused refresh token is `invalid_upstream_token`; any other refusal of a
 * refresh (a wrong client secret) says nothing about the person: `upstream_unavailable`.
 */
async function exchange(
  upstream: Upstream,
  endpoint: string,
  secrets: string[],
  form: Record<string, string>,
  purpose: 'sign-in' | 'refresh' = 'sign-in',
): Promise<UpstreamToken> {
  const answer = await upstream.fetch(endpoint, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  // A refusal need not be JSON; a token answer must.
  const body = await upstream.json(answer, 'token').catch((error: unknown) => {
    if (answer.status === 200) throw error;
  });
  const refusal = OAuthError.safeParse(body);
  if (answer.status !== 200 || refusal.success) {
    const detail = upstream.detail(refusal.data, secrets);
    if (purpose === 'sign-in')
      throw upstream.error('upstream_error', `${upstream.name} refused the sign-in${detail}`);
    const gone = REFRESH_TOKEN_REFUSED.includes(refusal.data?.error ?? '');
    throw upstream.error(
      gone ? 'invalid_upstream_token' : 'upstream_unavailable',
      `${upstream.name} refused ${gone ? 'the refresh token' : "idgate's refresh request"}${detail}`,
    );
  }
  const token = upstream.parse(body, 'token', UpstreamTokenResponse, secrets);
  if (token.token_type.toLowerCase() !== 'bearer' || !BEARER_TOKEN.test(token.access_token))
    throw upstream.error(
      'invalid_upstream_response',
      `${upstream.name} issued a token of an unexpected type`,
    );
  const refreshToken = (body as { refresh_token?: unknown }).refresh_token;
  return {
    accessToken: token.access_token,
    ...(typeof refreshToken === 'string' && refreshToken !== '' ? { refreshToken } : {}),
  };
}
