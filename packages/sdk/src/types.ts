import type {
  IntrospectionResponse,
  Jwks,
  ProviderMetadata,
  TokenRequest,
  TokenResponse,
  TokenReviewApiVersion,
  TokenReviewResponse,
  UserInfo,
} from '@idgate/schema';

/**
 * Parameters of an RP-Initiated Logout request (OIDC RP-Initiated Logout 1.0 §2), as
 * `logoutUrl` takes them. With a valid `idTokenHint` idgate signs the user out at once;
 * without one it asks the user first.
 * @example
 * const parameters: LogoutParameters = {
 *   idTokenHint: tokens.id_token,
 *   postLogoutRedirectUri: 'https://app.example.com/signed-out',
 *   state: 'af0ifjsldkj',
 * };
 */
export interface LogoutParameters {
  /** An ID token idgate issued to the client (its expiry does not matter). */
  idTokenHint?: string | undefined;
  /** Where to send the browser afterwards: one of the client's registered post-logout redirect URIs, exactly. */
  postLogoutRedirectUri?: string | undefined;
  /** Carried back to `postLogoutRedirectUri` as is. */
  state?: string | undefined;
  /** The client asking; must match the ID token's when both are given. */
  clientId?: string | undefined;
}

/**
 * Options of `externalLoginUrl`.
 * @example const options: ExternalLoginOptions = { interaction: 'b2f1…' };
 */
export interface ExternalLoginOptions {
  /**
   * The sign-in of an authorization request to continue (the login page's `interaction`); without
   * one, the sign-in stands alone and idgate answers the provider's callback with tokens of its
   * token client.
   */
  interaction?: string | undefined;
}

/** `GET /healthz`: the process answers. */
export interface HealthStatus {
  status: 'ok';
}

/** `GET /readyz`: whether the server can serve, and how each of its checks went. */
export interface ReadinessStatus {
  /** True when every check is `ok` (the server answered 200; 503 otherwise). */
  ready: boolean;
  status: 'ok' | 'unavailable';
  /** Each check by name (`database`, `migrations`, `keys`): `ok` or `failing`. */
  checks: Record<string, 'ok' | 'failing'>;
}

/**
 * Options of {@link createIdgateClient}.
 * @example
 * const options: IdgateClientOptions = { baseUrl: 'http://localhost:8080', apiKey: 'idg_…', timeoutMs: 5_000, retry: 2 };
 */
export interface IdgateClientOptions {
  /** The server root, e.g. `http://localhost:8080`; OAuth endpoints live under `/oauth/`. A trailing slash does not matter. */
  baseUrl: string | URL;
  /**
   * An idgate API key of the `tokenreview` scope, sent as a Bearer token by
   * {@link IdgateClient.reviewToken}; no other method needs one. (The admin API's key, holding the
   * scopes of the operations it calls, goes to {@link createIdgateAdminClient}.)
   */
  apiKey?: string | undefined;
  /** The `fetch` to use (a test double, a proxy-aware fetch...). Defaults to the global `fetch`. */
  fetch?: typeof fetch | undefined;
  /** Per-request timeout in milliseconds. Default `10_000`. */
  timeoutMs?: number | undefined;
  /**
   * How many times to retry a GET (discovery, JWKS, an admin listing) after a network error or a
   * 408, 413, 429, 500, 502, 503 or 504 answer, with exponential backoff and honouring
   * `Retry-After`. POSTs (token, TokenReview, admin changes), DELETEs and `callback` are never
   * retried. Default `0`.
   */
  retry?: number | undefined;
  /** Extra headers sent with every request (e.g. a tracing header). */
  headers?: Record<string, string> | undefined;
}

/**
 * How the client authenticates at the token endpoint (RFC 6749 §2.3.1, OIDC Core §9):
 * `client_secret_basic` (HTTP Basic), `client_secret_post` (credentials in the form body), or
 * `none` (a public client: only `client_id` in the body).
 * @example const method: ClientAuthMethod = 'client_secret_post';
 */
export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

