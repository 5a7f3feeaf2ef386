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
}

/** Why a connector could not produce an identity. Each maps to a clear error for the user. */
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

/**
 * A connector's refusal. `message` is safe to show a user; `cause` (logged, never shown) holds
 * the details.
 */
export class ConnectorError extends Error {
  override readonly name = 'ConnectorError';
  constructor(
    readonly failure: ConnectorFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A provider the browser is redirected to (OIDC, GitHub, GitLab). */
export interface RedirectConnector {
  readonly kind: 'redirect';
  /** The upstream authorization URL for one sign-in. */
  authorizationUrl(request: {
    redirectUri: string;
    state: string;
    nonce: string;
    codeChallenge: string;
  }): Promise<URL>;
  /** Exchanges the upstream's code (PKCE verifier and nonce of the same sign-in) for the identity. */
  exchangeCode(request: {
    code: string;
    redirectUri: string;
    codeVerifier: string;
    nonce: string;
  }): Promise<ExternalIdentity>;
  /**
   * The identity behind an upstream access token sent straight to the callback. The token is
   * trusted only once the upstream confirms it (user API, userinfo, introspection).
   */
  identityFromAccessToken(token: { accessToken: string; tokenType: string }): Promise<ExternalIdentity>;
}

/** A provider that checks a username and password itself (LDAP). */
export interface PasswordConnector {
  readonly kind: 'password';
  /** The identity, or null for an unknown user or a wrong password (never told apart). */
  authenticate(username: string, password: string): Promise<ExternalIdentity | null>;
}

/** Either kind of connector. */
export type Connector = RedirectConnector | PasswordConnector;
