import type { OAuthErrorCode } from '@idgate/schema';

/** What an {@link IdgateError} carries besides its code. */
export interface IdgateErrorOptions {
  /** HTTP status to answer with; defaults by code (RFC 6749 §5.2, RFC 6750 §3.1). */
  status?: number;
  /** Whether the error may be sent to a validated redirect_uri (RFC 6749 §4.1.2.1). */
  redirectable?: boolean;
  /** Extra response headers, e.g. `WWW-Authenticate`. */
  headers?: Record<string, string>;
  /** The internal cause; logged, never sent. */
  cause?: unknown;
}

const DEFAULT_STATUS: Partial<Record<OAuthErrorCode, number>> = {
  invalid_client: 401,
  invalid_token: 401,
  insufficient_scope: 403,
  access_denied: 403,
  server_error: 500,
  temporarily_unavailable: 503,
  slow_down: 429,
};

/**
 * The one error model of idgate: a protocol error code, a description that is safe to show a
 * client, the HTTP status, and whether it may travel to a redirect_uri. The server's error
 * handler turns it into `{ error, error_description }`; anything that is not an IdgateError
 * becomes a generic `server_error`.
 * @example
 * throw new IdgateError('invalid_grant', 'the refresh token has expired');
 */
export class IdgateError extends Error {
  override readonly name = 'IdgateError';
  readonly status: number;
  readonly redirectable: boolean;
  readonly headers: Record<string, string>;

  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    options: IdgateErrorOptions = {},
  ) {
    super(`${error}: ${description}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status ?? DEFAULT_STATUS[error] ?? 400;
    this.redirectable = options.redirectable ?? false;
    this.headers = options.headers ?? {};
  }

  /** The RFC 6749 §5.2 wire form. */
  toJSON(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

/**
 * True for an {@link IdgateError}, also one thrown by another copy of this package.
 * @example if (isIdgateError(err)) reply.status(err.status).send(err.toJSON());
 */
export function isIdgateError(value: unknown): value is IdgateError {
  return (
    value instanceof IdgateError ||
    (value instanceof Error && value.name === 'IdgateError' && 'error' in value)
  );
}
