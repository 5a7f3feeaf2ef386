import type { OAuthError, Problem, TokenResponse } from '@idgate/schema';

/**
 * One zod issue, as {@link IdgateSchemaError.issues} lists them.
 * @example
 * const issue: SchemaIssue = { code: 'custom', path: ['keys', 0], message: 'a published JWK must not contain private key material', input: {} };
 */
export type SchemaIssue = NonNullable<ReturnType<typeof TokenResponse.safeParse>['error']>['issues'][number];

/**
 * Base class of every error the SDK throws; named apart from `@idgate/core`'s `IdgateError`
 * (the server's error model), so that code using both never confuses the two. Network failures
 * and timeouts are thrown as a plain `IdgateSdkError` whose `cause` is the original error (ky's
 * `TimeoutError`, or the `TypeError` of `fetch`); HTTP errors are {@link IdgateHttpError},
 * malformed responses {@link IdgateSchemaError}, a redirect that must not be followed
 * {@link IdgateRedirectError}, an error redirect of the authorization server
 * {@link IdgateAuthorizationError}.
 * Messages never contain the API key, a client secret, a bind password or a password.
 * @example
 * try {
 *   await client.getJwks();
 * } catch (error) {
 *   if (error instanceof IdgateSdkError) console.error(error.endpoint, error.message, error.cause);
 * }
 */
export class IdgateSdkError extends Error {
  /** The request that failed, as `METHOD /path` (e.g. `POST /oauth/token`), when there was one. */
  readonly endpoint: string | undefined;

  constructor(message: string, options: { endpoint?: string; cause?: unknown } = {}) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.name = 'IdgateSdkError';
    this.endpoint = options.endpoint;
  }
}

/**
 * The server answered with a non-2xx status.
 * @example
 * try {
 *   await client.passwordGrant({ clientId: 'cli', username: 'alice', password: 'wrong', authMethod: 'none' });
 * } catch (error) {
 *   if (error instanceof IdgateHttpError && error.oauthError?.error === 'invalid_grant') {
 *     console.error('bad credentials');
 *   }
 * }
 * try {
 *   await admin.listIdentityProviders();
 * } catch (error) {
 *   if (error instanceof IdgateHttpError && error.problem?.code === 'storage_unavailable') {
 *     console.error(`try again in ${error.headers.get('Retry-After')} s`);
 *   }
 * }
 */
export class IdgateHttpError extends IdgateSdkError {
  /** HTTP status code. */
  readonly status: number;
  /** The response body: parsed JSON when the response is JSON, else its text. */
  readonly body: unknown;
  /**
   * The body as an RFC 6749 §5.2 error, when it parses as one. For `userinfo`, when the body has
   * none, the `error`, `error_description` and `error_uri` of the `WWW-Authenticate: Bearer`
   * challenge (RFC 6750 §3), e.g. `invalid_token`.
   */
  readonly oauthError: OAuthError | undefined;
  /**
   * The body as one of idgate's RFC 9457 problems: its `code` is a `ProblemCode`, a closed list to
   * `switch` on. Undefined for any other body (an OAuth error, a proxy's page, a problem
   * with a code idgate does not send), which is still in {@link body}.
   */
  readonly problem: Problem | undefined;
  /** The response headers (e.g. `WWW-Authenticate`, `Retry-After`). */
  readonly headers: Headers;

  constructor(
    message: string,
    details: {
      endpoint: string;
      status: number;
      body: unknown;
      headers: Headers;
      oauthError?: OAuthError | undefined;
      problem?: Problem | undefined;
    },
  ) {
    super(message, { endpoint: details.endpoint });
    this.name = 'IdgateHttpError';
    this.status = details.status;
    this.body = details.body;
    this.headers = details.headers;
    this.oauthError = details.oauthError;
    this.problem = details.problem;
  }
}