/**
 * Client authentication for {@link IdgateClient.requestToken}.
 * @example
 * const auth: ClientAuthentication = { method: 'client_secret_basic', clientId: 'ci', clientSecret: 's3cret' };
 * const publicClient: ClientAuthentication = { method: 'none', clientId: 'kubectl' };
 */
export type ClientAuthentication =
  | { method: 'client_secret_basic' | 'client_secret_post'; clientId: string; clientSecret: string }
  | { method: 'none'; clientId: string };

/**
 * Options of {@link IdgateClient.reviewToken}.
 * @example
 * const options: ReviewTokenOptions = { audiences: ['https://kubernetes.default.svc'], apiVersion: 'authentication.k8s.io/v1beta1' };
 */
export interface ReviewTokenOptions {
  /** `spec.audiences`: the audiences the caller accepts. Omitted from the request when not given. */
  audiences?: string[] | undefined;
  /** The TokenReview API version to send. Default `authentication.k8s.io/v1`. */
  apiVersion?: TokenReviewApiVersion | undefined;
}

/**
 * Options of {@link IdgateClient.passwordGrant} (RFC 6749 §4.3).
 * @example
 * const options: PasswordGrantOptions = { clientId: 'kubectl', username: 'alice', password: 'pw', scope: 'openid groups', provider: 'corp-ldap', resource: 'kubernetes:prod' };
 */
export interface PasswordGrantOptions {
  clientId: string;
  /** Required unless `authMethod` is `none`. */
  clientSecret?: string | undefined;
  username: string;
  password: string;
  scope?: string | undefined;
  /**
   * A password identity provider (an LDAP directory's name) to check the credentials with,
   * instead of idgate's local accounts.
   */
  provider?: string | undefined;
  /**
   * RFC 8707 resource indicator(s): the audiences the access token is for (e.g. a cluster's
   * `kubernetes:prod`), each one the client is allowed; a list is sent as repeated `resource`
   * parameters.
   */
  resource?: string | string[] | undefined;
  /** Default `client_secret_basic`, or `none` when no `clientSecret` is given. */
  authMethod?: ClientAuthMethod | undefined;
}

/**
 * Options of {@link IdgateClient.clientCredentialsGrant} (RFC 6749 §4.4).
 * @example
 * const options: ClientCredentialsGrantOptions = { clientId: 'ci', clientSecret: 's3cret', scope: 'tokenreview', resource: 'https://api.example.com' };
 */
export interface ClientCredentialsGrantOptions {
  clientId: string;
  clientSecret: string;
  scope?: string | undefined;
  /** RFC 8707 resource indicator(s); a list is sent as repeated `resource` parameters. */
  resource?: string | string[] | undefined;
  /** Default `client_secret_basic`. */
  authMethod?: 'client_secret_basic' | 'client_secret_post' | undefined;
}

/**
 * Options of {@link IdgateClient.tokenExchange} (RFC 8693): a CI job's or a pod's token for a
 * token to one cluster, under a trust idgate holds. No client is needed; one given authenticates.
 * @example
 * const options: TokenExchangeOptions = { subjectToken: jobToken, audience: 'prod' };
 */
export interface TokenExchangeOptions {
  /** The JWT to exchange (GitHub's or GitLab's job token, a projected service-account token). */
  subjectToken: string;
  /** Default `urn:ietf:params:oauth:token-type:jwt`. */
  subjectTokenType?: string | undefined;
  /** The cluster: its name or its audience. */
  audience: string;
  /** A shorter lifetime than the trust allows, seconds. */
  expiresIn?: number | undefined;
  /** Delegation: a JWT some trust accepts; the token then carries `act`. */
  actorToken?: string | undefined;
  /** Default `urn:ietf:params:oauth:token-type:jwt`. */
  actorTokenType?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  authMethod?: 'client_secret_basic' | 'client_secret_post' | undefined;
}

/**
 * Options of {@link IdgateClient.exchangeCode}: the authorization code grant (RFC 6749 §4.1.3)
 * with PKCE (RFC 7636 §4.5).
 * @example
 * const options: AuthorizationCodeGrantOptions = {
 *   code,
 *   redirectUri: 'https://app.example.com/callback',
 *   codeVerifier: request.codeVerifier,
 *   clientId: 'app',
 * };
 */
