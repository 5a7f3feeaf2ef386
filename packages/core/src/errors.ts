import type { OAuthErrorCode, ProblemCode } from '@idgate/schema';

/** What an {@link IdgateError} carries besides its code and description. */
export interface IdgateErrorOptions {
  /** HTTP status to answer with; each subclass defaults it by code. */
  status?: number;
  /** Whether the error may be sent to a validated redirect_uri (RFC 6749 §4.1.2.1). */
  redirectable?: boolean;
  /** Extra response headers, e.g. `WWW-Authenticate` or `Retry-After`. */
  headers?: Record<string, string>;
  /** The internal cause; logged, never sent. */
  cause?: unknown;
}

/** Which member of the family an {@link IdgateError} is; narrows `AnyIdgateError`. */
export type IdgateErrorKind =
  | 'oauth'
  | 'api_key'
  | 'connector'
  | 'storage_conflict'
  | 'storage_unavailable'
  | 'admin';

/**
 * The base of every error idgate means to answer: a code from the subclass's closed union, a
 * description that is safe to show a client, the HTTP status, extra headers, whether it may travel
 * to a redirect_uri, and an internal `cause` that is logged, never sent. It also says how it reads
 * on an OAuth endpoint ({@link oauthError}) and in an RFC 9457 problem ({@link problemCode}), so a
 * server writes any of them in any format without knowing the subclass. Anything thrown that is
 * not an IdgateError is a bug or an outage: a server answers it with a generic 500.
 * @example
 * if (isIdgateError(error)) reply.status(error.status).headers(error.headers).send(error.toJSON());
 */
export abstract class IdgateError<Code extends string = string> extends Error {
  abstract readonly kind: IdgateErrorKind;
  /**
   * Marks every member of the family, so `isIdgateError` recognises one thrown by another
   * copy of this package (two versions in one tree), where `instanceof` cannot.
   */
  readonly family = 'idgate' as const;
  readonly status: number;
  readonly redirectable: boolean;
  readonly headers: Readonly<Record<string, string>>;

  protected constructor(
    readonly code: Code,
    readonly description: string,
    defaultStatus: number,
    options: IdgateErrorOptions = {},
  ) {
    super(description, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status ?? defaultStatus;
    this.redirectable = options.redirectable ?? false;
    this.headers = options.headers ?? {};
  }

  /** The RFC 6749 error code this error answers with on an OAuth endpoint. */
  abstract get oauthError(): OAuthErrorCode;

  /** The RFC 9457 problem code this error answers with everywhere else. */
  abstract get problemCode(): ProblemCode;

  /**
   * Members an RFC 9457 problem of this error carries beside its own (RFC 9457 §3.2), e.g. the
   * `scope` an API key lacks; none by default.
   */
  get problemMembers(): Readonly<Record<string, string>> | undefined {
    return undefined;
  }

  /** The RFC 6749 §5.2 wire form. */
  toJSON(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.oauthError, error_description: this.description };
  }
}

const OAUTH_STATUS: Partial<Record<OAuthErrorCode, number>> = {
  invalid_client: 401,
  invalid_token: 401,
  insufficient_scope: 403,
  access_denied: 403,
  server_error: 500,
  temporarily_unavailable: 503,
  slow_down: 429,
};

/**
 * An OAuth 2.0 / OpenID Connect protocol error (RFC 6749 §4.1.2.1, §5.2; RFC 6750 §3.1; OIDC Core
 * §3.1.2.6): the error of the token, authorization, userinfo, revocation and introspection
 * endpoints. The status defaults by code (400, or 401 for `invalid_client`, 403 for
 * `access_denied`, …).
 * @example
 * throw new OAuthProtocolError('invalid_grant', 'the refresh token has expired');
 */
export class OAuthProtocolError extends IdgateError<OAuthErrorCode> {
  override readonly name: string = 'OAuthProtocolError';
  readonly kind = 'oauth' as const;

  constructor(code: OAuthErrorCode, description: string, options: IdgateErrorOptions = {}) {
    super(code, description, OAUTH_STATUS[code] ?? 400, options);
  }

  get oauthError(): OAuthErrorCode {
    return this.code;
  }

  // No problem route throws a protocol error today; should one, the problem still tells the
  // client's fault from the server's, and the description says the rest.
  get problemCode(): ProblemCode {
    if (this.status < 500) return 'invalid_request';
    return this.status === 503 ? 'service_unavailable' : 'internal_error';
  }
}
