import type { OAuthErrorCode, ProblemCode } from '@idgate/schema';
import { IdgateError, type IdgateErrorOptions } from '../errors.js';

/** What an identity provider says about who signed in. */
export interface ExternalIdentity {
  /** The user's stable id at the provider: OIDC `sub`, GitHub/GitLab numeric id, LDAP entryUUID or DN. */
  subject: string;
  /** The username the provider gives (login, preferred_username, uid), not yet normalized. */
  username: string;
  email: string | null;
  /** Whether the provider vouches for the email (OIDC `email_verified`, a verified primary email). */
  emailVerified: boolean;
  displayName: string | null;
  /** Group names as the provider gives them (org, org:team, group path, LDAP cn). */
  groups: string[];
  /**
   * How the person signed in upstream, as the upstream's verified ID token says (its `amr` and
   * `acr`), and only from it: never from userinfo, an introspection answer or the callback's
   * query. Absent when the sign-in carried no ID token (GitHub, GitLab, LDAP, a presented access
   * token). Whether it counts as a second factor is the provider's `trustUpstreamMfa`.
   */
  upstreamAuthentication?: { amr: string[]; acr: string | null } | undefined;
  /**
   * What the connector needs to check this identity upstream again later (see
   * {@link RefreshConnector}): upstream tokens, so a secret; stored only sealed. Absent when the
   * connector cannot check again (no upstream refresh token was issued).
   */
  upstreamState?: string | undefined;
}

/**
 * What an upstream said when asked again about an identity (on refresh of a grant):
 * - `valid`: the identity as it is now (with `upstreamState` when the upstream rotated tokens);
 * - `gone`: the upstream no longer knows the person (refresh token refused, user API 401/404,
 *   directory entry gone) or its allow-list now excludes them;
 * - `unavailable`: the upstream could not be asked (network, timeout, 5xx): nothing is known.
 */
export type UpstreamRecheck =
  | { status: 'valid'; identity: ExternalIdentity }
  | { status: 'gone'; reason: string }
  | { status: 'unavailable'; reason: string };

/**
 * A connector that can check an identity again without the person, as Dex's refresh connectors
 * do: `state` is the `upstreamState` of the sign-in (or of the last check).
 */
export interface RefreshConnector {
  refresh?(request: { subject: string; state: string }): Promise<UpstreamRecheck>;
}

/**
 * The outcome of a re-check that ran `check`: a connector failure meaning the upstream could not
 * answer (unreachable, or an answer that does not parse) is `unavailable`; any other refusal, or
 * an identity with another subject, is `gone`.
 * @example return recheckOutcome(subject, () => loadIdentity(accessToken, 'invalid_upstream_token'));
 */
export async function recheckOutcome(
  subject: string,
  check: () => Promise<ExternalIdentity>,
): Promise<UpstreamRecheck> {
  try {
    const identity = await check();
    if (identity.subject !== subject)
      return { status: 'gone', reason: 'the upstream answered for another subject' };
    return { status: 'valid', identity };
  } catch (error) {
    if (!(error instanceof ConnectorError)) throw error;
    const unavailable = error.code === 'upstream_unavailable' || error.code === 'invalid_upstream_response';
    return { status: unavailable ? 'unavailable' : 'gone', reason: error.message };
  }
}

/** Why a connector could not produce an identity: the codes of {@link ConnectorError}. */
export type ConnectorFailure =
  /** The upstream answered with an error (bad code, revoked token, refused request). */
  | 'upstream_error'
  /** The upstream did not answer in time, or not at all. */
  | 'upstream_unavailable'
  /** The upstream answered something that does not check out (bad ID token, wrong nonce, bad JSON). */
  | 'invalid_upstream_response'
  /** The user is not allowed by this provider's configuration (organization or group allow-list). */
  | 'not_allowed'
  /** The presented upstream access token was not confirmed by the upstream. */
  | 'invalid_upstream_token';

// The sign-in failed, not idgate: never a 5xx, and on an OAuth endpoint only `access_denied` or,
// when trying again may help, `temporarily_unavailable`.
const CONNECTOR_OAUTH_ERRORS: Record<ConnectorFailure, OAuthErrorCode> = {
  upstream_error: 'access_denied',
  upstream_unavailable: 'temporarily_unavailable',
  invalid_upstream_response: 'access_denied',
  not_allowed: 'access_denied',
  invalid_upstream_token: 'access_denied',
};

/**
 * A connector's refusal. The description is safe to show a user; `cause` (logged, never shown)
 * holds the details. A 400 whatever the code: an upstream's failure is the sign-in's, not idgate's,
 * so it must never read as an outage of idgate (a 5xx).
 * @example
 * throw new ConnectorError('upstream_unavailable', 'GitHub did not answer', { cause: error });
 */
export class ConnectorError extends IdgateError<ConnectorFailure> {
  override readonly name: string = 'ConnectorError';
  readonly kind = 'connector' as const;

  constructor(code: ConnectorFailure, description: string, options: IdgateErrorOptions = {}) {
    super(code, description, 400, options);
  }

  /** @deprecated The same as {@link code}: the name connector failures had before the one error model. */
  get failure(): ConnectorFailure {
    return this.code;
  }

  get oauthError(): OAuthErrorCode {
    return CONNECTOR_OAUTH_ERRORS[this.code];
  }

  get problemCode(): ProblemCode {
    return this.code;
  }
}

/** A provider the browser is redirected to (OIDC, GitHub, GitLab). */
export interface RedirectConnector extends RefreshConnector {
  readonly kind: 'redirect';
  /** The upstream authorization URL for one sign-in. */
  authorizationUrl(request: {
    redirectUri: string;
    state: string;
    nonce: string;
    codeChallenge: string;
  }): Promise<URL>;
  /**
   * Exchanges the upstream's code (PKCE verifier and nonce of the same sign-in) for the identity.
   * `iss` is the callback's `iss` parameter (RFC 9207), when it carried one: an OpenID Connect
   * upstream compares it with its issuer, and requires it when its metadata says it sends it.
   */
  exchangeCode(request: {
    code: string;
    redirectUri: string;
    codeVerifier: string;
    nonce: string;
    iss?: string | undefined;
  }): Promise<ExternalIdentity>;
  /**
   * The identity behind an upstream access token sent straight to the callback. The token is
   * trusted only once the upstream confirms it (user API, userinfo, introspection).
   */
  identityFromAccessToken(token: { accessToken: string; tokenType: string }): Promise<ExternalIdentity>;
}

/** A provider that checks a username and password itself (LDAP). */
export interface PasswordConnector extends RefreshConnector {
  readonly kind: 'password';
  /**
   * The identity, or null for an unknown user or a wrong password (never told apart to the
   * caller). `options.onRefusal` hears why it was null, worded for the operator's log (no entry,
   * several entries, the password refused for a DN); never with the password.
   */
  authenticate(
    username: string,
    password: string,
    options?: { onRefusal?: (reason: string) => void },
  ): Promise<ExternalIdentity | null>;
}

/** Either kind of connector. */
export type Connector = RedirectConnector | PasswordConnector;