export interface AuthorizationCodeGrantOptions {
  /** The `code` of the authorization response (see {@link parseAuthorizationResponse}). */
  code: string;
  /** The `redirect_uri` of the authorization request, exactly as it was sent. */
  redirectUri: string;
  /** The PKCE `code_verifier` of the authorization request (see {@link createAuthorizationRequest}). */
  codeVerifier?: string | undefined;
  clientId: string;
  /** Required unless `authMethod` is `none`. */
  clientSecret?: string | undefined;
  /** Default `client_secret_basic`, or `none` when no `clientSecret` is given. */
  authMethod?: ClientAuthMethod | undefined;
}

/**
 * Options of {@link IdgateClient.refreshToken} (RFC 6749 §6).
 * @example
 * const options: RefreshTokenGrantOptions = { refreshToken: tokens.refresh_token, clientId: 'kubectl' };
 */
export interface RefreshTokenGrantOptions {
  refreshToken: string;
  /** A scope no wider than the one originally granted; the original scope when omitted. */
  scope?: string | undefined;
  clientId: string;
  /** Required unless `authMethod` is `none`. */
  clientSecret?: string | undefined;
  /** Default `client_secret_basic`, or `none` when no `clientSecret` is given. */
  authMethod?: ClientAuthMethod | undefined;
}

/**
 * The `token_type_hint` of revocation (RFC 7009 §2.1) and introspection (RFC 7662 §2.1): which
 * kind of token the caller believes it is sending. Only a hint: the server looks further when wrong.
 * @example const hint: TokenTypeHint = 'refresh_token';
 */
export type TokenTypeHint = 'access_token' | 'refresh_token';

/**
 * Options of {@link IdgateClient.revokeToken} (RFC 7009 §2.1).
 * @example
 * const options: RevokeTokenOptions = { token: tokens.refresh_token, tokenTypeHint: 'refresh_token', clientId: 'kubectl' };
 */
export interface RevokeTokenOptions {
  /** The access or refresh token to revoke. */
  token: string;
  tokenTypeHint?: TokenTypeHint | undefined;
  /** The client the token was issued to. */
  clientId: string;
  /** Required unless `authMethod` is `none` (a public client). */
  clientSecret?: string | undefined;
  /** Default `client_secret_basic`, or `none` when no `clientSecret` is given. */
  authMethod?: ClientAuthMethod | undefined;
}

/**
 * Options of {@link IdgateClient.introspectToken} (RFC 7662 §2.1). Introspection needs an
 * authenticated (confidential) client.
 * @example
 * const options: IntrospectTokenOptions = { token: accessToken, clientId: 'api', clientSecret: 's3cret' };
 */
export interface IntrospectTokenOptions {
  /** The access or refresh token to introspect. */
  token: string;
  tokenTypeHint?: TokenTypeHint | undefined;
  clientId: string;
  clientSecret: string;
  /** Default `client_secret_basic`. */
  authMethod?: 'client_secret_basic' | 'client_secret_post' | undefined;
}

/**
 * A `prompt` value of OIDC Core §3.1.2.1: `none` (no UI at all: fail with `login_required` or
 * `consent_required` instead), `login` (re-authenticate), `consent`, `select_account`.
 * @example const prompt: AuthorizationPrompt = 'login';
 */
export type AuthorizationPrompt = 'none' | 'login' | 'consent' | 'select_account';

/**
 * The parameters of an authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2.1), as
 * {@link IdgateClient.createAuthorizationRequest} takes them. PKCE is always S256 (RFC 7636).
 * @example
 * const parameters: AuthorizationRequestParameters = {
 *   clientId: 'app',
 *   redirectUri: 'https://app.example.com/callback',
 *   scope: 'openid profile groups',
 *   prompt: 'login',
 * };
 */
