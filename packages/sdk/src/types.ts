import type {
  Jwks,
  ProviderMetadata,
  TokenRequest,
  TokenResponse,
  TokenReviewApiVersion,
  TokenReviewResponse,
} from '@idgate/schema';

/**
 * Options of {@link createIdgateClient}.
 * @example
 * const options: IdgateClientOptions = { baseUrl: 'http://localhost:8080', apiKey: 'idg_…', timeoutMs: 5_000, retry: 2 };
 */
export interface IdgateClientOptions {
  /** The server root, e.g. `http://localhost:8080`; OAuth endpoints live under `/oauth/`. A trailing slash does not matter. */
  baseUrl: string | URL;
  /** An idgate API key (scope `tokenreview`), sent as a Bearer token by {@link IdgateClient.reviewToken}. */
  apiKey?: string | undefined;
  /** The `fetch` to use (a test double, a proxy-aware fetch...). Defaults to the global `fetch`. */
  fetch?: typeof fetch | undefined;
  /** Per-request timeout in milliseconds. Default `10_000`. */
  timeoutMs?: number | undefined;
  /**
   * How many times to retry a GET (discovery, JWKS) after a network error or a 408, 413, 429, 500,
   * 502, 503 or 504 answer, with exponential backoff and honouring `Retry-After`. POSTs (token,
   * TokenReview) are never retried. Default `0`.
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
 * const options: PasswordGrantOptions = { clientId: 'kubectl', username: 'alice', password: 'pw', scope: 'openid groups' };
 */
export interface PasswordGrantOptions {
  clientId: string;
  /** Required unless `authMethod` is `none`. */
  clientSecret?: string | undefined;
  username: string;
  password: string;
  scope?: string | undefined;
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
 * A typed client of one idgate server. Every response is validated with `@idgate/schema`.
 * Failures reject with an {@link IdgateError}: {@link IdgateHttpError} for a non-2xx status,
 * {@link IdgateSchemaError} for a 2xx body that does not match, a plain `IdgateError` (with
 * `cause`) for network errors, timeouts and invalid arguments.
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
}