/**
 * The server answered 2xx with a body that does not match the schema of that endpoint
 * (or is not JSON at all).
 * @example
 * try {
 *   await client.getProviderMetadata();
 * } catch (error) {
 *   if (error instanceof IdgateSchemaError) console.error(error.endpoint, error.issues);
 * }
 */
export class IdgateSchemaError extends IdgateSdkError {
  /** The zod issues found in the response body. */
  readonly issues: SchemaIssue[];
  /** HTTP status of the response. */
  readonly status: number;
  declare readonly endpoint: string;

  constructor(message: string, details: { endpoint: string; status: number; issues: SchemaIssue[] }) {
    super(message, { endpoint: details.endpoint });
    this.name = 'IdgateSchemaError';
    this.issues = details.issues;
    this.status = details.status;
  }
}

/**
 * The server answered a redirect to a request that must not follow one: `client.callback`, when
 * the external sign-in continues an authorization request (idgate then sends the browser on, to
 * consent or back to the application). Nothing was followed; `location` says where the browser
 * would go (it may carry an authorization code: treat it as a secret). Never in the message.
 * @example
 * try {
 *   await client.callback('github', { code, state });
 * } catch (error) {
 *   if (error instanceof IdgateRedirectError) response.redirect(error.location ?? '/');
 * }
 */
export class IdgateRedirectError extends IdgateSdkError {
  /** HTTP status of the redirect (`0` when the runtime hides it, as browsers do). */
  readonly status: number;
  /** The `Location` header, resolved against the request URL, when the runtime shows it. */
  readonly location: string | undefined;
  declare readonly endpoint: string;

  constructor(message: string, details: { endpoint: string; status: number; location: string | undefined }) {
    super(message, { endpoint: details.endpoint });
    this.name = 'IdgateRedirectError';
    this.status = details.status;
    this.location = details.location;
  }
}

/**
 * The authorization server redirected back with an error (RFC 6749 §4.1.2.1, OIDC Core §3.1.2.6),
 * e.g. `access_denied` when the user declined, or `login_required` after `prompt=none`. Thrown by
 * {@link parseAuthorizationResponse} only once the response's `state` (and `iss`, when checked)
 * matched, so the error really answers your request.
 * @example
 * try {
 *   const { code } = parseAuthorizationResponse(callbackUrl, { state: saved.state, issuer });
 * } catch (error) {
 *   if (error instanceof IdgateAuthorizationError && error.error === 'access_denied') {
 *     console.log('the user declined:', error.errorDescription);
 *   }
 * }
 */
export class IdgateAuthorizationError extends IdgateSdkError {
  /** The `error` code of the response (e.g. `access_denied`, `login_required`, `invalid_scope`). */
  readonly error: string;
  /** The `error_description` of the response, when there is one. */
  readonly errorDescription: string | undefined;
  /** The `error_uri` of the response, when there is one. */
  readonly errorUri: string | undefined;
  /** The `state` of the response (equal to the state of the request). */
  readonly state: string | undefined;

  constructor(
    message: string,
    details: {
      error: string;
      errorDescription?: string | undefined;
      errorUri?: string | undefined;
      state?: string | undefined;
    },
  ) {
    super(message);
    this.name = 'IdgateAuthorizationError';
    this.error = details.error;
    this.errorDescription = details.errorDescription;
    this.errorUri = details.errorUri;
    this.state = details.state;
  }
}

/**
 * Replaces every occurrence of each secret in `text` with `[redacted]`, in one pass (longest
 * secret first), so that a server or proxy echoing a credential cannot leak it into a message.
 */
export function redact(text: string, secrets: ReadonlyArray<string | undefined>): string {
  const patterns = secrets
    .filter((secret): secret is string => typeof secret === 'string' && secret.length > 0)
    .sort((a, b) => b.length - a.length)
    .map((secret) => secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return patterns.length === 0 ? text : text.replace(new RegExp(patterns.join('|'), 'g'), '[redacted]');
}