export interface AuthorizationRequestParameters {
  clientId: string;
  /** An absolute URI registered for the client, without a fragment. */
  redirectUri: string;
  /** Space-separated scopes. Default `openid`. */
  scope?: string | undefined;
  /** The `state` to send. Default: 32 random bytes, base64url (43 characters). */
  state?: string | undefined;
  /**
   * The OIDC `nonce` to send. Default: 32 random bytes, base64url, when `scope` includes `openid`;
   * none otherwise.
   */
  nonce?: string | undefined;
  /** One `prompt` value, or several (`none` only alone). */
  prompt?: AuthorizationPrompt | readonly AuthorizationPrompt[] | undefined;
  /** `max_age`: the longest time in seconds since the user's last authentication that is acceptable. */
  maxAge?: number | undefined;
  /** `login_hint`: the username to pre-fill on the login page. */
  loginHint?: string | undefined;
  /**
   * OIDC Core §3.1.2.1 `acr_values`, in order of preference (sent space-separated): e.g.
   * `urn:idgate:acr:mfa` to have the person sign in with a second factor.
   */
  acrValues?: string | readonly string[] | undefined;
}

/**
 * Options of the standalone {@link createAuthorizationRequest}: the parameters, and where the
 * server is: either its `baseUrl`, the server root (e.g. `https://id.example.com`; the issuer is
 * then `{baseUrl}/oauth`), or its `issuer` identifier (e.g. `https://id.example.com/oauth`, as
 * discovery publishes it).
 * @example
 * const options: AuthorizationRequestOptions = {
 *   issuer: 'https://id.example.com/oauth',
 *   clientId: 'app',
 *   redirectUri: 'https://app.example.com/callback',
 * };
 */
export type AuthorizationRequestOptions = AuthorizationRequestParameters &
  ({ baseUrl: string | URL; issuer?: undefined } | { issuer: string | URL; baseUrl?: undefined });

/**
 * A prepared authorization request. Send the user agent to `url`; keep `codeVerifier`, `state` and
 * `nonce` (e.g. in the server-side session or an encrypted, HttpOnly cookie) until the callback.
 * @example
 * const { url, codeVerifier, state, nonce } = await createAuthorizationRequest(options);
 * session.set({ codeVerifier, state, nonce });
 * response.redirect(url.href);
 */
export interface AuthorizationRequest {
  /** `{issuer}/authorize?response_type=code&client_id=…&code_challenge=…&code_challenge_method=S256…` */
  url: URL;
  /** The PKCE `code_verifier` (RFC 7636 §4.1): pass it to {@link IdgateClient.exchangeCode}. */
  codeVerifier: string;
  /** The `state` sent: pass it to {@link parseAuthorizationResponse}. */
  state: string;
  /** The `nonce` sent, if any: the ID token's `nonce` claim must equal it (OIDC Core §3.1.3.7). */
  nonce?: string;
}

/**
 * What {@link parseAuthorizationResponse} checks the response against.
 * @example
 * const expected: ExpectedAuthorizationResponse = { state: saved.state, issuer: 'https://id.example.com/oauth' };
 */
export interface ExpectedAuthorizationResponse {
  /** The `state` of the request. */
  state: string;
  /**
   * The issuer identifier of the server the request went to (as discovery publishes it). When
   * given, the response must carry an `iss` parameter (RFC 9207) equal to it, compared as a
   * string; idgate sends `iss` with every authorization response and advertises it in discovery
   * (`authorization_response_iss_parameter_supported`). Recommended.
   */
  issuer?: string | undefined;
}

/**
 * A successful authorization response (RFC 6749 §4.1.2), checked.
 * @example const { code }: AuthorizationResponse = parseAuthorizationResponse(callbackUrl, { state });
 */
export interface AuthorizationResponse {
  /** The authorization code: pass it to {@link IdgateClient.exchangeCode}. */
  code: string;
}

/**
 * A typed client of one idgate server for relying parties, resource servers and token reviewers:
 * the OAuth and OpenID Connect endpoints, TokenReview, sign-in URLs and probes. The admin API is
 * {@link IdgateAdminClient}'s. Every response is validated with `@idgate/schema`.
 * Failures reject with an {@link IdgateSdkError}: {@link IdgateHttpError} for a non-2xx status,
 * {@link IdgateSchemaError} for a 2xx body that does not match, a plain `IdgateSdkError` (with
 * `cause`) for network errors, timeouts and invalid arguments, {@link IdgateRedirectError} for a
 * redirect `callback` does not follow.
 * @example
 * const client = createIdgateClient({ baseUrl: 'http://localhost:8080', apiKey });
 * const review = await client.reviewToken(token);
 * if (review.status.authenticated) console.log(review.status.user?.username);
 */
