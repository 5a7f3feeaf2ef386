import { OAuthError, UpstreamTokenResponse } from '@idgate/schema';
import {
  ConnectorError,
  type ConnectorFailure,
  type ExternalIdentity,
  type RedirectConnector,
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
      const accessToken = await exchange(upstream, app.tokenEndpoint, code, codeVerifier, {
        ...app.tokenParameters,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        code,
        redirect_uri: redirectUri,
        code_verifier: codeVerifier,
      });
      // A token the upstream has just issued and then refuses is its failure, not a bad presented token.
      return app.loadIdentity(accessToken, 'upstream_error');
    },

    async identityFromAccessToken({ accessToken, tokenType }) {
      if (tokenType.toLowerCase() !== 'bearer' || !BEARER_TOKEN.test(accessToken)) {
        throw new ConnectorError(
          'invalid_upstream_token',
          `Only ${upstream.name} bearer tokens are accepted`,
        );
      }
      return app.loadIdentity(accessToken, 'invalid_upstream_token');
    },
  };
}

/**
 * The code exchange (RFC 6749 §4.1.3), answering the bearer access token. An answer carrying
 * `error` is a refusal whatever its status: GitHub refuses with 200.
 */
async function exchange(
  upstream: Upstream,
  endpoint: string,
  code: string,
  codeVerifier: string,
  form: Record<string, string>,
): Promise<string> {
  const secrets = [code, codeVerifier];
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
    throw upstream.error('upstream_error', `${upstream.name} refused the sign-in${detail}`);
  }
  const token = upstream.parse(body, 'token', UpstreamTokenResponse, secrets);
  if (token.token_type.toLowerCase() !== 'bearer' || !BEARER_TOKEN.test(token.access_token))
    throw upstream.error(
      'invalid_upstream_response',
      `${upstream.name} issued a token of an unexpected type`,
    );
  return token.access_token;
}