export interface IdgateClient {
  /**
   * `GET /oauth/.well-known/openid-configuration` (OIDC Discovery 1.0 §4).
   * @example const { issuer, token_endpoint } = await client.getProviderMetadata();
   */
  getProviderMetadata(): Promise<ProviderMetadata>;

  /**
   * `GET /oauth/keys`: the public signing keys (RFC 7517 §5).
   * @example const { keys } = await client.getJwks();
   */
  getJwks(): Promise<Jwks>;

  /**
   * `POST /oauth/authenticate`: asks idgate to review a bearer token exactly as a kube-apiserver
   * webhook token authenticator would. Needs the client's `apiKey`; rejects before sending
   * anything when there is none.
   * @example
   * const { status } = await client.reviewToken(accessToken, { audiences: ['kubernetes'] });
   */
  reviewToken(token: string, options?: ReviewTokenOptions): Promise<TokenReviewResponse>;

  /**
   * `POST /oauth/token` with any grant (RFC 6749 §3.2). With `clientAuth`, the request must not
   * carry `client_id` or `client_secret` itself.
   * @example
   * const tokens = await client.requestToken(
   *   { grant_type: 'refresh_token', refresh_token: refreshToken },
   *   { method: 'client_secret_basic', clientId: 'ci', clientSecret: 's3cret' },
   * );
   */
  requestToken(request: TokenRequest, clientAuth?: ClientAuthentication): Promise<TokenResponse>;

  /**
   * Resource owner password credentials grant (RFC 6749 §4.3).
   * @example
   * const { access_token } = await client.passwordGrant({ clientId: 'kubectl', username: 'alice', password: 'pw' });
   */
  passwordGrant(options: PasswordGrantOptions): Promise<TokenResponse>;

  /**
   * Client credentials grant (RFC 6749 §4.4).
   * @example
   * const { access_token } = await client.clientCredentialsGrant({ clientId: 'ci', clientSecret: 's3cret', scope: 'tokenreview' });
   */
  clientCredentialsGrant(options: ClientCredentialsGrantOptions): Promise<TokenResponse>;

  /**
   * Token exchange (RFC 8693): a CI job's or a pod's JWT for an access token to one cluster, under
   * a trust; no client needed, no refresh token. Refusals name the rule that failed
   * (`invalid_grant`, `invalid_target`, `invalid_request`).
   * @example
   * const { access_token } = await client.tokenExchange({ subjectToken: jobToken, audience: 'prod' });
   */
  tokenExchange(options: TokenExchangeOptions): Promise<TokenResponse>;

  /**
   * Authorization code grant (RFC 6749 §4.1.3) with the PKCE `code_verifier` (RFC 7636 §4.5):
   * redeems the `code` of an authorization response. Send the same `redirectUri` as in the
   * authorization request.
   * @example
   * const { code } = parseAuthorizationResponse(callbackUrl, { state: saved.state });
   * const tokens = await client.exchangeCode({
   *   code,
   *   redirectUri: 'https://app.example.com/callback',
   *   codeVerifier: saved.codeVerifier,
   *   clientId: 'app',
   * });
   */
  exchangeCode(options: AuthorizationCodeGrantOptions): Promise<TokenResponse>;

  /**
   * Refresh token grant (RFC 6749 §6). When the response carries a new refresh token, keep it
   * and use it from then on: a rotated refresh token stops working.
   * @example
   * const tokens = await client.refreshToken({ refreshToken: saved.refreshToken, clientId: 'kubectl' });
   */
  refreshToken(options: RefreshTokenGrantOptions): Promise<TokenResponse>;

  /**
   * `GET /oauth/userinfo` with the access token as Bearer credential (OIDC Core §5.3). A rejected
   * token gives an {@link IdgateHttpError} whose `oauthError` comes from the RFC 6750
   * `WWW-Authenticate` challenge when the body has none. Compare `sub` with the ID token's `sub`
   * (OIDC Core §5.3.4) before trusting the claims.
   * @example
   * const { sub, preferred_username, groups } = await client.userinfo(tokens.access_token);
   */
  userinfo(accessToken: string): Promise<UserInfo>;

  /**
   * `POST /oauth/revoke` (RFC 7009): revokes an access or refresh token. Resolves once the server
   * answers 200, which it also does for a token that is unknown or already invalid (RFC 7009 §2.2).
   * @example
   * await client.revokeToken({ token: tokens.refresh_token, tokenTypeHint: 'refresh_token', clientId: 'kubectl' });
   */
  revokeToken(options: RevokeTokenOptions): Promise<void>;

  /**
   * `POST /oauth/introspect` (RFC 7662): asks whether a token is active, and what it carries.
   * An inactive, expired, revoked or unknown token gives `{ active: false }`, not an error.
   * @example
   * const info = await client.introspectToken({ token, clientId: 'api', clientSecret: 's3cret' });
   * if (info.active) console.log(info.sub, info.scope);
   */
  introspectToken(options: IntrospectTokenOptions): Promise<IntrospectionResponse>;

  /**
   * {@link createAuthorizationRequest} for this server: the issuer is `{baseUrl}/oauth`, with the
   * client's `baseUrl`. When the browser reaches idgate at another address than this client
   * does, use the standalone function with the public `issuer` instead.
   * @example
   * const { url, codeVerifier, state, nonce } = await client.createAuthorizationRequest({
   *   clientId: 'app',
   *   redirectUri: 'https://app.example.com/callback',
   * });
   */
  createAuthorizationRequest(parameters: AuthorizationRequestParameters): Promise<AuthorizationRequest>;

  /**
   * {@link logoutUrl} for this server: `{baseUrl}/oauth/logout` (discovery's
   * `end_session_endpoint`) with the RP-Initiated Logout parameters. Send the browser there.
   * @example
   * const url = client.logoutUrl({ idTokenHint: tokens.id_token, postLogoutRedirectUri: 'https://app.example.com/bye', state });
   */
  logoutUrl(parameters?: LogoutParameters): URL;

  /**
   * {@link externalLoginUrl} for this server: `{baseUrl}/oauth/login/{provider}`, which sends the
   * browser to an external identity provider to sign in.
   * @example const url = client.externalLoginUrl('github');
   */
  externalLoginUrl(provider: string, options?: ExternalLoginOptions): URL;

  /**
   * `GET /healthz`: resolves when the process answers (a liveness probe).
   * @example await client.health(); // { status: 'ok' }
   */
  health(): Promise<HealthStatus>;

  /**
   * `GET /readyz`: whether the server can serve (database reachable, migrations applied, signing
   * keys loaded). A 503 resolves too, with `ready: false` and the failing checks; only a failure
   * to get an answer rejects.
   * @example
   * const { ready, checks } = await client.readiness();
   * if (!ready) console.error('idgate is not ready:', checks);
   */
  readiness(): Promise<ReadinessStatus>;

  /**
   * `GET /oauth/callback/{provider}?…`: finishes a sign-in at an external identity provider with
   * the query the provider redirected back with (the code form, the token form or the error
   * form), forwarded as is, and answers the tokens idgate issues for the signed-in user
   * (the provider's `tokenClientId`). `provider` must be an identity provider name
   * (lower-case letters, digits and `-`, starting with a letter); anything else rejects before
   * sending. The request is never retried (a `state` is good once).
   *
   * When the sign-in continues an authorization request (it began at idgate's login page for an
   * application), idgate answers a redirect instead of tokens: the SDK does not follow it
   * (`redirect: 'manual'`) and rejects with an {@link IdgateRedirectError} whose `location` is
   * where a browser would go. A refused callback (unknown provider, bad `state`, upstream error)
   * rejects with an {@link IdgateHttpError} whose `oauthError` says why.
   * @example
   * const tokens = await client.callback('github', new URL(request.url).searchParams);
   */
  callback(provider: string, query: Record<string, string> | URLSearchParams): Promise<TokenResponse>;
}
